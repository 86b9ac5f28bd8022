/**
 * A 3-node cluster of real processes, produced to through the SDK while the primary is killed
 * with SIGKILL:
 * - every acknowledged message is later readable exactly once, at the offset its acknowledgement
 *   gave, on EVERY surviving replica (each read locally from that node);
 * - another node becomes the metadata primary and takes the writes, its view change started by
 *   the dropped link to the dead primary (not the heartbeat timeout);
 * - the killed node restarts from its data directory and catches up by journal repair: it ends
 *   with the same messages at the same offsets, with no state transfer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricSum } from './support/server.js';
import { TestCluster, sleep, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendTagged, sendAcked } from './support/produce.js';

const STREAM = 'fo';
const TOPIC = 'events';
const PARTITIONS = 3;

describe('cluster: SIGKILL of the primary while producing', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('keeps every acknowledged message exactly once on every survivor; the restarted node catches up', async () => {
    const client = cluster.client({
      requestTimeoutMs: 5_000,
      cluster: { retry: { retryUncertainWrites: false, budgetMs: 30_000, attemptsMax: 100 } },
    });
    await client.stream.create({ name: STREAM });
    await client.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    const primary = await cluster.leader();
    const log = newLog();

    // Two producers, 10-message batches round robin over the partitions; SIGKILL after 30 sends.
    let killedAt = -1;
    let ackedBeforeKill = 0;
    const producer = async (lane: number): Promise<void> => {
      for (let i = 0; killedAt < 0 || log.acked.length < ackedBeforeKill + 300; i++) {
        await sendTagged(client, log, STREAM, TOPIC, (lane + i) % PARTITIONS, `l${lane}-s${i}`, 10);
        if (killedAt < 0 && log.sends >= 30) {
          killedAt = Date.now();
          ackedBeforeKill = log.acked.length;
          await cluster.node(primary).stop('SIGKILL');
        }
        if (killedAt > 0 && Date.now() - killedAt > 40_000) throw new Error(`no progress after the kill: ${log.acked.length - ackedBeforeKill} acked`);
      }
    };
    await Promise.all([producer(0), producer(1)]);
    expect(ackedBeforeKill).toBeGreaterThan(0);
    expect(log.acked.length - ackedBeforeKill).toBeGreaterThanOrEqual(300);

    const survivors = [0, 1, 2].filter((id) => id !== primary);
    const next = await cluster.leader({ among: survivors, not: primary });
    expect(survivors).toContain(next);
    // The survivors learned of the death from the dropped replica links (a killed process closes
    // its sockets), not from the 5 s heartbeat timeout: the metadata group's view change was
    // started by the primary-unreachable hint on at least one of them (docs/cluster.md "Failover time").
    const hints = await Promise.all(survivors.map(async (id) => metricSum(await cluster.metrics(id), 'shoal_consensus_events_total', { plane: 'metadata', event: 'primary_unreachable' })));
    expect(hints.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);

    for (const id of survivors) {
      const reader = cluster.nodeClient(id);
      for (let p = 0; p < PARTITIONS; p++) {
        expect(checkPartition(await readPartition(reader, STREAM, TOPIC, p), p, log), `node ${id} partition ${p}`).toEqual([]);
      }
    }

    // The killed node restarts on its own data and catches up by repair (no state transfer).
    await cluster.startNode(primary);
    const restarted = cluster.nodeClient(primary);
    const reference = cluster.nodeClient(survivors[0] as number);
    for (let p = 0; p < PARTITIONS; p++) {
      const want = await readPartition(reference, STREAM, TOPIC, p);
      await waitFor(`node ${primary} partition ${p} caught up`, async () => {
        const got = await readPartition(restarted, STREAM, TOPIC, p);
        return got.size === want.size && [...want].every(([offset, payload]) => got.get(offset) === payload);
      }, 30_000, 250);
      expect(checkPartition(await readPartition(restarted, STREAM, TOPIC, p), p, log)).toEqual([]);
    }
    const metrics = await cluster.metrics(primary);
    expect(metricSum(metrics, 'shoal_consensus_events_total', { event: 'state_transfer_installed' })).toBe(0);
    // It serves writes again as part of the cluster.
    await sleep(100);
    await sendAcked(client, log, STREAM, TOPIC, 0, 'after-restart', 5);
  }, 180_000);
});
