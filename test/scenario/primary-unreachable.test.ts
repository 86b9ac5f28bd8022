/**
 * Fast failover (issue 12 item 9): a backup that lost its link to the primary (a dead process
 * closes its sockets) is told so by its host and starts the view change at once, instead of
 * `heartbeat_timeout` (500 ticks by default) later. The hint is only a hint: a primary and a
 * replica already changing views ignore it. The runtime's watch (engine/primary-link-watch.ts)
 * gives it only for a link that was up, dropped, and stayed down the grace, once per drop.
 */
import { describe, expect, it } from 'vitest';
import { PrimaryLinkWatch } from '../../packages/runtime/src/engine/primary-link-watch.js';
import { StatusTable } from '../../packages/runtime/src/status/status-table.js';
import { Cluster, text, type Node } from './support/cluster.js';
import { login } from './support/script.js';

/** Far below the default heartbeat timeout (500 ticks): only the hint can explain an election this fast. */
const FAST_TICKS = 100;

function statusTable(): StatusTable {
  return StatusTable.attach(StatusTable.create({ shardCount: 1, threadCount: 2, sessionSlotsPerShard: 4, partitionSlots: 4, startTimeMicros: 0n }));
}

describe('primary unreachable', () => {
  it('backups told their primary is gone elect a new one long before the heartbeat timeout', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 5n);
    cluster.runUntil(() => cluster.converged(1), 100);
    cluster.crash(0);
    // Without the hint, nothing happens for a long while: the heartbeat timer still runs.
    cluster.run(FAST_TICKS);
    expect(cluster.primary()).toBe(null);
    expect(cluster.nodes[1]?.r.status.view).toBe(0);
    for (const id of [1, 2]) {
      expect(cluster.nodes[id]?.r.primaryUnreachable()).toBe(true);
      cluster.process(cluster.nodes[id] as Node);
    }
    cluster.runUntil(() => cluster.primary() === 1, FAST_TICKS);
    // The new primary serves the session: the log survived.
    cluster.request(1, { client: 5n, request: 1n, session: epoch, body: text.encode('after=1') });
    cluster.runUntil(() => cluster.live().every((n) => n.r.status.commitMin >= 2), FAST_TICKS);
  });

  it('a primary and a replica already in a view change ignore it', () => {
    const cluster = new Cluster({ replicas: 3 });
    login(cluster, 0, 6n);
    cluster.runUntil(() => cluster.converged(1), 100);
    expect(cluster.nodes[0]?.r.primaryUnreachable()).toBe(false);
    expect(cluster.nodes[0]?.r.status.primary).toBe(true);
    expect(cluster.nodes[1]?.r.primaryUnreachable()).toBe(true);
    expect(cluster.nodes[1]?.r.status.status).toBe('view_change');
    expect(cluster.nodes[1]?.r.primaryUnreachable()).toBe(false);
    // A hint about a live primary costs a view change, never safety: the cluster converges.
    cluster.process(cluster.nodes[1] as Node);
    cluster.runUntil(() => cluster.primary() !== null && cluster.live().every((n) => n.r.status.status === 'normal'), 2_000);
  });

  it('the runtime watch hints only after a drop that outlasts the grace, once per drop', () => {
    const cluster = new Cluster({ replicas: 3 });
    login(cluster, 0, 7n);
    cluster.runUntil(() => cluster.converged(1), 100);
    const backup = cluster.nodes[1]?.r;
    if (backup === undefined) throw new Error('no backup');
    const status = statusTable();
    const watch = new PrimaryLinkWatch({ status, self: 1, replicaCount: 3, graceTicks: 5 });
    let hints = 0;
    const driver = { replica: backup, primaryUnreachable: () => { hints++; return backup.primaryUnreachable(); } };
    const ticks = (count: number): boolean[] => Array.from({ length: count }, () => {
      watch.tick();
      return watch.check(1n, driver);
    });
    // Never up: no evidence of a drop, whatever the time.
    expect(ticks(20).some(Boolean)).toBe(false);
    // Up, then a flap shorter than the grace: nothing.
    status.publishReplicaOwner(0, 0);
    ticks(3);
    status.publishReplicaOwner(0, null);
    ticks(4);
    status.publishReplicaOwner(0, 0);
    expect(ticks(10).some(Boolean)).toBe(false);
    expect(hints).toBe(0);
    // A drop that lasts: one hint, once the grace has passed; the backup is changing views.
    status.publishReplicaOwner(0, null);
    const outcomes = ticks(20);
    expect(outcomes.indexOf(true)).toBe(5); // the grace counted from the tick that saw the drop
    expect(hints).toBe(1);
    expect(backup.status.status).toBe('view_change');
  });
});
