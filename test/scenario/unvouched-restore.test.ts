/**
 * A crash between a new view's first journal write and the superblock write that makes the view
 * durable (seed 1057611 of 5, the metadata group). The core journals a new primary's proposals in
 * the entry point that starts the view and asks for the superblock at its end, so the journal can
 * hold a view-1 prepare while the superblock still names log view 0. Nothing vouched for that
 * entry (every send waits for the durable view), but before the fix the restarted replica kept it
 * and its DoViewChange showed it as part of the view-0 log. In the seed that was a view-5 op 71
 * under view-4 ops 72 and 73 another replica held, whose parent was view 4's op 71: no replica
 * had that one, the chain never closed and the group stayed in view change for good (the seed is
 * pinned in packages/simulator/test/seeds-5.test.ts). Here: the entry and its copy on disk are
 * gone after the restart (both kept on c51cc79^), and the group goes on. Only the replica's own
 * proposals are dropped: the second case is what dropping by view stamp alone lost.
 */
import { describe, expect, it } from 'vitest';
import { Command, PrepareHeaderView } from '@shoal/protocol';
import { coreOf } from '@shoal/consensus/testing';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './support/cluster.js';

const prepareView = new PrepareHeaderView();

function opOf(frame: Uint8Array): number {
  return prepareView.bind(frame, 0).opNumber;
}

function write(cluster: Cluster, node: number, request: number, client = 1n): { token: number; outcome: string } {
  return cluster.request(node, { client, request: BigInt(request), body: fakeBatch(`m${client}-${request}`) });
}

/** A partition group of `replicas` in view 0 that committed ops 1 and 2 everywhere. */
function twoCommitted(replicas: number): Cluster {
  const cluster = new Cluster({ replicas, plane: 'partition' });
  for (let i = 1; i <= 2; i++) {
    write(cluster, 0, i);
    cluster.run(3);
  }
  cluster.runUntil(() => cluster.converged(2), 500);
  return cluster;
}

describe('boot drops journal entries of a view above the durable log view', () => {
  it('a view-1 prepare journaled under durable log view 0 is dropped at boot, from disk too, and the group goes on', () => {
    const cluster = twoCommitted(3);

    // View 0: the primary (0) prepares ops 3..5; replica 1 receives none of them (nor does 2,
    // which gets prepares along the chain from 1): nothing above op 2 commits.
    cluster.filters.push((m) => m.command === Command.Prepare && m.to !== 0 && opOf(m.frame) >= 3);
    for (let i = 3; i <= 5; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.run(20);
    expect(coreOf(cluster.nodes[0]!.r).journal.head).toBe(5);
    expect(cluster.commitMins()).toEqual([2, 2, 2]);

    // The view-0 primary dies for good. Replica 1 becomes view 1's primary with the log through
    // op 2; its superblock write for log view 1 never completes before it crashes.
    cluster.crash(0);
    const n1 = cluster.nodes[1]!;
    cluster.runUntil(() => {
      const sb = n1.durable.superblock;
      if (sb !== null && sb.view === 1 && sb.logView === 0) n1.superblockMode = 'stall';
      return n1.replica !== null && n1.r.status.primary && n1.r.status.view === 1 && coreOf(n1.r).logView === 1;
    }, 3_000);
    expect(n1.durable.superblock?.logView).toBe(0);
    write(cluster, 1, 1, 2n);
    const c1 = coreOf(n1.r);
    expect(c1.journal.get(3)?.view).toBe(1);
    expect(opOf(n1.durable.wal.get(3)!)).toBe(3); // the view-1 prepare reached the journal on disk
    cluster.crash(1);
    n1.superblockMode = 'sync';
    cluster.filters.length = 0;

    // Restarted: the view-1 entry is gone from the journal and from the disk.
    cluster.restart(1);
    const restarted = coreOf(n1.r);
    expect(restarted.logView).toBe(0);
    expect(restarted.journal.has(3)).toBe(false);
    expect(n1.durable.wal.has(3)).toBe(false);
    expect(n1.r.marks().restore_unvouched).toBe(1);

    // The two live replicas finish a view change and commit new writes.
    cluster.runUntil(() => cluster.primary() !== null && cluster.nodes.slice(1).every((n) => n.r.status.status === 'normal'), 4_000);
    const primary = cluster.primary() as number;
    const token = write(cluster, primary, 1, 3n).token;
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 2_000);
    const head = coreOf(cluster.nodes[primary]!.r).commitMax;
    cluster.runUntil(() => cluster.nodes.slice(1).every((n) => n.r.status.commitMin >= head), 2_000);
    expect(head).toBeGreaterThanOrEqual(3);
  });

  // helper-48's schedule against the first version of the fix, which dropped every entry whose
  // view stamp was above the durable log view. A stamp is the view of the copy's last re-send,
  // not the view that built the op: a backup that refilled an op it had acked and lost, from a
  // newer view's restamped Prepare, and crashed before that view was durable, dropped the op at
  // boot and nacked it; the merge truncated a committed op and its offsets went to another batch
  // ("SAFETY: op 3 differs"). Now only the replica's own proposals of such a view are dropped.
  it('a committed op a backup refilled from a newer view before that view was durable survives its restart', () => {
    const cluster = twoCommitted(5);

    // View 0: op 3 reaches replicas 1 and 2 only and commits with their acks; no Commit leaves
    // the primary, so nobody else learns it.
    cluster.filters.push((m) => m.command === Command.Prepare && (m.to === 3 || m.to === 4) && opOf(m.frame) >= 3);
    cluster.filters.push((m) => m.command === Command.Commit && m.from === 0);
    const acked = write(cluster, 0, 3).token;
    cluster.runUntil(() => cluster.answersFor(acked).length > 0, 200);
    const committed = cluster.committed.get(3);
    expect(committed).toBeDefined();

    // Replica 1 crashes and loses op 3 (a lost tail: faulty, as the partition journal reports it).
    cluster.crash(1);
    const n1 = cluster.nodes[1]!;
    n1.durable.wal.delete(3);
    n1.durable.faulty.add(3);
    // The old primary is cut off for good; 2, 3 and 4 elect view 2 (its primary, 2, holds op 3).
    cluster.isolate(0);
    const n2 = cluster.nodes[2]!;
    cluster.runUntil(() => n2.r.status.primary && n2.r.status.status === 'normal' && n2.r.status.view === 2 && n2.durable.superblock?.logView === 2, 3_000);

    // Replica 1 restarts and joins view 2; its superblock write for log view 2 never lands. It
    // refills op 3 from a Prepare restamped with view 2, then crashes.
    cluster.restart(1);
    n1.superblockMode = 'stall';
    cluster.runUntil(() => n1.r.status.view === 2 && n1.r.status.status === 'normal' && coreOf(n1.r).journal.has(3), 3_000);
    expect(coreOf(n1.r).journal.get(3)?.view).toBe(2);
    expect(n1.durable.superblock?.logView).toBeLessThan(2);
    cluster.crash(1);
    n1.superblockMode = 'sync';

    // Replica 2 is cut off too: 1, 3 and 4 decide the next view without it.
    cluster.isolate(2);
    cluster.restart(1);
    expect(coreOf(n1.r).journal.get(3)?.checksum).toBe(committed);
    expect(n1.r.marks().restore_unvouched).toBe(0);
    cluster.runUntil(() => {
      const p = cluster.primary();
      return p !== null && p !== 0 && p !== 2 && cluster.nodes[p]!.r.status.status === 'normal';
    }, 5_000);
    const primary = cluster.primary() as number;
    cluster.filters.length = 0;
    const next = write(cluster, primary, 1, 9n).token;
    cluster.runUntil(() => cluster.answersFor(next).length > 0, 3_000);
    expect(coreOf(cluster.nodes[primary]!.r).journal.get(3)?.checksum).toBe(committed);
  });
});

// The backup side of seed 1057611 (helper-49): a backup journals a new op of view 2 built by view
// 2's primary and crashes before its superblock names log view 2. Its copy may be the refilled
// committed op of the case above, so boot keeps it, and its DoViewChange shows it inside the
// view-0 log, beside view 0's different op 3 on another replica. With view 2's primary gone for
// good that conflict was waited on forever (merge_awaiting_repair at op 3 in every view, on the
// code before merge_stamp_resolved). A copy stamped above the canonical log view is the only op
// that can have been committed there (merge.ts `stampedAbove`): the merge takes it.
describe('the merge takes a copy stamped above the canonical log view', () => {
  it('a backup that journaled a new view-2 op before log view 2 was durable does not stall the next view', () => {
    const cluster = twoCommitted(5);

    // View 0: op 3 reaches replica 1 only (held by 0 and 1: two acks of three, not committed).
    cluster.filters.push((m) => m.command === Command.Prepare && m.to !== 1 && opOf(m.frame) >= 3);
    write(cluster, 0, 3);
    cluster.run(20);
    expect(coreOf(cluster.nodes[1]!.r).journal.has(3)).toBe(true);
    expect(cluster.committed.has(3)).toBe(false);

    // Replica 0 dies for good, replica 1 is cut off; 2, 3 and 4 elect view 2 (primary 2) with the
    // log through op 2. Replica 4 hears nothing from 2 and stays in the view change; replica 3's
    // superblock write for log view 2 never lands.
    cluster.crash(0);
    cluster.isolate(1);
    cluster.filters.push((m) => m.from === 2 && m.to === 4 && (m.command === Command.StartView || m.command === Command.Prepare || m.command === Command.Commit));
    const n2 = cluster.nodes[2]!;
    const n3 = cluster.nodes[3]!;
    cluster.runUntil(() => {
      const sb = n3.durable.superblock;
      if (sb !== null && sb.view === 2 && sb.logView === 0) n3.superblockMode = 'stall';
      return n2.r.status.primary && n2.r.status.status === 'normal' && n2.r.status.view === 2 && n2.durable.superblock?.logView === 2;
    }, 5_000);
    cluster.filters.length = 0;
    cluster.isolate(4);

    // View 2's new op 3 reaches replica 3's journal and disk (no ack: its view is not durable).
    write(cluster, 2, 1, 2n);
    cluster.runUntil(() => coreOf(n3.r).journal.has(3) && n3.durable.wal.has(3), 500);
    const stamped = coreOf(n3.r).journal.get(3)!;
    expect(stamped.view).toBe(2);
    expect(stamped.replica).toBe(2);
    expect(n3.durable.superblock?.logView).toBe(0);
    cluster.crash(3);
    n3.superblockMode = 'sync';
    cluster.crash(2); // view 2's primary dies for good

    // Replica 3 restarts under log view 0 and keeps the copy (not its own proposal).
    cluster.restart(3);
    expect(coreOf(n3.r).logView).toBe(0);
    expect(coreOf(n3.r).journal.get(3)?.checksum).toBe(stamped.checksum);
    expect(n3.r.marks().restore_unvouched).toBe(0);

    // 1, 3 and 4 decide a view, take view 2's op 3 over view 0's, and commit new writes.
    cluster.isolated.delete(1);
    cluster.isolated.delete(4);
    cluster.isolate(0);
    cluster.isolate(2);
    cluster.runUntil(() => {
      const p = cluster.primary();
      return p !== null && cluster.nodes[p]!.r.status.status === 'normal';
    }, 5_000);
    const primary = cluster.primary() as number;
    expect(cluster.nodes[primary]!.r.marks().merge_stamp_resolved).toBeGreaterThan(0);
    cluster.runUntil(() => cluster.nodes[primary]!.r.status.commitMin >= 3, 2_000); // caught up
    expect(write(cluster, primary, 1, 9n).outcome).toBe('proposed');
    cluster.runUntil(() => [1, 3, 4].every((i) => cluster.nodes[i]!.r.status.commitMin >= 4), 3_000);
    expect(cluster.committed.get(3)).toBe(stamped.checksum);
    expect(coreOf(cluster.nodes[1]!.r).journal.get(3)?.checksum).toBe(stamped.checksum);
  });
});
