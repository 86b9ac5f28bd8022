/**
 * The merge rule of §5.5, branch by branch, on hand-made DoViewChange records. Headers are
 * abstract: a chain "A" has checksum op*1000+1 at each op and names the previous A as parent; a
 * divergent chain "B" (tag 2) forks from A at some op.
 */
import { describe, expect, it } from 'vitest';
import { merge, quorums, type DvcEntry, type DvcRecord } from '../src/index.js';

const HEADER = new Uint8Array(256);

function sum(op: number, tag: number): bigint {
  return BigInt(op * 1000 + tag);
}

/** A header at `op` on chain `tag` whose parent is on chain `parentTag`. */
function h(op: number, tag = 1, parentTag = tag, flags: { present?: boolean; commit?: number; view?: number } = {}): DvcEntry {
  return {
    op, blank: false, checksum: sum(op, tag), parent: op === 1 ? 0n : sum(op - 1, parentTag), commit: flags.commit ?? 0,
    timestamp: BigInt(op), view: flags.view ?? 0, nack: false, present: flags.present ?? true, header: HEADER,
  };
}

function blank(op: number, nack: boolean): DvcEntry {
  return { op, blank: true, checksum: 0n, parent: 0n, commit: 0, timestamp: 0n, view: 0, nack, present: false, header: HEADER };
}

/** A DVC whose suffix runs from `op` down to max(commit, 1), entries given head first. */
function dvc(replica: number, logView: number, op: number, commit: number, entries: DvcEntry[]): DvcRecord {
  entries.forEach((e, i) => expect(e.op).toBe(op - i));
  return { replica, logView, op, commit, entries };
}

/** Chain A headers from `op` down to `low`. */
function chainA(op: number, low: number, present = true): DvcEntry[] {
  const out: DvcEntry[] = [];
  for (let x = op; x >= low; x--) out.push(h(x, 1, 1, { present }));
  return out;
}

const q3 = quorums(3);
const q5 = quorums(5);

describe('merge (§5.5)', () => {
  it('waits for a view-change quorum', () => {
    expect(merge([dvc(0, 0, 2, 1, chainA(2, 1))], 3, q3)).toEqual({ kind: 'awaiting_quorum' });
  });

  it('an empty log everywhere is Ready with op_head 0', () => {
    const r = merge([dvc(0, 0, 0, 0, []), dvc(1, 0, 0, 0, [])], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', opHead: 0, commitMax: 0, headers: [] });
  });

  it('the highest log_view is canonical; an older log_view header that differs nacks', () => {
    // Replica 0 installed view 2's log (A up to op 4); replica 1 last installed view 1 and holds a
    // divergent B from op 3 up to op 5, present. B3..B5 are nacked by replica 1's own older
    // log_view (one nack each, below the quorum of 2) and never become canonical.
    const r0 = dvc(0, 2, 4, 2, chainA(4, 2));
    const r1 = dvc(1, 1, 5, 2, [h(5, 2, 2), h(4, 2, 2), h(3, 2, 1), h(2)]);
    const r = merge([r0, r1], 3, q3);
    expect(r.kind).toBe('ready');
    if (r.kind !== 'ready') return;
    expect(r.opHead).toBe(4);
    expect(r.headers.map((x) => x.checksum)).toEqual([sum(4, 1), sum(3, 1), sum(2, 1)]);
  });

  it('a nack quorum above commit_max truncates the log', () => {
    // n = 3, nack quorum 2. Replica 0 holds ops 3..5; replica 1's log ends at op 3 (implicit nack
    // of 4 and 5); replica 2 proves with nack bits it never prepared 4 and 5.
    const r0 = dvc(0, 1, 5, 2, chainA(5, 2));
    const r1 = dvc(1, 1, 3, 2, chainA(3, 2));
    const r2 = dvc(2, 1, 5, 2, [blank(5, true), blank(4, true), h(3), h(2)]);
    const r = merge([r0, r1, r2], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', opHead: 3, commitMax: 2 });
  });

  it('ignoring the explicit nack bits would keep the op (the bits are what truncate here)', () => {
    // Same as above without replica 1: nack bits of replica 2 plus replica 0's silence.
    const r0 = dvc(0, 1, 5, 2, chainA(5, 2));
    const withBits = dvc(2, 1, 5, 2, [blank(5, true), blank(4, true), h(3), h(2)]);
    const withoutBits = dvc(2, 1, 5, 2, [blank(5, false), blank(4, false), h(3), h(2)]);
    const r1 = dvc(1, 1, 5, 2, [blank(5, true), blank(4, true), h(3), h(2)]);
    expect(merge([r0, withBits, r1], 3, q3)).toMatchObject({ kind: 'ready', opHead: 3 });
    expect(merge([r0, withoutBits, dvc(1, 1, 5, 2, [blank(5, false), blank(4, false), h(3), h(2)])], 3, q3)).toMatchObject({
      kind: 'ready', opHead: 5,
    });
  });

  it('an op outside a sender window abstains (an empty suffix nacks nothing)', () => {
    // n = 5, nack quorum 3. Replica 0 holds A up to 4. Replicas 1 and 2 end at op 2 (two implicit
    // nacks at 3 and 4); replica 3 sends an empty suffix for op 4: it abstains, so 3 and 4 survive.
    const r0 = dvc(0, 1, 4, 1, chainA(4, 1));
    const r1 = dvc(1, 1, 2, 1, chainA(2, 1));
    const r2 = dvc(2, 1, 2, 1, chainA(2, 1));
    const r3 = dvc(3, 0, 4, 4, []);
    const kept = merge([r0, r1, r2, r3], 5, q5);
    expect(kept).toMatchObject({ kind: 'ready', opHead: 4 });
    // Had replica 3 nacked explicitly, the third nack truncates at op 3.
    const r3nack = dvc(3, 1, 4, 1, [blank(4, true), blank(3, true), h(2), h(1)]);
    expect(merge([r0, r1, r2, r3nack], 5, q5)).toMatchObject({ kind: 'ready', opHead: 2 });
  });

  it('a nack quorum at or below commit_max is a deadlock', () => {
    // Replica 1 claims commit 4 but the header log at op 4 is nacked by two replicas.
    const r0 = dvc(0, 1, 3, 2, chainA(3, 2));
    const r1 = dvc(1, 1, 3, 3, chainA(3, 3));
    const r2 = dvc(2, 1, 4, 4, [h(4, 1, 1, { commit: 4 })]);
    const r = merge([r0, r1, r2], 3, q3);
    expect(r).toMatchObject({ kind: 'deadlocked', op: 4 });
  });

  it('no present copy of a canonical header waits for repair while DVCs are missing, then drops it', () => {
    // Replica 0 knows header 3 but cannot serve its body (present bit clear).
    const r0 = dvc(0, 1, 3, 2, [h(3, 1, 1, { present: false }), h(2)]);
    const r1 = dvc(1, 1, 3, 2, [h(3, 1, 1, { present: false }), h(2)]);
    expect(merge([r0, r1], 3, q3)).toEqual({ kind: 'awaiting_repair', op: 3 });
    // All three in and nobody can serve op 3 (above the commit point): it is dropped (upstream
    // deadlocks; deviation 16 of docs/internals-consensus-core.md).
    const r2 = dvc(2, 1, 3, 2, [h(3, 1, 1, { present: false }), h(2)]);
    expect(merge([r0, r1, r2], 3, q3)).toMatchObject({ kind: 'ready', opHead: 2, commitMax: 2 });
  });

  it('canonical senders that disagree at an op wait for repair', () => {
    const r0 = dvc(0, 1, 3, 2, [h(3, 1), h(2)]);
    const r1 = dvc(1, 1, 3, 2, [h(3, 2, 1), h(2)]);
    expect(merge([r0, r1], 3, q3)).toEqual({ kind: 'awaiting_repair', op: 3 });
  });

  it('commit_max comes from commits, op − 127 and the head header, never the lowest suffix op', () => {
    const r0 = dvc(0, 1, 3, 1, [h(3, 1, 1, { commit: 2 }), h(2), h(1)]);
    const r1 = dvc(1, 1, 3, 1, [h(3, 1, 1, { commit: 2 }), h(2), h(1)]);
    const r = merge([r0, r1], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', commitMax: 2, opHead: 3 });
  });

  it('a broken hash chain among the canonical headers is a deadlock', () => {
    // Op 3 names a parent that is not the canonical op 2.
    const bad = [h(3, 1, 7), h(2)];
    const r = merge([dvc(0, 1, 3, 2, bad), dvc(1, 1, 3, 2, [h(3, 1, 7), h(2)])], 3, q3);
    expect(r).toMatchObject({ kind: 'deadlocked' });
  });

  it('committed elsewhere: older-log_view headers at or below their sender commit, kept only when chained', () => {
    // Canonical replica 0 (log_view 2) has a window from op 5 down to its commit 5; replica 1
    // (log_view 1, commit 5) shows ops 5 down to 3: ops 3 and 4 are below the merged window and
    // committed on replica 1, and they chain to the header above them.
    const r0 = dvc(0, 2, 6, 5, [h(6), h(5)]);
    const r1 = dvc(1, 1, 5, 3, [h(5, 1, 1, { commit: 3 }), h(4), h(3)]);
    const r1b = { ...r1, commit: 5 };
    const r = merge([r0, r1b], 3, q3);
    expect(r.kind).toBe('ready');
    if (r.kind !== 'ready') return;
    expect(r.committedElsewhere.map((e) => e.op)).toEqual([4, 3]);
    // An unchained candidate (B4 does not match A5's parent) is dropped, and so is everything below it.
    const r2 = { ...dvc(1, 1, 5, 3, [h(5, 1, 1), h(4, 2, 1), h(3)]), commit: 5 };
    const s = merge([r0, r2], 3, q3);
    expect(s.kind === 'ready' ? s.committedElsewhere.map((e) => e.op) : null).toEqual([]);
    // Above a header with parent 0 ("unknown") nothing is proven: an older view's entry at its
    // sender's commit point is not taken (the merging primary would apply it over the committed op).
    const r0unknown = dvc(0, 2, 5, 5, [{ ...h(5), parent: 0n }]);
    const orphan = dvc(1, 0, 4, 4, [h(4, 2, 1)]);
    const u = merge([r0unknown, orphan], 3, q3);
    expect(u.kind).toBe('ready');
    expect(u.kind === 'ready' ? u.committedElsewhere : null).toEqual([]);
    // Two non-canonical senders disagreeing about a committed op: deadlock.
    const r3 = { ...dvc(2, 1, 5, 3, [h(5, 1, 1), h(4, 2, 1), h(3)]), commit: 5 };
    expect(merge([r0, r1b, r3], 3, q3)).toMatchObject({ kind: 'deadlocked' });
  });

  it('the commit point needs no present copy, nor a header when every copy is gone (deviation)', () => {
    // Every replica applied op 3 (commit 3) but none can serve its body: the log starts above it.
    const known = [h(3, 1, 1, { present: false })];
    const r = merge([dvc(0, 1, 3, 3, known), dvc(1, 1, 3, 3, [h(3, 1, 1, { present: false })]), dvc(2, 1, 3, 3, [blank(3, false)])], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', opHead: 3, commitMax: 3 });
    const lost = merge([dvc(0, 1, 3, 3, [blank(3, false)]), dvc(1, 1, 3, 3, [blank(3, false)])], 3, q3);
    expect(lost).toMatchObject({ kind: 'ready', opHead: 3, commitMax: 3, headers: [] });
  });

  // Regression (found by the VOPR, 2-replica seeds 5161 and 5571): a replica that lost its journal
  // votes blind (dvc-suffix.ts): its head entry is a blank without a nack bit, its op the top of its
  // window (commit + 127). Ops above that window must not count as nacked "by omission": it does
  // not know where its log ends. Here the other replica holds committed ops beyond the window.
  it('a blind DoViewChange (blank head, no nack) does not nack by omission above its window', () => {
    const blindEntries: DvcEntry[] = [];
    for (let x = 127; x >= 1; x--) blindEntries.push(blank(x, false));
    const blind = dvc(0, 0, 127, 0, blindEntries);
    const full = dvc(1, 0, 132, 131, chainA(132, 131));
    const q2 = quorums(2);
    const r = merge([blind, full], 2, q2);
    expect(r).toMatchObject({ kind: 'ready', opHead: 132, commitMax: 131 });
    // A normal short log still nacks by omission (its head is a real header).
    const short = dvc(0, 0, 127, 0, chainA(127, 1));
    const truncated = merge([short, dvc(1, 0, 133, 126, chainA(133, 126))], 2, q2);
    expect(truncated).toMatchObject({ kind: 'ready', opHead: 127 });
  });

  // Seed 1004652 of 3 (partition): replica 1, primary of view 1, committed op 193 with replica 0's
  // ack, then lost its journal to a power loss (its superblock's commit point: 0). Replica 2 had
  // prepared through 192 only. Replica 2, primary-elect of view 2, merged its own DVC with replica
  // 1's lost tail (blanks without nacks, but only to 0 + 127) and started view 2 at op 192: the
  // committed op 193 was dropped and another op 193 committed later. A lost tail may hide acked
  // ops above its window, so it does not count towards the intersection: the merge waits for a
  // DVC with a known log end (replica 0's, which holds 193).
  it('a lost tail does not count towards the quorum intersection: the merge waits for a known log end', () => {
    const lagging = dvc(2, 1, 192, 192, chainA(192, 65));
    const lost = dvc(1, 1, 127, 0, Array.from({ length: 127 }, (_, i) => blank(127 - i, false)));
    expect(merge([lagging, lost], 3, q3, { replica: 2, commitMin: 192 })).toEqual({ kind: 'awaiting_intact' });
    const holder = dvc(0, 1, 194, 191, chainA(194, 67));
    const r = merge([lagging, lost, holder], 3, q3, { replica: 2, commitMin: 192 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 194 });
    // A lost tail inside its window shows all it may have acked: it counts (here it holds 193
    // back as a blank without a nack, so the merge waits for a copy there instead).
    const shortLost = dvc(1, 1, 194, 150, Array.from({ length: 45 }, (_, i) => blank(194 - i, false)));
    expect(merge([lagging, shortLost], 3, q3, { replica: 2, commitMin: 192 })).toEqual({ kind: 'awaiting_repair', op: 193 });
    // Two senders that know their log ends are a nack quorum's worth: no wait.
    expect(merge([lagging, holder], 3, q3, { replica: 2, commitMin: 192 })).toMatchObject({ kind: 'ready', opHead: 194 });
  });

  // Regression (found by the VOPR, seed 7576 with 5 replicas): every replica lost op 40 (each had
  // it, truncated it in a reconcile and marked it faulty: it may have acked it, so it never nacks
  // it) and nobody else holds it. With all n DoViewChanges in, no replica can ever serve it:
  // waiting deadlocks the group forever. It is dropped with everything above it.
  it('an op no replica holds a header for, with all n DVCs in, is dropped instead of deadlocking', () => {
    const faultyAt5 = (replica: number): DvcRecord => dvc(replica, 1, 5, 4, [blank(5, false), h(4)]);
    const r = merge([faultyAt5(0), faultyAt5(1), faultyAt5(2)], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', opHead: 4, commitMax: 4 });
    // With a DVC missing, it still waits (the missing replica may hold it).
    expect(merge([faultyAt5(0), faultyAt5(1)], 3, q3)).toEqual({ kind: 'awaiting_repair', op: 5 });
    // The same when some know its header (without the body): nobody can serve it.
    const headerOnly = (replica: number): DvcRecord => dvc(replica, 1, 5, 4, [h(5, 1, 1, { present: false }), h(4)]);
    expect(merge([headerOnly(0), headerOnly(1), faultyAt5(2)], 3, q3)).toMatchObject({ kind: 'ready', opHead: 4 });
  });

  // A restarted backup of log view 1 lost the headers view 1's StartView gave it (they are not
  // persisted): a hole at 5 it never acked (nack bit), its unheld tail 6 (faulty: blank, no nack).
  // Replica 0, still in log view 0, holds 5 and 6, committed there. Before, its copy counted as a
  // nack "an older log_view header that differs" although nothing canonical is known at 5: two
  // nacks truncated the committed op.
  const restartedBackup = (replica: number, holeNack: boolean): DvcRecord => dvc(replica, 1, 6, 4, [blank(6, false), blank(5, holeNack), h(4)]);

  // At 5 the older copy and replica 2's nack bit make a nack quorum against any OTHER op, so the
  // older copy is the one op that may be committed there: taken (seed 100423 of 5, below). At 6
  // nobody nacks: the canonical op there may be another one, so the merge waits.
  it('an older log view\'s copy is no nack while the canonical header there is unknown', () => {
    const r = merge([restartedBackup(2, true), dvc(0, 0, 6, 3, chainA(6, 3))], 3, q3);
    expect(r).toEqual({ kind: 'awaiting_repair', op: 6 });
  });

  it('with all n DVCs in and no canonical header, an older log view\'s body blocks the unservable drop', () => {
    const r = merge([restartedBackup(1, false), restartedBackup(2, false), dvc(0, 0, 6, 3, chainA(6, 3))], 3, q3);
    expect(r).toEqual({ kind: 'deadlocked', op: 5 });
  });

  // Seed 182 of 3 (metadata): replica 2 adopted view 1's log (op 7, committed through 7) without
  // ever receiving 3..7 and nacks them; replica 0, still in log view 0, applied 1..7 and holds 8.
  // Replica 1 is down for good. The commit point 7 has no canonical header (replica 2's blank):
  // the merge waited for a copy forever. Merged by replica 0, its own applied entry is the
  // committed op; merged by replica 2 it still waits (here op 8's commit field stops at 6: no
  // head vouches for op 7 either, see the seed 1075070 test below).
  it('at the commit point, the merging replica\'s own applied entry stands in for a missing canonical header', () => {
    // (Replica 2 does not know whether it acked an op at 7: with a nack bit there, its nack and
    // replica 0's copy would make A7 the committed op without the applied entry.)
    const r2 = dvc(2, 1, 7, 1, [blank(7, false), blank(6, true), blank(5, true), blank(4, true), blank(3, true), h(2), h(1)]);
    const r0 = dvc(0, 0, 8, 7, [h(8, 1, 1, { commit: 6 }), h(7)]);
    expect(merge([r0, r2], 3, q3)).toEqual({ kind: 'awaiting_repair', op: 7 });
    expect(merge([r0, r2], 3, q3, { replica: 2, commitMin: 2 })).toEqual({ kind: 'awaiting_repair', op: 7 });
    expect(merge([r0, r2], 3, q3, { replica: 0, commitMin: 6 })).toEqual({ kind: 'awaiting_repair', op: 7 }); // not applied yet
    const r = merge([r0, r2], 3, q3, { replica: 0, commitMin: 7 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 7, commitMax: 7 });
    expect(r.kind === 'ready' && r.headers.map((x) => x.checksum)).toEqual([sum(7, 1)]);
  });

  // Seed 144 of 3 (partition): every DVC is in. Replica 0 (log view 2) applied 1..11 and holds 12,
  // its copy of 11 compacted away; replica 2 (log view 2) lost its tail; replica 1 (log view 1)
  // holds an older 1..11. No canonical header at the commit point 11, but an older one exists: the
  // merge deadlocked. Merged by replica 0, which applied 11, the commit point needs no header.
  it('the commit point needs no header when the merging replica applied it, even if an older log view holds one', () => {
    const lostTail = dvc(2, 2, 136, 9, Array.from({ length: 128 }, (_, i) => blank(136 - i, false)));
    const r0 = dvc(0, 2, 12, 11, [h(12, 1, 1, { commit: 11 }), blank(11, false)]);
    const r1 = dvc(1, 1, 11, 0, chainA(11, 1));
    expect(merge([lostTail, r0, r1], 3, q3)).toEqual({ kind: 'deadlocked', op: 11 });
    const r = merge([lostTail, r0, r1], 3, q3, { replica: 0, commitMin: 11 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 12, commitMax: 11 });
    expect(r.kind === 'ready' && r.headers.map((x) => x.op)).toEqual([12]);
  });

  // Seed 100423 of 5 (partition group 2): every DVC is in. Log view 4 (replicas 1, 3, 4) holds A
  // up to 5 on replica 1, whose log ends there; replicas 3 and 4 lost their tails after a power
  // loss (blanks without nacks, reported up to commit + 127). Replica 0 (log view 2) ends at 5;
  // replica 2 (log view 2, the old primary) holds its own prepares A6, A7. At 6 no canonical
  // header: the nacks (replicas 0, 1) plus replica 2's older copy are a nack quorum against any
  // other op, so A6 is the only op that may be committed there. Before, every elect deadlocked at
  // 6 and views rotated for good. At 8 replica 2's log ends too: three nacks truncate.
  it('an older log view\'s header, with the nacks a nack quorum against any other op, is taken (seed 100423 of 5)', () => {
    const lostTail = (replica: number, op: number, commit: number, present4: boolean): DvcRecord =>
      dvc(replica, 4, op, commit, Array.from({ length: 128 }, (_, i) => (op - i === 4 && present4 ? h(4) : blank(op - i, false))));
    const dvcs = [
      dvc(1, 4, 5, 3, [h(5), h(4), blank(3, false)]),
      lostTail(3, 129, 2, false),
      lostTail(4, 130, 3, true),
      dvc(0, 2, 5, 3, [blank(5, true), blank(4, true), blank(3, false)]),
      dvc(2, 2, 7, 0, chainA(7, 1)),
    ];
    const r = merge(dvcs, 5, q5, { replica: 1, commitMin: 3 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 7, commitMax: 3 });
    if (r.kind !== 'ready') return;
    expect(r.headers.map((x) => x.checksum)).toEqual([sum(7, 1), sum(6, 1), sum(5, 1), sum(4, 1)]);
    expect(r.paths).toContain('older_view_adopted');
    // Without replica 0's vote (its log end is a nack) only two count against another op: wait.
    expect(merge(dvcs.filter((d) => d.replica !== 0), 5, q5, { replica: 1, commitMin: 3 }).kind).toMatch(/^awaiting_/);
    // Two older log views that disagree there: no single candidate, nothing is taken.
    const forked = [...dvcs, dvc(5, 3, 6, 3, [h(6, 2, 1), h(5), h(4), h(3)])];
    expect(merge(forked, 6, quorums(6), { replica: 1, commitMin: 3 }).kind).not.toBe('ready');
  });
  // Seed 1017918 of 3 (partition, every DVC in): replica 1, the primary of log view 1, ends at
  // op 8 = its commit (its copy of 8 compacted: a blank); replica 2 (log view 1) lost its tail;
  // replica 0 (log view 0) holds its own view-0 ops 7..34 on a branch (chain B) that view 1
  // truncated: ops 7 and 8 were committed in view 1 as chain A's. Before, at 9 replica 1's log end
  // (a nack) and replica 0's older copy made a nack quorum against any other op and the merge
  // took B9..B34 on top of the committed A8 (then replica 0 applied its own B7, B8: two ops 7).
  it('the canonical log view\'s primary bounds the log where it knows its end (seed 1017918 of 3)', () => {
    const lostTail = dvc(2, 1, 135, 8, Array.from({ length: 128 }, (_, i) => blank(135 - i, false)));
    const primary = dvc(1, 1, 8, 8, [blank(8, false)]);
    const chainB: DvcEntry[] = [];
    for (let x = 34; x >= 7; x--) chainB.push(h(x, 2, 2));
    const older = dvc(0, 0, 34, 6, [...chainB, blank(6, false)]);
    const r = merge([lostTail, primary, older], 3, q3, { replica: 1, commitMin: 8 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 8, commitMax: 8 });
    expect(r.kind === 'ready' && r.paths).toContain('primary_log_end');
    expect(r.kind === 'ready' && r.paths).not.toContain('older_view_adopted');
  });

  // The same DVCs with log view 2 (its primary, replica 2, is the one that lost its tail: no
  // bound). Right above the commit point an older log view's header is taken only when it chains
  // to the committed op there; the committed op 8's header is unknown here, so B9 is not taken.
  it('an older log view\'s header right above the commit point must chain to the committed op there', () => {
    const lostTail = dvc(2, 2, 135, 8, Array.from({ length: 128 }, (_, i) => blank(135 - i, false)));
    const chainB: DvcEntry[] = [];
    for (let x = 34; x >= 7; x--) chainB.push(h(x, 2, 2));
    const older = dvc(0, 0, 34, 6, [...chainB, blank(6, false)]);
    const unknown = merge([lostTail, dvc(1, 2, 8, 8, [blank(8, false)]), older], 3, q3, { replica: 1, commitMin: 8 });
    expect(unknown.kind).not.toBe('ready');
    // A known committed A8 that B9 does not chain to: not taken either. B9 cannot be committed,
    // and replica 0 (never normal in log views 1, 2) acked no other op 9: with replica 1's log end
    // that is a nack quorum, and the log ends at 8.
    const otherChain = merge([lostTail, dvc(1, 2, 8, 8, [h(8)]), older], 3, q3, { replica: 1, commitMin: 8 });
    expect(otherChain).toMatchObject({ kind: 'ready', opHead: 8, commitMax: 8 });
    expect(otherChain.kind === 'ready' && otherChain.paths).not.toContain('older_view_adopted');
    // B9 on top of a committed B8: taken.
    const same = merge([lostTail, dvc(1, 2, 8, 8, [h(8, 2, 2)]), older], 3, q3, { replica: 1, commitMin: 8 });
    expect(same).toMatchObject({ kind: 'ready', opHead: 34, commitMax: 8 });
    expect(same.kind === 'ready' && same.paths).toContain('older_view_adopted');
  });
  // Seed 1038933 of 5, replica 3 dead for good. Replica 1 led log view 1 alone and holds its
  // branch B1..B9; view 2 started at op 0 without it and committed A1..A4. Replicas 0 and 4 (log
  // view 2) end at A4 = the commit point; replica 2, view 2's primary, lost its tail. Replica 1
  // was never normal in view 2, so it acked no op of it, and its B5 (on B4) cannot follow the
  // committed A4: with the two log ends a nack quorum at 5. Before, the merge waited for replica 3.
  it('an older log view\'s header that does not chain below it nacks every op that can be committed there (seed 1038933 of 5)', () => {
    const chainB: DvcEntry[] = [];
    for (let x = 9; x >= 1; x--) chainB.push(h(x, 2, 2));
    const branch = dvc(1, 1, 9, 0, chainB);
    const lostTail = dvc(2, 2, 127, 0, Array.from({ length: 127 }, (_, i) => blank(127 - i, false)));
    const r0 = dvc(0, 2, 4, 4, [h(4)]);
    const r4 = dvc(4, 2, 4, 4, [h(4)]);
    const r = merge([r4, branch, lostTail, r0], 5, q5, { replica: 4, commitMin: 4 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 4, commitMax: 4 });
    expect(r.kind === 'ready' && r.paths).toContain('nack_truncation');
    // Further up: A3 kept above the commit point A2 (replica 0 alone holds it), then B4 on B3
    // does not chain to A3 (seed 1038933's group 31 deadlocked on the chain after taking B4, B5).
    const up = merge([dvc(4, 2, 2, 2, [h(2)]), branch, lostTail, dvc(0, 2, 3, 2, [h(3), h(2)])], 5, q5, { replica: 4, commitMin: 2 });
    expect(up).toMatchObject({ kind: 'ready', opHead: 3, commitMax: 2 });
    expect(up.kind === 'ready' && up.paths).not.toContain('older_view_adopted');
    // Where it chains it is no nack: it may be the committed op (here the one that may be: taken).
    const chained = merge([r4, dvc(1, 1, 9, 0, chainA(9, 1)), lostTail, r0], 5, q5, { replica: 4, commitMin: 4 });
    expect(chained).toMatchObject({ kind: 'ready', opHead: 9, commitMax: 4 });
    expect(chained.kind === 'ready' && chained.paths).toContain('older_view_adopted');
  });
  // Seed 1135380 of 3 (metadata group), replica 2 dead for good. Replica 1 led log view 1 (chain
  // A up to 52, commit 47). Replica 0 holds log view 2 (its primary, replica 2, kept A through 48
  // and proposed chain C): C51 (commit field 48) but blanks at 49 and 50, nacked (never
  // received). C51's parent names view 2's op 50, which is not A50: replica 1, never normal in
  // view 2, holds another op there and so nacks it, as it would against a known header. Before,
  // the merge took A49 and A50 under C51 and deadlocked on C51's parent forever.
  it('the canonical header above names the op below it: an older log view\'s other op there is a nack (seed 1135380 of 3)', () => {
    const r1 = dvc(1, 1, 52, 47, chainA(52, 47));
    const r0 = dvc(0, 2, 51, 46, [h(51, 3, 3, { commit: 48, view: 2 }), blank(50, true), blank(49, true), h(48), h(47), h(46)]);
    const r = merge([r0, r1], 3, q3, { replica: 0, commitMin: 46 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 49, commitMax: 48 });
    if (r.kind !== 'ready') return;
    // A49 stays (no other op can be committed there); view 2's op 50 and C51 cannot be committed.
    expect(r.headers.map((x) => x.checksum)).toEqual([sum(49, 1), sum(48, 1)]);
    expect(r.paths).toEqual(expect.arrayContaining(['older_view_adopted', 'nack_truncation']));
    // Where C51 chains to A50, A50 is the canonical op itself: taken, and C51 on top of it.
    const chained = dvc(0, 2, 51, 46, [h(51, 3, 1, { commit: 48, view: 2 }), blank(50, true), blank(49, true), h(48), h(47), h(46)]);
    const up = merge([chained, r1], 3, q3, { replica: 0, commitMin: 46 });
    expect(up).toMatchObject({ kind: 'ready', opHead: 51, commitMax: 48 });
    expect(up.kind === 'ready' && up.headers.map((x) => x.checksum)).toEqual([sum(51, 3), sum(50, 1), sum(49, 1), sum(48, 1)]);
    // No implied op from a header stamped above the canonical log view (an unvouched elect's
    // proposal a repair may have handed out) nor from a parent of 0: the old outcome stands.
    const stampedAbove = dvc(0, 2, 51, 46, [h(51, 3, 3, { commit: 48, view: 3 }), blank(50, true), blank(49, true), h(48), h(47), h(46)]);
    const orphan = dvc(0, 2, 51, 46, [{ ...h(51, 3, 3, { commit: 48, view: 2 }), parent: 0n }, blank(50, true), blank(49, true), h(48), h(47), h(46)]);
    for (const r0x of [stampedAbove, orphan]) {
      const out = merge([r0x, r1], 3, q3, { replica: 0, commitMin: 46 });
      expect(out.kind).toBe('deadlocked');
    }
  });
  // Seed 1075070 of 3 (partition group 1), replica 0 dead for good. Replica 2 led log view 2 and
  // holds A up to 8, its head's commit field 5 (the commit point). Replica 1 adopted view 3's log
  // (A up to 8, from replica 0) and restarted before it fetched the bodies of 5..8: blanks with
  // nack bits, the only canonical sender. No canonical header at the commit point 5: the merge
  // waited for a copy from replica 0 forever. But A8 (commit 5) was prepared by a primary that had
  // committed op 5 in its log, and A8 chains down to A5 in replica 2's DVC: A5 is the committed op.
  it('at the commit point, the header a head whose commit field reaches it chains down to is the committed op (seed 1075070 of 3)', () => {
    const r1 = dvc(1, 3, 8, 2, [blank(8, true), blank(7, true), blank(6, true), blank(5, true), h(4), h(3), blank(2, false)]);
    const r2 = dvc(2, 2, 8, 3, [h(8, 1, 1, { commit: 5 }), h(7), h(6), h(5), h(4), h(3)]);
    for (const self of [{ replica: 1, commitMin: 2 }, { replica: 2, commitMin: 3 }]) {
      const r = merge([r1, r2], 3, q3, self);
      expect(r).toMatchObject({ kind: 'ready', opHead: 8, commitMax: 5 });
      if (r.kind !== 'ready') return;
      expect(r.headers.map((x) => x.checksum)).toEqual([sum(8, 1), sum(7, 1), sum(6, 1), sum(5, 1)]);
      expect(r.paths).toContain('commit_point_from_head_chain');
    }
    // A break in the chain from the head down to the commit point vouches for nothing, nor does a
    // head whose commit field stops below (the commit point came from elsewhere): where replica 1
    // does not know whether it acked an op at 5 (a blank without a nack bit), the merge waits.
    const unsure = dvc(1, 3, 8, 2, [blank(8, true), blank(7, true), blank(6, true), blank(5, false), h(4), h(3), blank(2, false)]);
    const broken = dvc(2, 2, 8, 3, [h(8, 1, 1, { commit: 5 }), h(7), blank(6, false), h(5), h(4), h(3)]);
    expect(merge([unsure, broken], 3, q3, { replica: 1, commitMin: 2 })).toEqual({ kind: 'awaiting_repair', op: 5 });
    const below = dvc(2, 2, 8, 5, [h(8, 1, 1, { commit: 4 }), h(7), h(6), h(5)]);
    expect(merge([unsure, below], 3, q3, { replica: 1, commitMin: 2 })).toEqual({ kind: 'awaiting_repair', op: 5 });
    // With replica 1's nack at 5, its nack and replica 2's copy are a nack quorum against any other
    // op there: A5 is the committed op (the older-view rule, at the commit point too).
    expect(merge([r1, broken], 3, q3, { replica: 1, commitMin: 2 })).toEqual({ kind: 'awaiting_repair', op: 6 });
    const fromBelow = merge([r1, below], 3, q3, { replica: 1, commitMin: 2 });
    expect(fromBelow).toMatchObject({ kind: 'ready', opHead: 8, commitMax: 5 });
    expect(fromBelow.kind === 'ready' && fromBelow.headers.map((x) => x.checksum)).toEqual([sum(8, 1), sum(7, 1), sum(6, 1), sum(5, 1)]);
  });

  // Found by a scenario (restart-safety.test.ts): replica 0 installed log view 2 at commit 10
  // without ever receiving op 10, restarted (commit_max back to 0; its superblock recorded 10), and
  // nacks op 10 at the commit point it reports; replica 1 (log view 1) holds A10. Their nack and
  // copy are a nack quorum against any other op at 10. Without the nack bit the merge waits.
  it('at the commit point, an older log view\'s header with the nacks a nack quorum against any other op is the committed op', () => {
    const r0 = dvc(0, 2, 10, 10, [blank(10, true)]);
    const r1 = dvc(1, 1, 10, 0, chainA(10, 1));
    const r = merge([r0, r1], 3, q3, { replica: 0, commitMin: 6 });
    expect(r).toMatchObject({ kind: 'ready', opHead: 10, commitMax: 10 });
    expect(r.kind === 'ready' && r.headers.map((x) => x.checksum)).toEqual([sum(10, 1)]);
    expect(r.kind === 'ready' && r.paths).toContain('older_view_adopted');
    expect(merge([dvc(0, 2, 10, 10, [blank(10, false)]), r1], 3, q3, { replica: 0, commitMin: 6 })).toEqual({ kind: 'awaiting_repair', op: 10 });
  });

  it('an op with parent 0 right above the commit point (its primary started there without that header) is kept; the unverified commit-point header is left out', () => {
    // View 4's primary (replica 1) started with op_head = commit = 79 and no header for op 79
    // anywhere it could see (commit_point_without_copy), so its op 80 names parent 0. Replica 2
    // holds a header at 79. Seed 1015906 of 3 deadlocked here for good on the parent mismatch.
    const orphan: DvcEntry = { ...h(80), parent: 0n, commit: 79 };
    const r1 = dvc(1, 4, 80, 79, [orphan, blank(79, false)]);
    const r2 = dvc(2, 4, 79, 79, [h(79)]);
    const r = merge([r2, r1], 3, q3);
    expect(r).toMatchObject({ kind: 'ready', opHead: 80, commitMax: 79 });
    if (r.kind !== 'ready') return;
    expect(r.headers.map((e) => e.op)).toEqual([80]);
    // A parent mismatch anywhere else still deadlocks.
    const stale = dvc(1, 4, 80, 79, [h(80, 1, 2), blank(79, false)]);
    expect(merge([r2, stale], 3, q3)).toMatchObject({ kind: 'deadlocked' });
  });
  it('canonical senders that disagree at an op: the copy stamped above the canonical log view is taken (the backup side of seed 1057611)', () => {
    // n = 5, log view 0 everywhere. Replica 1 holds view 0's A3; replica 3 holds B3 (parent A2)
    // stamped view 2, journaled before its log view 2 was durable; replica 4 ends at op 2.
    const r1 = dvc(1, 0, 3, 2, [h(3), h(2)]);
    const r3 = dvc(3, 0, 3, 2, [h(3, 2, 1, { view: 2 }), h(2)]);
    const r4 = dvc(4, 0, 2, 2, [h(2)]);
    const r = merge([r1, r3, r4], 5, q5);
    expect(r).toMatchObject({ kind: 'ready', opHead: 3 });
    if (r.kind !== 'ready') return;
    expect(r.headers.map((x) => x.checksum)).toEqual([sum(3, 2), sum(2, 1)]);
    expect(r.paths).toContain('stamp_resolved');
    // The same conflict with both stamps at or below the canonical log view is still waited on.
    const atLogView = merge([r1, dvc(3, 0, 3, 2, [h(3, 2, 1), h(2)]), r4], 5, q5);
    expect(atLogView).toEqual({ kind: 'awaiting_repair', op: 3 });
  });

});
