/**
 * Writes resume after a SIGTERM restart of a partition primary under write load (the soak's write
 * stall). A 3-node cluster takes writes to every partition; the node that leads the metadata
 * group (and partitions) is SIGTERMed and restarted at once, with client logins (Register ops)
 * committed just before. Afterwards every partition must take writes again, through the cluster
 * client and through the restarted node, which forwards to the partitions' new primaries.
 *
 * Before the fix, a shard's metadata copy advanced only on ops the state machine applies, never
 * on a Register (the core's client table takes it). The restarted node's copy, seeded from a
 * snapshot at its commit point, counted the Registers; the new primary's copy, fed op by op, did
 * not. A forwarded request carries the forwarder's applied op as a fence, so the primary held
 * every write the restarted node forwarded (5 s, then 57) until some other metadata op came:
 * in the soak, until the next fault.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShoalClient } from '@shoal/client';
import { TestCluster, sleep, waitFor } from './support/cluster.js';

const STREAM = 'restart';
const TOPIC = 'writes';
const PARTITIONS = 3;

async function send(client: ShoalClient, partition: number, tag: string): Promise<boolean> {
  try {
    await client.sendMessages({ streamId: STREAM, topicId: TOPIC, partitioning: { partitionId: partition }, messages: [{ payload: tag }] });
    return true;
  } catch {
    return false;
  }
}

describe('cluster: writes after a SIGTERM restart of a partition primary', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('every partition acknowledges writes again, directly and forwarded by the restarted node', async () => {
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: STREAM });
    await admin.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    const acked = Array.from({ length: PARTITIONS }, () => 0);
    let running = true;
    const producer = cluster.client({ requestTimeoutMs: 5_000 });
    const load = (async () => {
      for (let i = 0; running; i++) {
        const p = i % PARTITIONS;
        if (await send(producer, p, `load-${i}`)) acked[p] = (acked[p] as number) + 1;
        else await sleep(50);
      }
    })();
    await waitFor('every partition takes writes', () => acked.every((n) => n >= 5), 30_000, 50);

    const victim = await cluster.leader();
    const led = (await cluster.view(victim)).groups?.topics.find((t) => t.topicName === TOPIC)?.partitions
      .filter((p) => p.primary === victim).map((p) => p.partitionId) ?? [];
    expect(led.length).toBeGreaterThan(0);
    // Sessions registered after the last catalog op, and still open at the restart.
    const sessions = [0, 1, 2].filter((id) => id !== victim).map((id) => cluster.nodeClient(id));
    for (const session of sessions) await session.stream.list();

    const exit = await cluster.node(victim).stop('SIGTERM');
    expect(exit.code).toBe(0);
    await cluster.startNode(victim);
    const since = [...acked];
    // Through the restarted node: it forwards to whichever node leads each partition now.
    const through = cluster.nodeClient(victim, { requestTimeoutMs: 10_000 });
    for (let p = 0; p < PARTITIONS; p++) {
      let round = 0;
      await waitFor(`partition ${p} acknowledges a write sent through the restarted node`, () => send(through, p, `via-${p}-${round++}`), 60_000, 100);
    }
    await waitFor('the producer\'s writes are acknowledged on every partition again',
      () => acked.every((n, p) => n >= (since[p] as number) + 5), 60_000, 100);
    running = false;
    await load;
    for (const session of sessions) await session.destroy();
    await through.destroy();
    await producer.destroy();
    await admin.destroy();
  }, 240_000);
});
