/**
 * Acknowledged means it survives kill -9 of every node (issue 12 item 4). A 3-node cluster of
 * real processes takes a burst of acknowledged sends with the default fsync policy (nothing
 * forces an fdatasync: far fewer messages than `messages_required_to_save`), then all three
 * processes are SIGKILLed at once and restarted on their data directories. Every acknowledged
 * message must then be readable on EVERY node, at the offset its acknowledgement gave, exactly
 * once, and the cluster must take writes again.
 *
 * Before the partition journal (a prepare lived in memory until its commit reached the segments,
 * and a restart cut unsynced segment bytes back to the last recorded frontier) every node lost
 * the whole burst.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendAcked, sendTagged } from './support/produce.js';

const STREAM = 'ka';
const TOPIC = 'burst';
const PARTITIONS = 3;

describe('cluster: kill -9 of every node right after a burst of acknowledged sends', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('every acknowledged message is on every node after they restart', async () => {
    const client = cluster.client({
      requestTimeoutMs: 5_000,
      cluster: { retry: { retryUncertainWrites: false, budgetMs: 30_000, attemptsMax: 100 } },
    });
    await client.stream.create({ name: STREAM });
    await client.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    const log = newLog();
    // Three concurrent producers, 10-message batches, all acknowledged before the kill.
    await Promise.all([0, 1, 2].map(async (lane) => {
      for (let i = 0; i < 20; i++) await sendAcked(client, log, STREAM, TOPIC, (lane + i) % PARTITIONS, `l${lane}-s${i}`, 10);
    }));
    expect(log.acked.length).toBe(600);

    await Promise.all([0, 1, 2].map((id) => cluster.node(id).stop('SIGKILL')));
    await Promise.all([0, 1, 2].map((id) => cluster.startNode(id)));
    await cluster.leader({ timeoutMs: 60_000 });

    for (const id of [0, 1, 2]) {
      const reader = cluster.nodeClient(id);
      for (let p = 0; p < PARTITIONS; p++) {
        const want = log.acked.filter((a) => a.partition === p).length;
        await waitFor(`node ${id} partition ${p} holds its ${want} acknowledged messages`, async () => {
          const got = await readPartition(reader, STREAM, TOPIC, p);
          return checkPartition(got, p, log).length === 0;
        }, 60_000, 250);
        expect(checkPartition(await readPartition(reader, STREAM, TOPIC, p), p, log), `node ${id} partition ${p}`).toEqual([]);
      }
    }

    // And the offsets continue after the restart: a new batch on each partition lands next.
    const after = cluster.client({ requestTimeoutMs: 5_000, cluster: { retry: { budgetMs: 30_000, attemptsMax: 100 } } });
    for (let p = 0; p < PARTITIONS; p++) {
      const ok = await sendTagged(after, log, STREAM, TOPIC, p, `after-${p}`, 1);
      expect(ok, log.errors.at(-1)).toBe(true);
    }
    const reader = cluster.nodeClient(0);
    for (let p = 0; p < PARTITIONS; p++) {
      await waitFor(`node 0 partition ${p} has the write after the restart`, async () => checkPartition(await readPartition(reader, STREAM, TOPIC, p), p, log).length === 0, 30_000, 250);
    }
  }, 240_000);
});
