/**
 * Found by a review of deviation 28 (stop 23), failing on every earlier head back to cf65baa: an
 * orphan of an older view AT the commit point of a StartView that carries no header there (its
 * primary had no copy: a partition restart compacts the journal through the flushed op,
 * `commit_point_without_copy`). Reconcile knew no checksum at that op and kept the orphan, which
 * then sat in the newest log view as the committed op: with the StartView's primary dead, the next
 * merge took it by `canonicalAt` at its commit point and replica 0 applied it ("SAFETY: op 7
 * differs on node 0"). Now reconcile drops an unverified entry at a commit point no header names
 * (faulty: it may have been acked), and the committed op comes back by repair or state transfer
 * (start-view.ts `reconcile`, deviation 29).
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '@shoal/consensus/testing';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import type { Cluster } from './support/cluster.js';
import { viewZeroOrphans } from './support/orphans.js';

function acked(cluster: Cluster, token: number): boolean {
  return cluster.answersFor(token).length > 0;
}

describe('an orphan of an older view at the commit point of an installed StartView', () => {
  it('is never taken over the committed op there', () => {
    // flushEvery 1: every applied op is flushed, so a restarted replica's journal starts above
    // its commit point (partition: compacted at restart) and holds no copy of it.
    const cluster = viewZeroOrphans(1);
    // View 1 (replica 1) commits another op 7; both survivors apply (and flush) it.
    const { token } = cluster.request(1, { client: 2n, request: 7n, body: fakeBatch('n7') });
    cluster.runUntil(() => acked(cluster, token), 500);
    cluster.runUntil(() => [1, 2].every((i) => cluster.nodes[i]!.r.status.commitMin >= 7), 1000);
    const committed7 = cluster.committed.get(7);
    expect(committed7).toBeDefined();
    // Both survivors restart: their journals no longer hold op 7 (flushed), and they elect a new
    // primary whose StartView has commit point 7 and no header there.
    cluster.crash(1);
    cluster.crash(2);
    cluster.restart(1);
    cluster.restart(2);
    cluster.runUntil(() => {
      const p = cluster.primary();
      return p !== null && cluster.nodes[p]!.r.status.view >= 2 && cluster.nodes[p]!.r.status.status === 'normal';
    }, 5000);
    const pl = cluster.primary() as number;
    const other = pl === 1 ? 2 : 1;
    // Replica 0 comes back and installs that StartView; its orphan 7 stays in its journal.
    cluster.restart(0);
    cluster.runUntil(() => coreOf(cluster.nodes[0]!.r).logView === cluster.nodes[pl]!.r.status.view && cluster.nodes[0]!.r.status.status === 'normal', 5000);
    // The orphan is gone from its journal (before, it stayed there in the newest log view).
    const held = coreOf(cluster.nodes[0]!.r).journal.get(7);
    expect(held === undefined || BigInt.asUintN(64, held.checksum) === committed7).toBe(true);
    expect(coreOf(cluster.nodes[0]!.r).logView).toBe(cluster.nodes[pl]!.r.status.view);
    // The StartView's primary dies for good; the other two elect.
    cluster.crash(pl);
    cluster.isolate(pl);
    // (The cluster asserts on every apply that each op has one checksum: SAFETY.)
    try {
      cluster.runUntil(() => [0, other].every((i) => cluster.nodes[i]!.r.status.status === 'normal' && cluster.nodes[i]!.r.status.view > cluster.nodes[pl]!.durable.superblock!.view && cluster.nodes[i]!.r.status.commitMin >= 7), 20_000);
    } finally {
      if (process.env.DBG_SCEN) console.error(cluster.describe());
    }
    for (const i of [0, other]) expect(cluster.nodes[i]!.applied.get(7) ?? committed7).toBe(committed7);
  });
});
