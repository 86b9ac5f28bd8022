/**
 * View change scenarios (§5). Each test is a script: what happens, and why the outcome follows
 * from the protocol.
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '@shoal/consensus/testing';
import { Cluster, text } from './support/cluster.js';
import { login, puts } from './support/script.js';
import { doViewChange, startViewChange } from './support/craft.js';

describe('view change', () => {
  it('primary crashes mid-pipeline: the prepared op survives', () => {
    // Three replicas; primary 0. A client is logged in (op 1).
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 5n);
    // Backup 2 stops receiving anything, so only replica 1 acks new prepares.
    cluster.filters.push((m) => m.to === 2);
    // The client sends op 2; primary 0 prepares it and replica 1 journals it and acks it.
    cluster.request(0, { client: 5n, request: 1n, session: epoch, body: text.encode('a=1') });
    // Let the prepare reach 1 but crash 0 before its PrepareOk comes back: op 2 is prepared on
    // {0, 1} and possibly committed nowhere yet.
    cluster.run(1);
    expect(cluster.nodes[1]?.r.status.op).toBe(2);
    cluster.crash(0);
    cluster.heal();
    // Backups 1 and 2 time out on the heartbeat and elect view 1, whose primary is 1. Op 2 is in
    // replica 1's DoViewChange suffix (present); replica 2's log ends at op 1 (one nack), which is
    // below the nack quorum (2), so the merge keeps op 2.
    cluster.runUntil(() => cluster.primary() === 1, 2000);
    cluster.runUntil(() => cluster.converged(2), 500);
    expect(cluster.nodes[1]?.r.status.view).toBe(1);
    expect(cluster.nodes[2]?.r.status.commitMin).toBe(2);
  });

  it('two view changes in a row: view 1 primary is down too, view 2 takes over', () => {
    // Five replicas; primaries 0 (view 0) and 1 (view 1) both crash.
    const cluster = new Cluster({ replicas: 5 });
    const epoch = login(cluster, 0, 9n);
    cluster.request(0, { client: 9n, request: 1n, session: epoch, body: text.encode('x=1') });
    cluster.runUntil(() => cluster.converged(2), 200);
    cluster.crash(0);
    cluster.crash(1);
    // The survivors elect view 1, but its primary (1) is down: no DoViewChange quorum reaches
    // it, so the ViewChangeStatus timer escalates to view 2, whose primary 2 is alive.
    cluster.runUntil(() => cluster.primary() === 2, 4000);
    expect(cluster.nodes[2]?.r.status.view).toBe(2);
    // The log is intact and the new primary serves the same client session.
    cluster.request(2, { client: 9n, request: 2n, session: epoch, body: text.encode('x=2') });
    cluster.runUntil(() => cluster.live().every((n) => n.r.status.commitMin >= 3), 500);
  });

  it('partition of the primary: the old primary learns the new view and drops its orphan ops', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 3n);
    cluster.runUntil(() => cluster.converged(1), 100);
    // Primary 0 is cut off. A request reaches it anyway: op 2 is prepared on 0 only.
    cluster.isolate(0);
    cluster.request(0, { client: 3n, request: 1n, session: epoch, body: text.encode('lost=1') });
    cluster.run(5);
    expect(cluster.nodes[0]?.r.status.op).toBe(2);
    // Replicas 1 and 2 elect view 1 and commit a different op 2 (and more).
    cluster.runUntil(() => cluster.primary() === 1, 2000);
    const login2 = login(cluster, 1, 4n);
    cluster.request(1, { client: 4n, request: 1n, session: login2, body: text.encode('kept=1') });
    cluster.runUntil(() => (cluster.nodes[1]?.r.status.commitMin ?? 0) >= 3, 500);
    // Heal. The stale primary 0 hears view 1 (Commit heartbeats), probes, adopts the StartView,
    // and must never apply its orphan op 2: its entry does not chain to the new log, so the
    // trust walk discards it and repairs the canonical op 2.
    cluster.heal();
    cluster.runUntil(() => cluster.converged(3), 3000);
    const orphanChecksum = cluster.nodes[0]?.applied.get(2);
    expect(orphanChecksum).toBe(cluster.committed.get(2));
    expect(cluster.nodes[0]?.r.status.view).toBe(1);
  });

  it('DoViewChange nack bits force truncation of an op only the crashed primary and one backup held', () => {
    // Five replicas: replication 3, view-change 3, nack quorum 3.
    const cluster = new Cluster({ replicas: 5 });
    const epoch = login(cluster, 0, 2n);
    cluster.runUntil(() => cluster.converged(1), 200);
    // Op 2 reaches only replica 2 (the chain hop 0 → 1 is cut; the primary's direct retransmit
    // reaches 2 alone): prepared on {0, 2}, never committed (that needed three replicas).
    cluster.filters.push((m) => m.command === 6 && m.to !== 2);
    cluster.request(0, { client: 2n, request: 1n, session: epoch, body: text.encode('orphan=1') });
    cluster.runUntil(() => cluster.nodes[2]?.r.status.op === 2, 200);
    // Primary 0 crashes; replicas 3 and 4 are down too and this script plays their part.
    for (const i of [0, 3, 4]) cluster.crash(i);
    cluster.heal();
    // Replica 2's vote is slow to reach the candidate of view 1 (replica 1).
    cluster.filters.push((m) => m.command === 11 && m.from === 2 && m.to === 1);
    const node1 = cluster.nodes[1]!.r;
    const op1 = node1.journalFrame(1)!.subarray(0, 256);
    // StartViewChange(1) from 3 and 4: the candidate has f = 2 others and votes (records its own
    // DoViewChange: op 1).
    node1.onMessage(startViewChange(1, 3));
    node1.onMessage(startViewChange(1, 4));
    cluster.process(cluster.nodes[1]!);
    // DoViewChanges from 3 and 4: log_view 0, op 2, commit 1; entry 0 (op 2) is a blank with its
    // nack bit set ("I never prepared op 2"), entry 1 (op 1) the committed header.
    for (const r of [3, 4]) {
      node1.onMessage(doViewChange(1, r, 0, 2, 1, [
        { header: null, op: 2n, nack: true },
        { header: op1.slice(), op: 1n, present: true },
      ]));
      cluster.process(cluster.nodes[1]!);
    }
    // Merge over {1, 3, 4}: op 2 has no canonical copy and three nacks (1 implicitly, its log ends
    // at op 1; 3 and 4 explicitly) = the nack quorum: op 2 was provably never committed, so the
    // new log ends at op 1. The candidate starts view 1.
    cluster.run(2);
    expect(node1.status.view).toBe(1);
    expect(node1.status.status).toBe('normal');
    expect(node1.status.op).toBe(1);
    // Replica 2 adopts the StartView (head op 1) and truncates its orphan op 2.
    cluster.runUntil(() => cluster.nodes[2]?.r.status.view === 1 && cluster.nodes[2]?.r.status.status === 'normal', 500);
    expect(cluster.nodes[2]?.r.status.op).toBe(1);
    expect(cluster.trace.some((l) => / n2 journal_truncated: reconcile from 2/.test(l))).toBe(true);
  });

  it('a view change with delayed storage completions still converges (completions many ticks later)', () => {
    const cluster = new Cluster({ replicas: 3, storage: 7 });
    for (const node of cluster.nodes) node.superblockMode = 5;
    const epoch = login(cluster, 0, 5n);
    cluster.request(0, { client: 5n, request: 1n, session: epoch, body: text.encode('a=1') });
    cluster.runUntil(() => cluster.converged(2), 500);
    cluster.crash(0);
    cluster.runUntil(() => cluster.primary() === 1, 3000);
    cluster.request(1, { client: 5n, request: 2n, session: epoch, body: text.encode('a=2') });
    cluster.runUntil(() => cluster.live().every((n) => n.r.status.commitMin >= 3), 1000);
    // The crashed primary restarts from what it durably wrote and rejoins.
    cluster.restart(0);
    cluster.runUntil(() => cluster.converged(3), 3000);
  });

  // Regression (found by the VOPR, 2-replica seeds): a replica restarts with an uncommitted WAL
  // tail (op 4, journaled only by it), which arms the recovery barrier at op 4. The view change
  // truncates op 4. When this replica later leads a view whose log ends at op 3, the barrier must
  // not wait for an op that no longer exists: it is capped to the installed log's head.
  it('a recovery barrier above a truncated tail does not block a later primary forever', () => {
    const cluster = new Cluster({ replicas: 2 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 200);
    // Op 4 reaches only replica 0's WAL.
    cluster.filters.push((m) => m.from === 0 && m.to === 1 && m.command === 6);
    cluster.request(0, { client: 1n, request: 3n, session: epoch, body: text.encode('k3=v3') });
    cluster.run(5);
    expect(cluster.nodes[0]?.r.status.op).toBe(4);
    cluster.crash(0);
    cluster.filters.length = 0;
    cluster.restart(0);
    expect(coreOf(cluster.nodes[0]!.r).recoveryBarrier).toBe(4);
    // Replica 1 leads view 1 (the merge drops op 4), then restarts: replica 0 leads view 2.
    cluster.runUntil(() => cluster.primary() === 1, 5000);
    cluster.crash(1);
    cluster.restart(1);
    cluster.runUntil(() => cluster.primary() === 0 && cluster.nodes[1]?.r.status.status === 'normal', 5000);
    expect(cluster.nodes[0]?.r.status.op).toBe(3);
    const { token } = cluster.request(0, { client: 1n, request: 3n, session: epoch, body: text.encode('k3=v3') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0 && cluster.converged(4), 2000);
  });

});

import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
function batch(payload: string): Uint8Array {
  return fakeBatch(payload);
}
