/**
 * A primary-elect far behind (its body sources compacted the committed ops it lacks) hands the
 * view on at once instead of waiting out the view-change status timer (view-change docs,
 * `elect_handed_on`). Nemesis seed 4242: a restarted replica, primary-elect while the old primary
 * was isolated, stalled every write of its group for the status timer's 6 s.
 */
import { describe, expect, it } from 'vitest';
import { Mark } from '../../packages/consensus/src/index.js';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './support/cluster.js';

describe('a lagging primary-elect', () => {
  it('whose every source evicted what it lacks escalates at once; the next view\'s primary leads', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { evictedRingCapacity: 4 } });
    cluster.isolate(1); // view 1's primary-elect misses everything
    for (let i = 1; i <= 20; i++) {
      const { token } = cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
      cluster.runUntil(() => cluster.answersFor(token).length > 0, 500);
    }
    cluster.crash(0); // the primary goes; 1 comes back as the primary-elect of view 1
    cluster.heal();
    cluster.runUntil(() => cluster.nodes[2]?.r.status.primary === true, 6000);
    const r2 = cluster.nodes[2]?.r.status;
    expect(r2?.view).toBe(2);
    expect(r2?.op).toBe(20);
    expect(cluster.nodes[1]?.r.marks()[Mark.ElectHandedOn]).toBe(1);
    // View 1 ended by the hand-on, not by the status timer: no replica escalated past it by time.
    expect(cluster.trace.filter((l) => /view_change: escalate to view 2/.test(l)).length).toBe(1);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.commitMin === 20, 3000);
    expect(cluster.nodes[1]?.r.status.view).toBe(2);
  });
});
