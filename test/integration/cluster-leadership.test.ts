/**
 * Balanced leadership (docs/cluster.md "Balanced leadership"): partition primaries are spread
 * over the nodes from the moment a topic is created (each group starts in the view its preferred
 * replica leads), every node agrees, and `shoal cluster status` shows the per-node counts. After
 * a failover the survivors lead the dead node's partitions; once it is back and caught up, each
 * is handed back to it (consensus hand-back.ts), so the spread returns without an operator.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIALS, TestCluster, waitFor } from './support/cluster.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../apps/cli/bin/shoal.js', import.meta.url));

/** node → partitions it leads, as node `id` reports them, for the topics named. */
async function leadership(cluster: TestCluster, id: number): Promise<Map<number, string[]>> {
  const view = await cluster.view(id);
  const out = new Map<number, string[]>();
  for (const topic of view.groups?.topics ?? []) {
    for (const p of topic.partitions) {
      const list = out.get(p.primary) ?? [];
      list.push(`${topic.streamName}/${topic.topicName}/${p.partitionId}`);
      out.set(p.primary, list);
    }
  }
  return out;
}

describe('cluster: balanced partition leadership', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('a topic\'s partitions are led round-robin by the nodes from creation, as every node sees it', async () => {
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: 'lead' });
    await admin.topic.create({ streamId: 'lead', name: 'three', partitionsCount: 3 });
    await admin.topic.create({ streamId: 'lead', name: 'six', partitionsCount: 6 });
    const agreed = await waitFor('every node names the same primaries', async () => {
      const views = await Promise.all([0, 1, 2].map((id) => leadership(cluster, id)));
      const keys = views.map((v) => JSON.stringify([...v].sort(([a], [b]) => a - b)));
      return keys.every((k) => k === keys[0]) && !(views[0] as Map<number, string[]>).has(0xff) ? views[0] : null;
    }, 30_000);
    expect([...agreed.keys()].sort()).toEqual([0, 1, 2]);
    for (const [node, partitions] of agreed) {
      expect(partitions.filter((p) => p.startsWith('lead/three/')), `node ${node}`).toHaveLength(1);
      expect(partitions.filter((p) => p.startsWith('lead/six/')), `node ${node}`).toHaveLength(2);
    }
    // Each partition is writable through its primary and acknowledged there.
    for (let p = 0; p < 3; p++) {
      const sent = await admin.sendMessages({ streamId: 'lead', topicId: 'three', partitioning: { partitionId: p }, messages: [{ payload: `p${p}` }] });
      expect(sent.confirmations[0]?.baseOffset).toBe(0n);
    }
  }, 60_000);

  it('`shoal cluster status` shows how many partitions each node leads', async () => {
    const { stdout } = await run(process.execPath, [CLI, '--tcp-server-address', cluster.addresses[1] as string, '--json', 'cluster', 'status'], {
      env: { ...process.env, IGGY_USERNAME: CREDENTIALS.username, IGGY_PASSWORD: CREDENTIALS.password },
    });
    const status = JSON.parse(stdout) as { nodes: { name: string; partitionPrimaries: number }[] };
    expect(status.nodes.map((n) => [n.name, n.partitionPrimaries])).toEqual([['node-0', 3], ['node-1', 3], ['node-2', 3]]);
    const { stdout: human } = await run(process.execPath, [CLI, '--tcp-server-address', cluster.addresses[0] as string, 'cluster', 'status'], {
      env: { ...process.env, IGGY_USERNAME: CREDENTIALS.username, IGGY_PASSWORD: CREDENTIALS.password },
    });
    expect(human).toContain('Partitions led');
  }, 60_000);

  it('after kill -9 of a node and its restart, its partitions are handed back to it', async () => {
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    const before = await leadership(cluster, 0);
    const victim = 1;
    const led = before.get(victim) ?? [];
    expect(led.length).toBe(3);
    await cluster.node(victim).stop('SIGKILL');
    // The survivors take its partitions over (a write to each finds its new primary).
    const write = async (round: number): Promise<void> => {
      for (const name of ['three', 'six']) {
        const count = name === 'three' ? 3 : 6;
        for (let p = 0; p < count; p++) {
          await admin.sendMessages({ streamId: 'lead', topicId: name, partitioning: { partitionId: p }, messages: [{ payload: `r${round}` }] });
        }
      }
    };
    await write(1);
    const moved = await leadership(cluster, 0);
    expect(moved.get(victim) ?? []).toEqual([]);
    await cluster.startNode(victim);
    // Writes keep flowing (a hand-back needs the returned replica's acks in the current view);
    // every group it preferred comes back to it.
    let round = 2;
    const back = await waitFor('the restarted node leads its partitions again', async () => {
      await write(round++);
      const views = await Promise.all([0, 1, 2].map((id) => leadership(cluster, id)));
      const mine = views.map((v) => (v.get(victim) ?? []).slice().sort());
      return mine.every((m) => JSON.stringify(m) === JSON.stringify(led.slice().sort())) ? mine[0] : null;
    }, 60_000);
    expect(back).toHaveLength(3);
    // Nothing was lost on the way: every partition still holds its first message at offset 0.
    const polled = await admin.pollMessages({ streamId: 'lead', topicId: 'three', partitionId: 0, consumer: 1, strategy: { offset: 0n }, count: 1 });
    expect(polled.messages[0]?.offset).toBe(0n);
  }, 150_000);
});
