/**
 * Stale journal entries below a new log (white-box): what a StartView's reconcile removes below its
 * commit point, what a bogus entry takes with it, and a hole below the head that the primary's
 * retransmission fills. Each case is a VOPR liveness failure; the seeds are pinned in
 * packages/simulator/test/seeds-{3,5}.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Command, PrepareHeaderView } from '@shoal/protocol';
import { Mark } from '../src/index.js';
import { coreOf, type Core } from '../src/testing.js';
import { entryFromFrame } from '../src/journal.js';
import { reconcile } from '../src/start-view.js';
import { discardBogus, verify } from '../src/trust.js';
import { Cluster } from '../../../test/scenario/support/cluster.js';
import { fakeBatch } from './support/state-machines.js';

const prepareView = new PrepareHeaderView();

function core(cluster: Cluster, index: number): Core {
  const node = cluster.nodes[index];
  if (node === undefined) throw new Error(`no node ${index}`);
  return coreOf(node.r);
}

/** A partition cluster of 3 in view 0 that committed `ops` batches (every replica applied them). */
function committed(ops: number, tag: string, client = 1n): Cluster {
  const cluster = new Cluster({ replicas: 3, plane: 'partition' });
  for (let i = 1; i <= ops; i++) {
    cluster.request(0, { client, request: BigInt(i), body: fakeBatch(`${tag}${i}`) });
    cluster.run(3);
  }
  cluster.runUntil(() => cluster.converged(ops), 500);
  return cluster;
}

/** Replica 1 of history `tag` holding ops 3 and 4 uncommitted (its PrepareOks lost), and their frames. */
function uncommittedPair(tag: string, client: bigint): { cluster: Cluster; frames: Map<number, Uint8Array> } {
  const cluster = committed(2, tag, client);
  const frames = new Map<number, Uint8Array>();
  cluster.filters.push((m) => {
    if (m.command === Command.Prepare && m.from === 0 && m.to === 1) frames.set(prepareView.bind(m.frame, 0).opNumber, m.frame.slice());
    return m.command === Command.PrepareOk;
  });
  for (const i of [3, 4]) cluster.request(0, { client, request: BigInt(i), body: fakeBatch(`${tag}${i}`) });
  cluster.run(5);
  return { cluster, frames };
}

function headerOf(frame: Uint8Array | undefined): { op: number; checksum: bigint; parent: bigint } {
  if (frame === undefined) throw new Error('prepare not captured');
  const h = prepareView.bind(frame, 0);
  return { op: h.opNumber, checksum: h.checksum, parent: h.parent };
}

describe('stale journal entries', () => {
  // Seed 1008032 of 3: a backup adopted a StartView at op 8 with commit 8 while it held ops 7 and 8
  // of a truncated view above its commit_min (6). The reconcile scanned only above the StartView's
  // commit point, so both stayed; after a crash the replica restored them as ops of the new log
  // view (its canonical headers are memory only), its DoViewChange claimed them there, and every
  // merge waited for a repair of the conflicting op 7 forever (the third replica down for good).
  it('a StartView removes an older log view entry at or below its commit point (the lowest header names the op below it)', () => {
    const a = uncommittedPair('a', 1n);
    const b = uncommittedPair('b', 2n);
    const c1 = core(a.cluster, 1);
    expect([c1.commitMin, c1.op]).toEqual([2, 4]);
    const b4 = headerOf(b.frames.get(4));
    const b3 = headerOf(b.frames.get(3));
    expect(c1.journal.get(3)?.checksum).not.toBe(b3.checksum);
    // A StartView with op 4 and commit 4 carries the header of op 4 only.
    reconcile(c1, 4, 4, [b4]);
    expect(c1.journal.has(3)).toBe(false);
    expect(c1.journal.has(4)).toBe(false);
    const truncations = a.cluster.nodes[1]?.r.takeEffects().filter((e) => e.kind === 'journal_truncate');
    expect(truncations).toEqual([{ kind: 'journal_truncate', fromOp: 3, faultyThrough: 0 }]);
  });

  it('a StartView keeps the entries below its commit point that its headers confirm', () => {
    const a = uncommittedPair('a', 1n);
    const c1 = core(a.cluster, 1);
    const a4 = headerOf(a.frames.get(4));
    reconcile(c1, 4, 4, [a4]);
    expect([c1.journal.has(3), c1.journal.has(4)]).toEqual([true, true]);
    expect(a.cluster.nodes[1]?.r.takeEffects().filter((e) => e.kind === 'journal_truncate')).toEqual([]);
  });

  // Seed 101041 of 5: a replica held ten ops of a truncated view below the canonical suffix; each
  // repair round exposed one of them (the repaired op above names it as not its parent), and the
  // truncation from there dropped the 200 repaired ops above with it: ten rounds of the whole
  // suffix, past the liveness window.
  it('a bogus entry takes the unverified run below it down to commit_min', () => {
    const a = uncommittedPair('a', 1n);
    const node = a.cluster.nodes[1];
    const c1 = core(a.cluster, 1);
    for (const op of [3, 4]) {
      const e = c1.journal.get(op);
      if (e === undefined) throw new Error(`op ${op} not journaled`);
      e.trusted = false;
    }
    node?.r.takeEffects();
    discardBogus(c1, 4);
    expect([c1.journal.has(3), c1.journal.has(4)]).toEqual([false, false]);
    expect(node?.r.takeEffects().filter((e) => e.kind === 'journal_truncate')).toEqual([{ kind: 'journal_truncate', fromOp: 3, faultyThrough: 4 }]);
    expect([...c1.journal.faulty].sort()).toEqual([3, 4]);
    expect(node?.r.marks()[Mark.BogusDiscarded]).toBe(1);
  });

  // Seed 1009712 of 3: the first prepare of a log that started above a lost commit-point header
  // carries parent 0 ("unknown"). The chain walk took that 0 for a checksum, found every entry
  // below it bogus, and a replica re-fetched and discarded the same committed ops forever.
  it('an entry whose parent is unknown (0) leaves the entries below it unverified, not bogus', () => {
    const a = uncommittedPair('a', 1n);
    const c1 = core(a.cluster, 1);
    const e3 = c1.journal.get(3);
    const e4 = c1.journal.get(4);
    if (e3 === undefined || e4 === undefined) throw new Error('ops 3, 4 not journaled');
    e3.trusted = false;
    c1.journal.truncateFrom(4);
    c1.journal.put({ ...e4, parent: 0n, trusted: false });
    // A canonical header above names op 4 as its parent: op 4 is trusted, op 3 cannot be judged.
    c1.canon.clear();
    c1.canon.set(5, { checksum: 5n, parent: e4.checksum, header: null });
    expect(verify(c1, 3)).toEqual({ verdict: 'unverified', bogusOp: 0 });
    expect(c1.journal.get(4)?.trusted).toBe(true);
    expect(c1.journal.has(3)).toBe(true);
  });

  // Seed 1003514 of 3: a stale op 30 took the 42 ops above it with it, among them the
  // acknowledged ops 69..72 whose only other copy was on the replica down for good.
  it('a bogus entry keeps the entries above it: journaled again, not faulty', () => {
    const a = uncommittedPair('a', 1n);
    const node = a.cluster.nodes[1];
    const c1 = core(a.cluster, 1);
    const e4 = c1.journal.get(4);
    if (e4 === undefined) throw new Error('op 4 not journaled');
    const e3 = c1.journal.get(3);
    if (e3 !== undefined) e3.trusted = false;
    node?.r.takeEffects();
    discardBogus(c1, 3);
    expect([c1.journal.has(3), c1.journal.get(4)?.checksum]).toEqual([false, e4.checksum]);
    expect([...c1.journal.faulty]).toEqual([3]);
    const effects = node?.r.takeEffects().filter((e) => e.kind === 'journal_truncate' || e.kind === 'journal_append').map((e) => [e.kind, 'fromOp' in e ? e.fromOp : e.op]);
    expect(effects).toEqual([['journal_truncate', 3], ['journal_append', 4]]);
  });

  it('a bogus entry leaves a trusted entry below it', () => {
    const a = uncommittedPair('a', 1n);
    const c1 = core(a.cluster, 1);
    const e3 = c1.journal.get(3);
    const e4 = c1.journal.get(4);
    if (e3 === undefined || e4 === undefined) throw new Error('ops 3, 4 not journaled');
    e3.trusted = true;
    e4.trusted = false;
    discardBogus(c1, 4);
    expect([c1.journal.has(3), c1.journal.has(4)]).toEqual([true, false]);
  });

  // Seed 1004762 of 3: a backup missing ops 37 and 38 below its head dropped every retransmission
  // of them (its state machine checked their batches against the dirty offset past its head), and
  // with the third replica down for good the partition never committed again.
  it('a hole below the head is filled by the primary\'s retransmission, and the ops commit', () => {
    const cluster = committed(2, 'h');
    // Replica 2 is cut off: every commit needs replica 1's ack.
    cluster.filters.push((m) => m.to === 2 || m.from === 2);
    const acks = (m: { command: number; from: number }): boolean => m.command === Command.PrepareOk && m.from === 1;
    cluster.filters.push(acks);
    for (const i of [3, 4, 5]) cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`h${i}`) });
    cluster.run(5);
    const c1 = core(cluster, 1);
    expect([c1.commitMin, c1.op, c1.journal.has(5)]).toEqual([2, 5, true]);
    // Op 4 leaves replica 1's journal (as a reconcile of a stale op 4 would), op 5 stays.
    const e5 = c1.journal.get(5);
    if (e5 === undefined) throw new Error('op 5 not journaled');
    c1.journal.truncateFrom(4);
    c1.journal.put(entryFromFrame(e5.frame, true, true));
    expect([c1.journal.has(4), c1.op]).toEqual([false, 5]);
    cluster.filters.splice(cluster.filters.indexOf(acks), 1);
    cluster.runUntil(() => core(cluster, 0).commitMax === 5 && c1.commitMin === 5, 2000);
    expect(c1.journal.has(4)).toBe(true);
    expect(core(cluster, 0).commitMax).toBe(5);
    expect(c1.commitMin).toBe(5);
    cluster.nodes[1]?.r.invariants();
  });
});
