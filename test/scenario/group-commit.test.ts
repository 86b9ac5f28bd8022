/**
 * Group commit in the consensus core (packages/consensus/src/group-commit.ts), deterministic:
 * requests parked in the primary's request queue while its pipeline is full are proposed as one
 * prepare per freed slot, each answered with its own reply; a lone request is proposed at once.
 */
import { describe, expect, it } from 'vitest';
import { Command, REPLY_HEADER } from '@shoal/protocol';
import type { BatchLogStateMachine } from '../../packages/consensus/test/support/state-machines.js';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { coreOf } from '@shoal/consensus/testing';
import { Cluster } from './support/cluster.js';

const HEADER = 256;

function replyOf(cluster: Cluster, token: number): { request: bigint; client: bigint; base: bigint; timestamp: bigint; operation: number } {
  const answers = cluster.answersFor(token);
  expect(answers, `token ${token}`).toHaveLength(1);
  const frame = (answers[0] as { frame: Uint8Array }).frame;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  return {
    request: view.getBigUint64(REPLY_HEADER.request.offset, true),
    client: (answers[0] as { client: bigint }).client,
    base: view.getBigUint64(HEADER, true),
    timestamp: view.getBigUint64(REPLY_HEADER.timestamp.offset, true),
    operation: frame[REPLY_HEADER.operation.offset] as number,
  };
}

describe('group commit (partition plane)', () => {
  it('a full pipeline: the queued requests become one prepare, each answered with its own offsets', () => {
    // Depth 4: four prepares in flight, the request queue holds eight.
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 4, groupRequestsMax: 8 } });
    cluster.run(5);
    const sent: { token: number; client: bigint; request: bigint; count: number; outcome: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const client = 100n + BigInt(i % 3);
      const count = 1 + (i % 3);
      const { token, outcome } = cluster.request(0, { client, request: BigInt(i + 1), body: fakeBatch(`r${i}`, count) });
      sent.push({ token, client, request: BigInt(i + 1), count, outcome });
    }
    expect(sent.map((s) => s.outcome)).toEqual([...Array<string>(4).fill('proposed'), ...Array<string>(8).fill('queued')]);
    cluster.runUntil(() => sent.every((s) => cluster.answersFor(s.token).length > 0), 500);
    // Four lone prepares, then one prepare for the eight that waited.
    cluster.runUntil(() => cluster.converged(5), 200);
    expect(cluster.commitMins()).toEqual([5, 5, 5]);
    expect((cluster.nodes[0]?.sm as BatchLogStateMachine).combined).toEqual([8]);
    let next = 0n;
    for (const s of sent) {
      const reply = replyOf(cluster, s.token);
      // The request's own timestamp (the scenario cluster sends 42), not the prepare's: the core
      // echoes it for a lone request and for a group's member alike.
      expect(reply, `request ${s.request}`).toEqual({ request: s.request, client: s.client, base: next, timestamp: 42n, operation: 160 });
      next += BigInt(s.count);
    }
    // Every replica applied the same log: 5 batches covering offsets 0..next-1 with no gap.
    for (const node of cluster.nodes) {
      const log = (node.sm as BatchLogStateMachine).log;
      expect(log.map((b) => [b.op, b.base])).toEqual([[1, 0], [2, 1], [3, 3], [4, 6], [5, 7]]);
      expect(log.reduce((n, b) => n + b.count, 0)).toBe(Number(next));
      expect(log[4]?.payload).toBe(sent.slice(4).map((_, i) => `r${i + 4}`).join(''));
    }
  });

  it('groups are bounded by count and bytes, and a request that finds a free slot goes alone', () => {
    // Depth 2: two prepares in flight, the request queue holds four.
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 2, groupRequestsMax: 3, groupBytesMax: 100 } });
    cluster.run(5);
    const big = 'x'.repeat(60); // a 20-byte stamp + 60: with any other request above the 100-byte bound
    const tokens: number[] = [];
    const round = (payloads: string[]): void => {
      const outcomes = payloads.map((p) => {
        const sent = cluster.request(0, { client: 7n, request: BigInt(tokens.length + 1), body: fakeBatch(p) });
        tokens.push(sent.token);
        return sent.outcome;
      });
      expect(outcomes).toEqual(['proposed', 'proposed', 'queued', 'queued', 'queued', 'queued'].slice(0, payloads.length));
      cluster.runUntil(() => tokens.every((t) => cluster.answersFor(t).length > 0), 500);
    };
    round(['a', 'b', 'c', 'd', 'e', big]); // c d e: the count bound; big alone
    round(['g', 'h', 'i', big]); // i + big: over the byte bound, each alone
    const sm = cluster.nodes[0]?.sm as BatchLogStateMachine;
    expect(sm.combined).toEqual([3]);
    expect(sm.log.map((b) => b.payload)).toEqual(['a', 'b', 'cde', big, 'g', 'h', 'i', big]);
    expect(tokens.map((t) => replyOf(cluster, t).base)).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n]);
  });
});

describe('group commit wait depth (groupWaitDepth)', () => {
  function pipelineLength(cluster: Cluster): number {
    return coreOf(cluster.nodes[0]!.r).pipeline.length;
  }

  it('from the wait depth on, requests wait for a commit behind free slots and go out as one prepare', () => {
    // 32 slots, but from 2 ops in flight on a request waits to be joined.
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 32, groupRequestsMax: 64, groupWaitDepth: 2 } });
    cluster.run(5);
    const sent = Array.from({ length: 10 }, (_, i) => ({ request: BigInt(i + 1), ...cluster.request(0, { client: 9n, request: BigInt(i + 1), body: fakeBatch(`w${i}`) }) }));
    expect(sent.map((s) => s.outcome)).toEqual([...Array<string>(2).fill('proposed'), ...Array<string>(8).fill('queued')]);
    expect(pipelineLength(cluster)).toBe(2);
    cluster.runUntil(() => sent.every((s) => cluster.answersFor(s.token).length > 0), 500);
    cluster.runUntil(() => cluster.converged(3), 200);
    // Two lone prepares, then the eight that waited as one (with the default depth: ten prepares).
    expect(cluster.commitMins()).toEqual([3, 3, 3]);
    expect((cluster.nodes[0]?.sm as BatchLogStateMachine).combined).toEqual([8]);
    sent.forEach((s, i) => expect(replyOf(cluster, s.token)).toMatchObject({ request: s.request, base: BigInt(i) }));
  });

  it('a request alone is proposed at once, and a group the count bound closes does not wait', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 32, groupRequestsMax: 3, groupWaitDepth: 1 } });
    cluster.run(5);
    const first = cluster.request(0, { client: 9n, request: 1n, body: fakeBatch('a') });
    expect(first.outcome).toBe('proposed');
    const outcomes = ['b', 'c', 'd', 'e', 'f'].map((p, i) => cluster.request(0, { client: 9n, request: BigInt(i + 2), body: fakeBatch(p) }).outcome);
    expect(outcomes).toEqual(Array<string>(5).fill('queued'));
    // b c d reached the bound of 3: proposed while 'a' was still in flight; e f wait for company.
    expect(pipelineLength(cluster)).toBe(2);
    expect((cluster.nodes[0]?.sm as BatchLogStateMachine).combined).toEqual([3]);
    expect(coreOf(cluster.nodes[0]!.r).pipeline.requests.length).toBe(2);
    cluster.runUntil(() => cluster.converged(3), 500);
    expect((cluster.nodes[0]?.sm as BatchLogStateMachine).combined).toEqual([3, 2]);
    const log = (cluster.nodes[0]?.sm as BatchLogStateMachine).log;
    expect(log.map((b) => b.payload)).toEqual(['a', 'bcd', 'ef']);
  });

  it('a request the group cannot join closes it: both go out at once, in queue order', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 32, groupRequestsMax: 64, groupWaitDepth: 1 } });
    cluster.run(5);
    expect(cluster.request(0, { client: 9n, request: 1n, body: fakeBatch('a') }).outcome).toBe('proposed');
    cluster.request(0, { client: 9n, request: 2n, body: fakeBatch('b') });
    cluster.request(0, { client: 9n, request: 3n, body: fakeBatch('c') });
    expect(pipelineLength(cluster)).toBe(1);
    // Another operation (the fake machine combines only 160, and refuses 161 at prepare): the
    // open group b c is closed by it and proposed now; 161 itself is then refused, not parked.
    const other = cluster.request(0, { client: 9n, request: 4n, operation: 161, body: fakeBatch('x') });
    expect(other.outcome).toBe('queued');
    expect(pipelineLength(cluster)).toBe(2);
    expect((cluster.nodes[0]?.sm as BatchLogStateMachine).combined).toEqual([2]);
    expect(coreOf(cluster.nodes[0]!.r).pipeline.requests.length).toBe(0);
    expect(cluster.answersFor(other.token)).toHaveLength(1);
  });
});

describe('dropped requests are answered by the core (answerDroppedRequests)', () => {
  it('an isolated primary that learns of a newer view answers 57 once to every request it had not committed', () => {
    const config = { prepareQueueDepth: 2, groupRequestsMax: 4, answerDroppedRequests: true };
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config });
    cluster.run(5);
    // The backups journal the two prepares but their acks never reach the primary; then it is
    // cut off. The new primary commits both (they are in its log): each is still answered once.
    cluster.filters.push((m) => m.to === 0 && m.command === Command.PrepareOk);
    // Two prepares in flight, then four queued; a slot never frees.
    const tokens = Array.from({ length: 6 }, (_, i) => cluster.request(0, { client: 9n, request: BigInt(i + 1), body: fakeBatch(`d${i}`) }).token);
    cluster.run(5);
    expect(tokens.flatMap((t) => cluster.answersFor(t))).toEqual([]);
    cluster.isolate(0);
    cluster.runUntil(() => cluster.primary() !== null && cluster.primary() !== 0, 3000);
    cluster.heal();
    cluster.filters.length = 0;
    cluster.runUntil(() => cluster.nodes[0]?.r.status.primary === false && cluster.nodes[0]?.r.status.status === 'normal', 3000);
    cluster.runUntil(() => cluster.converged(2), 500);
    cluster.run(200);
    expect(cluster.commitMins().every((op) => op >= 2), 'the two prepares were committed by the new primary').toBe(true);
    for (const [i, token] of tokens.entries()) {
      const answers = cluster.answersFor(token);
      expect(answers, `request ${i + 1}`).toHaveLength(1);
      const frame = (answers[0] as { frame: Uint8Array }).frame;
      const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
      expect(view.getUint32(REPLY_HEADER.status.offset, true), `request ${i + 1}`).toBe(57);
      expect(view.getBigUint64(REPLY_HEADER.request.offset, true)).toBe(BigInt(i + 1));
    }
  });

  it('off (the default): the core leaves the answer to the host', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', config: { prepareQueueDepth: 2 } });
    cluster.run(5);
    cluster.isolate(0);
    const tokens = Array.from({ length: 4 }, (_, i) => cluster.request(0, { client: 9n, request: BigInt(i + 1), body: fakeBatch(`d${i}`) }).token);
    cluster.runUntil(() => cluster.primary() !== null && cluster.primary() !== 0, 3000);
    cluster.heal();
    cluster.runUntil(() => cluster.nodes[0]?.r.status.primary === false && cluster.nodes[0]?.r.status.status === 'normal', 3000);
    cluster.run(200);
    expect(tokens.flatMap((t) => cluster.answersFor(t))).toEqual([]);
  });
});
