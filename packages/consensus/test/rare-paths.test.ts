/**
 * Rare and fallback paths of the core that the VOPR's fault mix reaches seldom or never (their
 * coverage marks, marks.ts), each driven here into its exact interleaving and checked for its
 * outcome. Each case says why the fault mix does not reach it on its own.
 */
import { describe, expect, it } from 'vitest';
import { Command, PrepareHeaderView, StartViewHeaderView } from '@shoal/protocol';
import { Mark, type DvcEntry, type DvcRecord, type Replica } from '../src/index.js';
import { coreOf, type Core } from '../src/testing.js';
import { entryFromFrame } from '../src/journal.js';
import { reconcile, tryFinishView } from '../src/start-view.js';
import { tryMerge } from '../src/view-change.js';
import { asView } from '../src/types.js';
import { Cluster, text } from '../../../test/scenario/support/cluster.js';
import { login, puts } from '../../../test/scenario/support/script.js';
import { fakeBatch } from './support/state-machines.js';

const prepareView = new PrepareHeaderView();
const startViewView = new StartViewHeaderView();

function core(cluster: Cluster, index: number): Core {
  const node = cluster.nodes[index];
  if (node === undefined) throw new Error(`no node ${index}`);
  return coreOf(node.r);
}

function replica(cluster: Cluster, index: number): Replica {
  const node = cluster.nodes[index];
  if (node === undefined) throw new Error(`no node ${index}`);
  return node.r;
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

/** The Prepare frames replica 0 (view 0's primary) sends replica 1, by op. */
function capturePrepares(cluster: Cluster): Map<number, Uint8Array> {
  const seen = new Map<number, Uint8Array>();
  cluster.filters.push((m) => {
    if (m.command === Command.Prepare && m.from === 0 && m.to === 1) seen.set(prepareView.bind(m.frame, 0).opNumber, m.frame.slice());
    return false;
  });
  return seen;
}

describe('rare paths (coverage marks)', () => {
  // Deviation 3 (§13.4; upstream panics): a same-view prepare that does not chain to the entry
  // below. No legal schedule produces one: a view has one primary, it never replaces an op it sent
  // (it rolls back only a failed append, and every Prepare it sends waits for its own append to be
  // durable: send.ts), and every other source of a same-view entry (chain forwards, repair) copies
  // that primary's op. A frame from the network must still never crash the core, so the drop
  // stays; here a sealed prepare of another history (same cluster, group and view) stands in for
  // the broken peer.
  it('hash_chain_break: a same-view prepare whose parent is not the entry below is dropped, unacked', () => {
    const a = committed(2, 'a');
    const b = committed(2, 'b', 2n);
    const fromB = capturePrepares(b);
    b.request(0, { client: 2n, request: 3n, body: fakeBatch('b3') });
    b.run(3);
    const foreign = fromB.get(3);
    if (foreign === undefined) throw new Error('no op 3 prepare captured');
    const r1 = replica(a, 1);
    const c1 = core(a, 1);
    expect(c1.view).toBe(0);
    expect(c1.journal.get(2)?.view).toBe(0);
    expect(prepareView.bind(foreign, 0).parent).not.toBe(c1.journal.get(2)?.checksum);
    const acks: Uint8Array[] = [];
    a.filters.push((m) => {
      if (m.from === 1 && m.command === Command.PrepareOk) acks.push(m.frame);
      return false;
    });
    expect(r1.onMessage(foreign)).toBe('hash_chain_break');
    expect(r1.marks()[Mark.HashChainBreak]).toBe(1);
    expect(c1.journal.has(3)).toBe(false);
    expect(c1.op).toBe(2);
    expect(acks).toEqual([]);
    r1.invariants();
  });

  // A reconcile (§5.6/§5.7 step 1) truncates at the first op whose entry disagrees with the new
  // log; entries above it that agree become faulty (this replica may have acked them). It needs a
  // journal that holds a stale entry with an entry of the new log above it, both above the commit
  // point: the trust walk discards such a stale entry once an anchor above the commit point
  // exposes it (bogus_discarded), and a StartView's headers reconcile it away, so only a StartView
  // window that leaves the stale op blank (or a repair that filled above it meanwhile) keeps the
  // pair for the next view change. Here: replica 1 holds ops 3 and 4 of history A uncommitted,
  // op 4 is replaced by history B's (as a repair from a new primary would), and the new log is B's.
  it('reconcile_faulty: entries that agree with the new log above its truncation point become faulty', () => {
    const a = committed(2, 'a');
    a.filters.push((m) => m.command === Command.PrepareOk);
    for (const i of [3, 4]) a.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`a${i}`) });
    a.run(5);
    const b = committed(2, 'b', 2n);
    const fromB = capturePrepares(b);
    for (const i of [3, 4]) b.request(0, { client: 2n, request: BigInt(i), body: fakeBatch(`b${i}`) });
    b.run(5);
    const [b3, b4] = [fromB.get(3), fromB.get(4)];
    if (b3 === undefined || b4 === undefined) throw new Error('history B not captured');
    const r1 = replica(a, 1);
    const c1 = core(a, 1);
    expect([c1.commitMin, c1.op]).toEqual([2, 4]);
    c1.journal.truncateFrom(4);
    c1.journal.put(entryFromFrame(b4, true, false));
    const canonical = [b3, b4].map((f) => {
      const h = prepareView.bind(f, 0);
      return { op: Number(h.opNumber), checksum: h.checksum, parent: h.parent };
    });
    expect(c1.journal.get(3)?.checksum).not.toBe(canonical[0]?.checksum);
    reconcile(c1, 4, 2, canonical);
    expect(r1.marks()[Mark.ReconcileFaulty]).toBe(1);
    expect(r1.marks()[Mark.ReconcileTruncation]).toBe(1);
    expect(c1.journal.has(3)).toBe(false);
    expect(c1.journal.has(4)).toBe(false);
    expect([...c1.journal.faulty]).toEqual([4]); // the agreeing op; the disagreeing one was never acked in this log
    const truncations = r1.takeEffects().filter((e) => e.kind === 'journal_truncate');
    expect(truncations).toEqual([{ kind: 'journal_truncate', fromOp: 3, faultyThrough: 4 }]);
  });

  // The new primary applied more than the merged commit point (its own DVC, with the higher commit,
  // was not in the merge: it abstained with an incomplete journal; VOPR seed 3849 of 5 once), and
  // the merged log holds ops above what it applied: the pipeline starts above them. It needs a
  // primary-elect that abstains (a restarted replica with a lost journal, the isolate scenario's
  // journal loss) yet applied past every voter's commit point.
  it('pipeline_above_applied: the rebuilt pipeline starts above the ops the new primary applied', () => {
    const cluster = committed(3, 'm');
    cluster.filters.push((m) => m.command === Command.PrepareOk);
    cluster.request(0, { client: 1n, request: 4n, body: fakeBatch('m4') });
    cluster.run(5);
    const r1 = replica(cluster, 1);
    const c1 = core(cluster, 1);
    expect([c1.commitMin, c1.op]).toEqual([3, 4]);
    c1.view = asView(1);
    c1.status = 'view_change';
    c1.vc.parked = { opHead: 4, commitMax: 2, headers: [], committedElsewhere: [], sources: [] };
    tryFinishView(c1);
    r1.invariants();
    expect(c1.status).toBe('normal');
    expect(r1.marks()[Mark.PipelineAboveApplied]).toBe(1);
    expect(c1.pipeline.entries().map((p) => p.op)).toEqual([4]);
  });

  // §5.5 with every DVC in: an op whose header some voters know but whose body nobody holds
  // (faulty slots: a lost tail, a header known from a StartView) and that too few voters nack is
  // dropped with everything above it (deviation: upstream waits forever). The voters that do not
  // nack it and do not hold it must number at least a replication quorum, more than f: they lost
  // it (a power loss, an integrity or reconcile truncation, an install ahead). The fault mix's
  // loss budget (f lossy replicas) makes that a compound of rare non-crash faulty ops.
  it('merge_unservable_truncation: all n DVCs in, nobody holds the body: the op is dropped and the view starts', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    cluster.run(5);
    const r1 = replica(cluster, 1);
    const c1 = core(cluster, 1);
    c1.view = asView(1);
    c1.status = 'view_change';
    const header = new Uint8Array(256);
    const entry = (blank: boolean): DvcEntry => ({
      op: 1, blank, checksum: blank ? 0n : 1001n, parent: 0n, commit: 0, timestamp: 1n, view: 0, nack: false, present: false, header,
    });
    const votes: DvcRecord[] = [
      { replica: 0, logView: 0, op: 1, commit: 0, entries: [entry(true)] }, // a lost tail: blank, no nack
      { replica: 1, logView: 0, op: 0, commit: 0, entries: [] }, // never had it: its log ends below (a nack)
      { replica: 2, logView: 0, op: 1, commit: 0, entries: [entry(false)] }, // knows the header, lost the body
    ];
    for (const v of votes) c1.vc.dvcs.set(v.replica, v);
    tryMerge(c1);
    r1.invariants();
    expect(r1.marks()[Mark.MergeUnservableTruncation]).toBe(1);
    expect(c1.status).toBe('normal');
    expect([c1.view, c1.op, c1.commitMax]).toEqual([1, 0, 0]);
  });

  // §5.5 then §5.6: a merged log with more uncommitted ops than the pipeline holds is refused (the
  // new primary could not re-replicate them). Every prepare carries commit >= op - depth (its
  // primary's pipeline is bounded), and the merge's commit point takes every DVC's head header's
  // commit, so a refusal needs the heads at and above the merged head to be blank: lost tails
  // (blanks without nacks up to the top faulty op), blind voters. Here two of three voters lost
  // op 45 (beyond the loss budget of 3 replicas: why the fault mix does not get here) and their
  // restored commit points are the flushed ones, far below; the third never had anything.
  it('merge_refused_pipeline: more uncommitted ops than the pipeline holds: the merge is refused, the view not started', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    cluster.run(5);
    const r1 = replica(cluster, 1);
    const c1 = core(cluster, 1);
    c1.view = asView(1);
    c1.status = 'view_change';
    const header = new Uint8Array(256);
    const lostTail = (replica: number): DvcRecord => {
      const entries: DvcEntry[] = [{ op: 45, blank: true, checksum: 0n, parent: 0n, commit: 0, timestamp: 0n, view: 0, nack: false, present: false, header }];
      for (let op = 44; op >= 1; op--) {
        entries.push({ op, blank: false, checksum: BigInt(op * 1000 + 1), parent: op === 1 ? 0n : BigInt((op - 1) * 1000 + 1), commit: Math.max(0, op - 32), timestamp: BigInt(op), view: 0, nack: false, present: true, header });
      }
      return { replica, logView: 0, op: 45, commit: 0, entries };
    };
    for (const v of [lostTail(0), { replica: 1, logView: 0, op: 0, commit: 0, entries: [] }, lostTail(2)]) c1.vc.dvcs.set(v.replica, v);
    tryMerge(c1);
    r1.invariants();
    expect(r1.marks()[Mark.MergeRefusedPipeline]).toBe(1);
    expect(r1.marks()[Mark.MergeUnservableTruncation]).toBe(0); // refused before its paths are marked
    expect(c1.vc.decided).toBe(false);
    expect(c1.vc.parked).toBe(null);
    expect(c1.status).toBe('view_change');
  });

  // §5.7 guard 3: a probe answer addressed to a previous boot of the prober is ignored (it answered
  // a question about a journal this boot may no longer hold). The answer must outlive the boot it
  // was for: a primary's answer waits in its outbox while its own superblock write of the view is
  // in flight, and the prober restarts meanwhile. The fault mix's superblock latency (at most a
  // few ticks) is far shorter than a kill-and-restart, and a crash clears the network's frames,
  // so it does not get here; a hung superblock write on the new primary would.
  it('start_view_previous_incarnation: a withheld probe answer released after the prober restarted is ignored', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 500);
    // Replica 0 (view 0's primary) journals op 4 alone, then hears view 1's election but nobody
    // hears from it: views 1's log, merged by replicas 1 and 2, ends at op 3.
    const silence0 = (m: { from: number; to: number; command: number }): boolean => m.from === 0 || (m.to === 0 && m.command === Command.StartView);
    cluster.filters.push(silence0);
    cluster.request(0, { client: 1n, request: 3n, session: epoch, body: text.encode('k3=v3') });
    const node1 = cluster.nodes[1];
    if (node1 === undefined) throw new Error('no node 1');
    node1.superblockMode = 'stall';
    const c1 = (): Core => core(cluster, 1);
    // Replica 1's superblock writes complete until it starts view 1; that one hangs.
    cluster.runUntil(() => {
      if (c1().status === 'normal' && c1().view === 1) return true;
      cluster.release(1, 'superblock');
      return false;
    }, 3000);
    expect(c1().viewDurable()).toBe(false);
    expect([core(cluster, 0).view, core(cluster, 0).op, c1().op]).toEqual([1, 4, 3]);
    // Replica 0 restarts (boot A) and probes; replica 1's answer to boot A waits in its outbox.
    cluster.filters.length = 0;
    cluster.crash(0);
    cluster.restart(0);
    const bootA = core(cluster, 0).plane.incarnation;
    const answerToA = (): boolean => c1().outbox.some((p) => p.command === Command.StartView && p.to === 0 && startViewView.bind(p.frame, 0).incarnation === bootA);
    cluster.runUntil(answerToA, 1000);
    // Replica 0 restarts again (boot B) before replica 1's superblock write completes.
    cluster.crash(0);
    cluster.restart(0);
    const r0 = replica(cluster, 0);
    expect(r0.role.status).toBe('recovering');
    expect(core(cluster, 0).plane.incarnation).not.toBe(bootA);
    const drops: string[] = [];
    cluster.filters.push((m) => {
      if (m.to === 0 && m.command === Command.StartView) drops.push(startViewView.bind(m.frame, 0).incarnation === bootA ? 'to A' : 'other');
      return false;
    });
    cluster.release(1, 'superblock');
    cluster.run(3);
    expect(drops[0]).toBe('to A');
    expect(r0.marks()[Mark.StartViewPreviousIncarnation]).toBe(1);
    // Boot B's own probe is answered: it adopts view 1 (dropping op 4, never committed).
    node1.superblockMode = 'sync';
    cluster.release(1, 'superblock');
    cluster.runUntil(() => r0.role.status === 'normal', 1000);
    expect([r0.role.view, r0.role.op]).toEqual([1, 3]);
  });

  // The outbox (send.ts) is bounded: 4 × pipeline depth × n + 8 × n withheld sends; past that its
  // oldest is dropped (the protocol retransmits). A backup whose journal writes hang acks nothing,
  // while the primary retransmits every prepare that lacks a quorum and each copy re-queues a
  // forward and a PrepareOk. The fault mix's disk latency (a few ticks) never holds writes that
  // long, and its workloads are too light to fill the bound behind one slow disk
  // (packages/simulator fault-mix.test.ts reaches it with a hung disk under a burst workload).
  it('outbox_overflow: backups with hung journal writes drop their oldest withheld sends, then catch up', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    cluster.run(5);
    const backups = [cluster.nodes[1], cluster.nodes[2]].filter((n) => n !== undefined);
    for (const node of backups) node.journalMode = 'stall';
    for (let i = 1; i <= 40; i++) cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`o${i}`) });
    const r1 = replica(cluster, 1);
    const cap = 4 * core(cluster, 1).config.prepareQueueDepth * 3 + 8 * 3;
    cluster.runUntil(() => r1.marks()[Mark.OutboxOverflow] > 0, 20_000);
    expect(core(cluster, 1).outbox.length).toBe(cap);
    expect(replica(cluster, 0).role.commitMax).toBe(0); // nothing is acked while the journals hang
    for (const node of backups) {
      node.journalMode = 'sync';
      cluster.release(node.index, 'journal');
    }
    cluster.runUntil(() => cluster.converged(40), 20_000);
    for (const i of [0, 1, 2]) replica(cluster, i).invariants();
  });
});
