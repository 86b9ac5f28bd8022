/**
 * A Commit heartbeat carries its primary's own counter (`timestamp_monotonic`, bumped per
 * heartbeat), and a backup resets its heartbeat timeout only on a counter above the last one it
 * accepted, so a reordered or duplicated Commit is not taken for a live primary. That order holds
 * within one primary's view only. A primary cut off for a while keeps heartbeating into the void,
 * and its counter runs far ahead of the next primary's (here: that primary restarted, so it counts
 * from 0). Once it rejoined as a backup it ignored every heartbeat of the healthy primary, timed
 * out and started a view change every heartbeat timeout, until the new primary's counter caught up
 * (found by a helper in a five-replica scenario: views 12 and 13 started against a healthy primary).
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '@shoal/consensus/testing';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './support/cluster.js';

const status = (cluster: Cluster, i: number) => cluster.nodes[i]!.r.status;

describe('a backup whose heartbeat counter ran ahead while it led a view cut off', () => {
  it('follows the next primary at once: no view change against a healthy primary', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 3; i++) {
      const { token } = cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
      cluster.runUntil(() => cluster.answersFor(token).length > 0, 500);
    }
    // Replica 0 leads view 0 alone for 40 heartbeat timeouts: its counter runs on (one per
    // CommitMessage timeout, 50 ticks by default), while 1 and 2 elect view 1.
    cluster.isolate(0);
    cluster.runUntil(() => [1, 2].every((i) => status(cluster, i).status === 'normal' && status(cluster, i).view >= 1), 3000);
    cluster.run(20_000);
    const cutOffCounter = coreOf(cluster.nodes[0]!.r).heartbeatTimestamp;
    // Replicas 1 and 2 restart one after the other: their counters start again from 0.
    for (const i of [1, 2]) {
      cluster.crash(i);
      cluster.restart(i);
      cluster.runUntil(() => [1, 2].every((j) => cluster.nodes[j]!.replica !== null && status(cluster, j).status === 'normal'), 5000);
    }
    cluster.runUntil(() => [1, 2].every((j) => status(cluster, j).status === 'normal' && status(cluster, j).view === status(cluster, 1).view), 5000);
    const { token } = cluster.request(cluster.primary() as number, { client: 2n, request: 1n, body: fakeBatch('n1') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 2000);
    const primary = cluster.primary() as number;
    expect(primary).not.toBe(0);
    const primaryCounter = coreOf(cluster.nodes[primary]!.r).heartbeatTimestamp;
    expect(cutOffCounter).toBeGreaterThan(primaryCounter + 20n); // the state the bug needs

    // Replica 0 rejoins (it learns the view from the primary it heartbeats at) and is a backup.
    cluster.heal();
    cluster.runUntil(() => status(cluster, 0).status === 'normal' && status(cluster, 0).view === status(cluster, primary).view, 3000);
    const view = status(cluster, primary).view;
    // Ten heartbeat timeouts (500 ticks each) of a healthy cluster: nobody leaves the view.
    for (let t = 0; t < 50; t++) {
      cluster.run(100);
      for (let i = 0; i < 3; i++) {
        expect(status(cluster, i).view, `replica ${i} at tick +${(t + 1) * 100}`).toBe(view);
        expect(status(cluster, i).status).toBe('normal');
      }
    }
  });
});
