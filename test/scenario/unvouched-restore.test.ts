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
