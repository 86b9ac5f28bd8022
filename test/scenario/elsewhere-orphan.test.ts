/**
 * A primary-elect's merge raises commit_max while its log view is still an older one. Should that
 * view change fail, its next DoViewChange reports the raised commit point from the older log view,
 * and the merge takes an older log view's entry at its sender's commit point as committed
 * elsewhere (merge.ts `committedElsewhere`). So the orphan of view 0 that replica 0 holds at that
 * op must be gone by then: `tryFinishView` (start-view.ts) reconciles against the merged header
 * there, and its trust walk discards what that header contradicts (either one alone suffices
 * here: checked). Both wait while a state transfer runs, so the merge itself keeps such an entry
 * only when the header above names it (merge.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { Command } from '@shoal/protocol';
import { coreOf } from '@shoal/consensus/testing';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import type { Cluster } from './support/cluster.js';
import { viewZeroOrphans } from './support/orphans.js';

const status = (cluster: Cluster, i: number) => cluster.nodes[i]!.r.status;

describe('a primary-elect whose merge raised its commit point in an older log view', () => {
  it('holds no orphan at that commit point, and the cluster goes on', () => {
    const cluster = viewZeroOrphans(1);
    const { token } = cluster.request(1, { client: 2n, request: 7n, body: fakeBatch('n7') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 500);
    cluster.runUntil(() => [1, 2].every((i) => status(cluster, i).commitMin >= 7), 1000);
    const committed7 = cluster.committed.get(7);
    expect(committed7).toBeDefined();
    // Replica 1 goes down and replica 0 comes back, but its DoViewChange never reaches replica 2:
    // view 2 (replica 2) cannot form, view 3 (replica 0) does, with replica 2's header of op 7.
    cluster.crash(1);
    cluster.filters.push((m) => m.from === 0 && m.to === 2 && m.command === Command.DoViewChange);
    cluster.restart(0);
    const r0 = () => coreOf(cluster.nodes[0]!.r);
    expect(r0().journal.get(7)).toBeDefined();
    cluster.runUntil(() => r0().commitMax >= 7, 5000);
    // Cut off before it can repair op 7: the view change will fail with commit_max 7 in log view 0.
    cluster.isolate(0);
    expect(r0().logView).toBe(0);
    const held = r0().journal.get(7);
    expect(held === undefined || BigInt.asUintN(64, held.checksum) === committed7).toBe(true);
    cluster.run(1000);
    cluster.heal();
    cluster.restart(1);
    // (The cluster asserts on every apply that each op has one checksum: SAFETY.)
    cluster.runUntil(() => [0, 1, 2].every((i) => status(cluster, i).status === 'normal' && status(cluster, i).commitMin >= 7), 20_000);
    expect(cluster.nodes[0]!.applied.get(7) ?? committed7).toBe(committed7);
  });
});
