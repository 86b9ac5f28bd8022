/**
 * Durability order (§4.14, pitfall 2): a send that vouches for a write leaves only after the write
 * is durable. The host completes writes; the core withholds the sends, never the local work.
 */
import { describe, expect, it } from 'vitest';
import { Cluster, text } from './support/cluster.js';
import { login } from './support/script.js';

describe('durable before send', () => {
  it('a stalled journal write withholds the backup PrepareOk (and the chain forward)', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    // Backup 1's disk stops completing writes.
    (cluster.nodes[1] as { journalMode: unknown }).journalMode = 'stall';
    (cluster.nodes[2] as { journalMode: unknown }).journalMode = 'stall';
    const acks: number[] = [];
    cluster.filters.push((m) => {
      if (m.command === 7) acks.push(m.from);
      return false;
    });
    cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('a=1') });
    cluster.run(20);
    // Replica 1 journaled op 2 in memory (local work) but sent no PrepareOk and did not forward
    // it to 2: op 2 cannot commit.
    expect(cluster.nodes[1]?.r.status.op).toBe(2);
    expect(acks).toEqual([]);
    expect(cluster.nodes[0]?.r.status.commitMax).toBe(1);
    // The write completes: the ack leaves, the op commits.
    cluster.release(1);
    cluster.runUntil(() => (cluster.nodes[0]?.r.status.commitMin ?? 0) >= 2, 100);
    expect(acks).toContain(1);
    cluster.release(2);
  });

  it('a failed superblock write withholds votes: no DoViewChange leaves until it succeeds', () => {
    const cluster = new Cluster({ replicas: 3 });
    login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    // Both backups' superblocks fail: they can enter view 1 locally, but may not vote in it.
    for (const i of [1, 2]) (cluster.nodes[i] as { superblockMode: unknown }).superblockMode = 'fail';
    const votes: number[] = [];
    cluster.filters.push((m) => {
      if (m.command === 10 || m.command === 11) votes.push(m.command);
      return false;
    });
    cluster.crash(0);
    cluster.run(1500);
    expect(cluster.nodes[1]?.r.status.status).toBe('view_change');
    expect(votes).toEqual([]);
    expect(cluster.primary()).toBeNull();
    // Storage heals: the retried write succeeds, the withheld StartViewChange/DoViewChange leave,
    // and a primary is elected.
    for (const i of [1, 2]) (cluster.nodes[i] as { superblockMode: unknown }).superblockMode = 'sync';
    cluster.runUntil(() => cluster.primary() !== null, 3000);
    expect(votes.length).toBeGreaterThan(0);
  });

  it('a failed journal append on the primary rolls the op back; the client retries', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    (cluster.nodes[0] as { journalMode: unknown }).journalMode = 'fail';
    cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('a=1') });
    // The append failed before anything vouched for it: sequencer, chain and pipeline roll back.
    expect(cluster.nodes[0]?.r.status.op).toBe(1);
    expect(cluster.nodes[0]?.r.status.pipelineLength).toBe(0);
    (cluster.nodes[0] as { journalMode: unknown }).journalMode = 'sync';
    const { token } = cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('a=1') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 200);
    cluster.runUntil(() => cluster.converged(2), 200);
  });

  // Simulator seed 47 of 5: a backup applied an op the primary's commit covered while its own
  // append was still in flight; the append then failed, and the rollback put its head below
  // commit_min ("commit_min 11 above op 10"). An applied op is written again instead.
  it('a failed journal append of an op the backup already applied is written again, never rolled back', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    (cluster.nodes[2] as { journalMode: unknown }).journalMode = 'stall';
    const { token } = cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('a=1') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 200);
    // Replicas 0 and 1 committed op 2; replica 2 learns it and applies it, its write still pending.
    cluster.runUntil(() => (cluster.nodes[2]?.r.status.commitMin ?? 0) >= 2, 2000);
    expect(cluster.nodes[2]?.durable.wal.has(2)).toBe(false);
    (cluster.nodes[2] as { journalMode: unknown }).journalMode = 'sync';
    cluster.failStalledJournal(2);
    expect(cluster.nodes[2]?.fatal).toBeNull();
    expect(cluster.nodes[2]?.r.status.op).toBe(2);
    expect(cluster.nodes[2]?.r.status.commitMin).toBe(2);
    expect(cluster.nodes[2]?.durable.wal.has(2)).toBe(true);
    const next = cluster.request(0, { client: 1n, request: 2n, session: epoch, body: text.encode('b=2') });
    cluster.runUntil(() => cluster.answersFor(next.token).length > 0, 200);
    cluster.runUntil(() => cluster.converged(3), 2000);
  });

  it('a superblock that stays unwritable makes the metadata core ask to exit (counted attempts)', () => {
    const cluster = new Cluster({ replicas: 3, config: { superblockWedgedAttemptsMax: 3 } });
    cluster.run(3);
    (cluster.nodes[1] as { superblockMode: unknown }).superblockMode = 'fail';
    cluster.crash(0);
    cluster.runUntil(() => cluster.nodes[1]?.fatal !== null, 3000);
    expect(cluster.nodes[1]?.fatal).toBe('superblock_wedged');
  });
});
