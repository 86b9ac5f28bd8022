/**
 * Group commit (docs/internals-request-path.md "Group commit"): many stock producers pipelining
 * small SendMessages to ONE partition of a 3-node cluster. The primary's pipeline fills, the
 * requests queued behind it are joined into one prepare each time a slot frees, and still:
 * - every request gets its own reply, on its own connection, in the order it was written there,
 *   naming the offset of its own first message;
 * - the offsets are dense (the replies tile 0..N-1 exactly) and every node stores each request's
 *   messages at the offsets its reply named;
 * - the partition's op count on the primary is well below the number of requests (fewer prepares).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLY_HEADER, classifyServerFrame, sendMessagesCommand } from '@shoal/protocol';
import { TestCluster, waitFor } from './support/cluster.js';
import { readPartition } from './support/produce.js';
import { StockConnection } from './support/stock-connection.js';

const STREAM = 'gc';
const TOPIC = 'one';
const PRODUCERS = 8;
const PER_PRODUCER = 48;

interface Reply {
  readonly producer: number;
  readonly index: number;
  readonly base: bigint;
  readonly payloads: readonly string[];
}

/** Messages in request `i` of a producer: 1, 2 or 3, so a member's share is not its index. */
function payloadsOf(producer: number, i: number): string[] {
  return Array.from({ length: 1 + ((producer + i) % 3) }, (_, k) => `p${producer}-r${i}-m${k}`);
}

/** `shoal_group_op` of the partition groups on a node (the only topic of the cluster). */
function partitionOps(metrics: string): number[] {
  return metrics.split('\n')
    .filter((line) => line.startsWith('shoal_group_op{') && line.includes('plane="partition"'))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

describe('cluster: group commit on one partition under many concurrent producers', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3 });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('fewer prepares than requests; each request its own reply and offsets; dense offsets on every node', async () => {
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: STREAM });
    await admin.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: 1 });
    const primary = await waitFor('every node names the partition\'s primary', async () => {
      const seen = await Promise.all([0, 1, 2].map(async (id) => {
        const view = await cluster.view(id);
        return view.groups?.topics.find((t) => t.streamName === STREAM)?.partitions[0]?.primary;
      }));
      return seen.every((p) => p === seen[0] && p !== undefined && p !== 0xff) ? seen[0] as number : null;
    }, 30_000);

    const connections = await Promise.all(Array.from({ length: PRODUCERS }, (_, p) =>
      StockConnection.open(cluster, primary, 0xc0_0000n + BigInt(p), { stream: STREAM, topic: TOPIC })));
    // Every producer writes its whole window before reading a reply: the pipeline fills at once.
    const frames = connections.map((conn, p) => Array.from({ length: PER_PRODUCER }, (_, i) => conn.send(0, payloadsOf(p, i))));
    connections.forEach((conn, p) => {
      for (const frame of frames[p] as Uint8Array[]) conn.raw.write(frame);
    });
    const replies: Reply[] = [];
    await Promise.all(connections.map(async (conn, p) => {
      for (let i = 0; i < PER_PRODUCER; i++) {
        const frame = await conn.raw.next(30_000);
        expect(frame, `producer ${p} reply ${i}`).not.toBeNull();
        const outcome = classifyServerFrame(frame as Uint8Array);
        expect(outcome, `producer ${p} reply ${i}: ${JSON.stringify(outcome)}`).toMatchObject({ outcome: 'ok' });
        const view = new DataView((frame as Uint8Array).buffer, (frame as Uint8Array).byteOffset);
        expect(view.getBigUint64(REPLY_HEADER.request.offset, true), 'replies in the order of the connection\'s requests').toBe(BigInt(i + 1));
        const decoded = sendMessagesCommand.decodeResponse(outcome.outcome === 'ok' ? outcome.payload : new Uint8Array(0));
        expect(decoded.ok).toBe(true);
        const base = decoded.ok ? (decoded.value.confirmations[0]?.baseOffset ?? -1n) : -1n;
        replies.push({ producer: p, index: i, base, payloads: payloadsOf(p, i) });
      }
    }));
    const total = replies.reduce((n, r) => n + r.payloads.length, 0);

    // Dense: sorted by base offset, the replies tile [0, total) with no gap and no overlap.
    const sorted = [...replies].sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
    let next = 0n;
    for (const r of sorted) {
      expect(r.base, `producer ${r.producer} request ${r.index}`).toBe(next);
      next += BigInt(r.payloads.length);
    }
    expect(next).toBe(BigInt(total));
    // Per connection, later requests got later offsets (the order it wrote them).
    for (let p = 0; p < PRODUCERS; p++) {
      const bases = replies.filter((r) => r.producer === p).sort((a, b) => a.index - b.index).map((r) => r.base);
      expect(bases, `producer ${p}`).toEqual([...bases].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }

    // Every node holds each request's messages at the offsets its reply named.
    for (const id of [0, 1, 2]) {
      const reader = cluster.nodeClient(id);
      const stored = await waitFor(`node ${id} applied every message`, async () => {
        const got = await readPartition(reader, STREAM, TOPIC, 0);
        return got.size >= total ? got : null;
      }, 30_000, 100);
      expect(stored.size, `node ${id}`).toBe(total);
      for (const r of replies) {
        r.payloads.forEach((payload, k) => expect(stored.get(r.base + BigInt(k)), `node ${id} offset ${r.base + BigInt(k)}`).toBe(payload));
      }
    }

    // Fewer prepares than requests: one op per prepare in the partition's journal.
    const ops = partitionOps(await cluster.metrics(primary));
    expect(ops).toHaveLength(1);
    const requests = PRODUCERS * PER_PRODUCER;
    expect(ops[0] as number, `ops for ${requests} requests`).toBeGreaterThan(0);
    expect(ops[0] as number, `ops for ${requests} requests`).toBeLessThan(requests / 2);
    for (const conn of connections) conn.close();
  }, 120_000);
});
