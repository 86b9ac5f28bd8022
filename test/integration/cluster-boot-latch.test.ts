/**
 * The boot latch (docs/cluster.md "Incarnations and the boot latch"): a restarted node of a
 * multi-replica cluster opens no partition group until its metadata replica has been current
 * once since the boot (status normal, commit_min ≥ commit_max) and its shards applied that state.
 * A topic deleted and re-created while the node was away reuses its ids, hence its partition
 * groups' wire keys: run from the node's stale catalog, the old incarnation's log and view would
 * win the new incarnation's view-change merge.
 *
 * Here node 2 restarts alone (the others down): its metadata replica cannot reach a quorum, so it
 * probes, gives up and stays in view change; its partition groups must stay closed all along.
 * Once node 1 is back, the metadata group completes a view, node 2's replica becomes current, and
 * only then do its partition groups open (log order, no timing), serving what they held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShoalClient } from '@shoal/client';
import { TestCluster, waitFor } from './support/cluster.js';
import { readPartition } from './support/produce.js';

const STREAM = 'latch';
const TOPIC = 'events';
const PARTITIONS = 2;
const CURRENT = 'metadata current since boot: partition groups open';

/** Parsed records named `msg` among `lines`. */
function records(lines: readonly string[], msg: string): Record<string, unknown>[] {
  return lines.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('cluster: the boot latch', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('a restarted node keeps its partition groups closed until its metadata replica is current', async () => {
    const admin: ShoalClient = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: STREAM });
    await admin.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    for (let p = 0; p < PARTITIONS; p++) {
      await admin.sendMessages({ streamId: STREAM, topicId: TOPIC, partitioning: { partitionId: p }, messages: [{ payload: `before-${p}` }] });
    }
    await admin.destroy();

    for (const id of [0, 1, 2]) expect((await cluster.node(id).stop('SIGTERM')).code).toBe(0);
    const node = cluster.node(2);
    const from = node.lines.length; // this boot's lines start here
    const lines = (): string[] => node.lines.slice(from);
    await cluster.startNode(2);
    // Alone, node 2's metadata replica probes, gives up and cannot finish a view.
    await waitFor('node 2 metadata probes exhausted', () => records(lines(), 'metadata group').some((r) => String(r['detail']).startsWith('exhausted')), 60_000, 200);
    expect(records(lines(), 'partition role')).toEqual([]);
    expect(records(lines(), CURRENT)).toEqual([]);

    // A metadata quorum again: node 2 becomes current, then (and only then) opens its groups.
    await cluster.startNode(1);
    await waitFor('node 2 metadata current', () => records(lines(), CURRENT).length === 1, 60_000, 200);
    await waitFor('node 2 opened its partition groups', () => records(lines(), 'partition role').length >= PARTITIONS, 60_000, 200);
    const current = lines().findIndex((l) => l.includes(`"msg":"${CURRENT}"`));
    const firstRole = lines().findIndex((l) => l.includes('"msg":"partition role"'));
    expect(current).toBeGreaterThanOrEqual(0);
    expect(firstRole).toBeGreaterThan(current);

    // Its groups serve what they held (node 2 answers the poll itself once it caught up).
    const reader = cluster.nodeClient(2, { requestTimeoutMs: 10_000 });
    for (let p = 0; p < PARTITIONS; p++) {
      await waitFor(`node 2 partition ${p} serves its message`, async () => [...(await readPartition(reader, STREAM, TOPIC, p)).values()].includes(`before-${p}`), 60_000, 250);
    }
    await reader.destroy();
  }, 240_000);
});
