/**
 * State transfer scenarios (§6.3–§6.8): a replica too far behind for journal repair.
 */
import { describe, expect, it } from 'vitest';
import { Command } from '@shoal/protocol';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './support/cluster.js';
import { login, puts } from './support/script.js';


// Small journals so checkpoints (and so compaction) happen within a few dozen ops.
const SMALL = { prepareQueueDepth: 4, checkpointMargin: 4, journalSlots: 16 };

/** Backup 2 was cut off while the others ran 40 ops (and checkpointed past them); healed. */
function backupBehindCheckpoint(): { cluster: Cluster; epoch: bigint } {
  const cluster = new Cluster({ replicas: 3, config: SMALL });
  const epoch = login(cluster, 0, 1n);
  cluster.isolate(2);
  puts(cluster, 0, 1n, epoch, 1n, 40);
  cluster.heal();
  return { cluster, epoch };
}

describe('state transfer', () => {
  it('metadata: a backup behind a checkpoint rejoins by state transfer, then repairs the tail', () => {
    const cluster = new Cluster({ replicas: 3, config: SMALL });
    const epoch = login(cluster, 0, 1n);
    // Backup 2 is cut off while the others run 40 ops: they checkpoint and drain their journals,
    // so ops 2.. are no longer servable by repair.
    cluster.isolate(2);
    puts(cluster, 0, 1n, epoch, 1n, 40);
    expect(cluster.nodes[0]?.durable.snapshot).not.toBeNull();
    cluster.heal();
    // Backup 2's repair request is answered with RangeEvicted: it arms a state transfer against
    // the primary (RequestStateTransfer → StateTransferTarget with an ISM1 manifest of the
    // snapshot and the ICT2 client table → lockstep chunks → install), then repairs the ops
    // above the snapshot.
    cluster.runUntil(() => cluster.converged(41), 3000);
    expect(cluster.trace.some((l) => / n2 state_transfer: installed snapshot/.test(l))).toBe(true);
    // The installed client table knows the session: the client's next request is deduplicated
    // by every replica the same way.
    expect(cluster.nodes[2]?.r.clientSession(1n)?.watermark).toBe(40n);
  });

  it('metadata: a corrupted artifact is re-fetched with a fresh nonce (budgeted)', () => {
    const { cluster } = backupBehindCheckpoint();
    let corruptions = 2;
    cluster.corruptInstall = (node) => node === 2 && corruptions-- > 0;
    cluster.runUntil(() => cluster.converged(41), 4000);
    expect(cluster.trace.filter((l) => / n2 state_transfer: verify failure/.test(l)).length).toBe(2);
  });

  // Seeds 1047809 and 1084057 of 5: the primary's own files were damaged (a misdirected write), so
  // every offer of its snapshot failed to install; the fallback asked that same primary for journal
  // repair, whose RangeEvicted led back to the damaged transfer, for good.
  it('metadata: past the decode budget, journal repair goes to another replica; a silent one is dropped', () => {
    const { cluster, epoch } = backupBehindCheckpoint();
    cluster.corruptInstall = (node) => node === 2;
    // Replica 1 never answers replica 2: the fallback source is as good as down.
    cluster.filters.push((m) => m.from === 1 && m.to === 2);
    const abandoned = / n2 state_transfer: abandoned \([^)]*\); journal repair from (\d)/;
    cluster.runUntil(() => cluster.trace.some((l) => / n2 repair: source 1 stalled; dropped/.test(l)), 6000);
    const targets = cluster.trace.flatMap((l) => abandoned.exec(l)?.[1] ?? []);
    expect(targets.length).toBeGreaterThan(0);
    expect(new Set(targets)).toEqual(new Set(['1']));
    // Once replica 1 answers and the primary checkpoints past its damaged snapshot, replica 2 rejoins.
    cluster.heal();
    cluster.corruptInstall = null;
    puts(cluster, 0, 1n, epoch, 41n, 20);
    cluster.runUntil(() => cluster.converged(61), 6000);
    expect(cluster.nodes[2]?.r.clientSession(1n)?.watermark).toBe(60n);
  });

  it('partition: a replica whose gap was evicted from the retained window transfers segments', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { evictedRingCapacity: 4 } });
    cluster.isolate(2);
    for (let i = 1; i <= 20; i++) {
      const { token } = cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
      cluster.runUntil(() => cluster.answersFor(token).length > 0, 500);
    }
    cluster.heal();
    cluster.runUntil(() => cluster.converged(20), 3000);
    expect(cluster.trace.some((l) => / n2 state_transfer: installed/.test(l))).toBe(true);
    const log = (cluster.nodes[2]?.sm as { log: { base: number }[] }).log;
    expect(log.map((b) => b.base)).toEqual([...Array(20).keys()]);
  });
});

describe('state transfer from a primary with an undecided boot tail', () => {
  it('partition: the primary serves a backup behind its retained window before its recovery barrier is reached (the tail needs that backup\'s ack)', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { evictedRingCapacity: 4 } });
    cluster.isolate(2);
    for (let i = 1; i <= 20; i++) {
      const { token } = cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
      cluster.runUntil(() => cluster.answersFor(token).length > 0, 500);
    }
    // Op 21 is journaled on 0 and 1, but 1's ack never reaches 0: nobody knows it committed.
    cluster.filters.push((m) => m.command === Command.PrepareOk);
    cluster.request(0, { client: 1n, request: 21n, body: fakeBatch('m21') });
    cluster.runUntil(() => cluster.nodes[1]?.r.status.op === 21, 200);
    cluster.crash(0);
    cluster.crash(1); // down for good: 0 and 2 must finish alone
    cluster.heal();
    cluster.restart(0); // boots with the uncommitted tail 21: its recovery barrier
    cluster.runUntil(() => cluster.converged(21), 6000);
    expect(cluster.trace.some((l) => / n2 state_transfer: installed/.test(l))).toBe(true);
    expect(cluster.nodes[0]?.r.status.primary).toBe(true);
  });
});
