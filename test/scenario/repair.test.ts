/**
 * Journal repair and rejoin scenarios (§6.1, §6.2, §5.9, §5.10).
 */
import { describe, expect, it } from 'vitest';
import { Cluster } from './support/cluster.js';
import { login, puts } from './support/script.js';

describe('repair', () => {
  it('a backup lagging beyond the pipeline catches up by journal repair', () => {
    // Pipeline depth 4; backup 2 misses 20 ops (far more than the pipeline holds).
    const cluster = new Cluster({ replicas: 3, config: { prepareQueueDepth: 4 } });
    const epoch = login(cluster, 0, 1n);
    cluster.filters.push((m) => m.to === 2);
    puts(cluster, 0, 1n, epoch, 1n, 20);
    expect(cluster.nodes[0]?.r.status.commitMin).toBe(21);
    expect(cluster.nodes[2]?.r.status.commitMin).toBeLessThanOrEqual(1);
    // Backup 2 hears again. Live prepares above its head are dropped (no buffering, gap check);
    // the next Commit heartbeat raises its commit_max to 21 and it asks the primary for 2..21
    // (RequestPrepares), ingests the RepairPrepares, walks its commits.
    cluster.heal();
    let repairRequests = 0;
    cluster.filters.push((m) => {
      if (m.command === 18 && m.from === 2) repairRequests++;
      return false;
    });
    cluster.runUntil(() => cluster.converged(21), 1000);
    expect(repairRequests).toBeGreaterThan(0);
  });

  it('repair is paced by repair_chunk_max and completes over several rounds', () => {
    const cluster = new Cluster({ replicas: 3, config: { repairChunkMax: 3 } });
    const epoch = login(cluster, 0, 1n);
    cluster.filters.push((m) => m.to === 1);
    puts(cluster, 0, 1n, epoch, 1n, 10);
    let repairRequests = 0;
    cluster.heal();
    cluster.filters.push((m) => {
      if (m.command === 18 && m.from === 1) repairRequests++;
      return false;
    });
    cluster.runUntil(() => cluster.converged(11), 1000);
    expect(repairRequests).toBeGreaterThanOrEqual(3); // 10 ops in chunks of at most 3
  });

  it('a metadata replica restarts and rejoins: probe, StartView, refused transfer, journal repair', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 3);
    cluster.runUntil(() => cluster.converged(4), 200);
    // Backup 2 crashes; its WAL (durable) keeps ops 1..4. The cluster goes on without it.
    cluster.crash(2);
    puts(cluster, 0, 1n, epoch, 4n, 3);
    cluster.runUntil(() => (cluster.nodes[0]?.r.status.commitMin ?? 0) >= 7, 200);
    // On restart it replays its WAL (ops 1..4 are confirmed by later commit fields or its own
    // head), boots ceded and probing (RequestStartView with a fresh incarnation), adopts the
    // primary's StartView, asks for a state transfer (every metadata restart does), is refused
    // (the primary never checkpointed) and falls back to journal repair of 5..7.
    cluster.restart(2);
    expect(cluster.nodes[2]?.r.status.status).toBe('recovering');
    cluster.runUntil(() => cluster.converged(7), 2000);
    expect(cluster.trace.some((l) => / n2 state_transfer: abandoned/.test(l))).toBe(true);
  });

  it('a partition replica that lost its in-memory journal rejoins without voting on what it lost', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 5; i++) {
      cluster.request(0, { client: 1n, request: BigInt(i), body: batch(`m${i}`) });
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(5), 200);
    // Replica 2 restarts: its partition journal was memory only; its flushed state says op 5.
    cluster.crash(2);
    cluster.request(0, { client: 1n, request: 6n, body: batch('m6') });
    cluster.runUntil(() => (cluster.nodes[0]?.r.status.commitMin ?? 0) >= 6, 200);
    cluster.restart(2);
    // It may have acked ops it no longer holds, so until it has caught up to the view head it
    // abstains from DoViewChange (its empty log would nack committed ops by omission).
    expect(cluster.nodes[2]?.r.role.journalIncomplete).toBe(true);
    cluster.runUntil(() => cluster.converged(6), 2000);
    cluster.runUntil(() => cluster.nodes[2]?.r.role.journalIncomplete === false, 500);
    // The partition offsets continue contiguously after the rejoin.
    cluster.request(0, { client: 1n, request: 7n, body: batch('m7') });
    cluster.runUntil(() => cluster.converged(7), 500);
    const log = (cluster.nodes[2]?.sm as { log: { base: number }[] }).log;
    expect(log.map((b) => b.base)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  // Regression (found by the VOPR, seed 14 with 5 replicas): a backup holds a repaired op above a
  // hole (repair delivered ops 3 and 4 but not op 2); the live prepare for the hole's op arrives
  // late. It appends at op + 1 and must advance the sequencer over the contiguous journaled run,
  // or the commit walk applies past `op` (assertion "commit_min above op").
  it('a late live prepare that fills a hole below repaired ops advances the sequencer over them', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    const opOf = (frame: Uint8Array): bigint => new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(176, true);
    let late: { from: number; frame: Uint8Array } | null = null;
    const live = (m: { from: number; to: number; command: number; frame: Uint8Array }): boolean => {
      // Replica 2 must not learn the commit point yet (the primary announces it when its
      // pipeline drains), or it would repair everything before the hole is set up.
      if (m.to === 2 && m.command === 9) return true;
      if (m.to !== 2 || m.command !== 6 || opOf(m.frame) < 2n) return false;
      if (opOf(m.frame) === 2n && late === null) late = { from: m.from, frame: m.frame.slice() };
      return true;
    };
    cluster.filters.push(live);
    puts(cluster, 0, 1n, epoch, 1n, 3);
    cluster.runUntil(() => (cluster.nodes[0]?.r.status.commitMin ?? 0) >= 4, 500);
    // Repair reaches replica 2, except op 2.
    cluster.filters.splice(cluster.filters.indexOf(live), 1);
    cluster.filters.push((m) => m.to === 2 && (m.command === 6 || (m.command === 19 && opOf(m.frame) === 2n)));
    cluster.runUntil(() => cluster.nodes[2]?.r.status.journalOps.includes(4) === true, 2000);
    const before = cluster.nodes[2]?.r.status;
    expect(before?.op).toBe(1);
    expect(before?.journalOps).not.toContain(2);
    // The late live prepare for op 2 fills the hole.
    expect(late).not.toBeNull();
    const held = late as unknown as { from: number; frame: Uint8Array };
    cluster.deliver({ seq: 0, from: held.from, to: 2, frame: held.frame, due: 0 });
    const after = cluster.nodes[2]?.r.status;
    expect(after?.op).toBe(4);
    expect(after?.commitMin).toBeLessThanOrEqual(after?.op ?? 0);
    cluster.filters.length = 0;
    cluster.runUntil(() => cluster.converged(4), 2000);
  });

  // Regression (found by the VOPR, 2-replica seeds): the restarted PRIMARY of a 2-replica
  // partition group lost committed ops its flushed state does not reflect (its journal is memory
  // only). It must take part in the election (n = 2 needs both votes), but its short log would nack
  // the other's committed ops by omission: the merge then deadlocks (nack quorum is 1 at n = 2)
  // or, were they not yet known committed, truncates ops it may itself have acked. Once it votes
  // with an incomplete journal, its DoViewChange says nothing (no nack) about ops above its floor.
  it('a restarted 2-replica partition primary that lost committed ops rejoins without a deadlock', () => {
    const cluster = new Cluster({ replicas: 2, plane: 'partition' });
    for (let i = 1; i <= 3; i++) {
      cluster.request(0, { client: 1n, request: BigInt(i), body: batch(`m${i}`) });
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(3), 200);
    const flushedAt3 = cluster.nodes[0]?.durable.flushed ?? null;
    for (let i = 4; i <= 5; i++) {
      cluster.request(0, { client: 1n, request: BigInt(i), body: batch(`m${i}`) });
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(5), 200);
    // Replica 0 (the primary of view 0) crashes; its flushed state had only reached op 3.
    cluster.crash(0);
    (cluster.nodes[0] as { durable: { flushed: unknown } }).durable.flushed = flushedAt3;
    cluster.restart(0);
    cluster.runUntil(() => cluster.converged(5), 5000);
    cluster.request(cluster.primary() ?? 0, { client: 1n, request: 6n, body: batch('m6') });
    cluster.runUntil(() => cluster.converged(6), 2000);
    const log = (cluster.nodes[0]?.sm as { log: { base: number }[] }).log;
    expect(log.map((b) => b.base)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
function batch(payload: string): Uint8Array {
  return fakeBatch(payload);
}
