/**
 * Who owns a request's body: the core no longer copies every body on admission (a 1 MB batch per
 * SendMessages was 15–20 % of the primary's time). A request proposed at once is copied into its
 * prepare frame; a PARKED request (no free prepare slot) takes its own copy. Either way the host
 * may reuse the body's buffer as soon as `onRequest` returns (the runtime hands views into a
 * socket's assembly buffer), and what commits is what was sent.
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, Operation } from '@shoal/protocol';
import { PartitionDriver } from '../src/index.js';
import { Harness, PARTITION_GROUP } from './support/harness.js';

function batch(tag: number): Uint8Array {
  const messages = [0, 1].map((i) => ({ id: BigInt(tag * 100 + i + 1), payload: new TextEncoder().encode(`m${tag}.${i}`), originTimestamp: 1n }));
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

/** A 3-replica partition group whose pipeline holds one prepare, so later requests park. */
function harness(): Harness<PartitionDriver> {
  return new Harness<PartitionDriver>(3, (h, i) => {
    const o = h.options(i);
    const opened = PartitionDriver.open({
      ...o, config: { ...o.config, prepareQueueDepth: 1 }, dir: '/data/streams/1/topics/0/partitions/0', group: PARTITION_GROUP,
      identity: { streamId: 1, topicId: 0, partitionId: 0 }, storage: { messagesRequiredToSave: 1 }, createdRevision: 1n,
    });
    if (!opened.ok) throw new Error(`open ${i}: ${opened.reason} ${opened.detail}`);
    return opened.driver;
  });
}

describe('request bodies: the host may reuse its buffer once onRequest returns', () => {
  it('proposed at once and parked alike, the committed batches are the ones sent', () => {
    const h = harness();
    h.tick(5);
    const primary = h.driver(0);
    const sent = [1, 2, 3].map(batch);
    const buffer = new Uint8Array(Math.max(...sent.map((b) => b.length)));
    sent.forEach((b, i) => {
      buffer.set(b);
      const outcome = primary.onRequest({
        client: 7n, request: BigInt(i + 1), session: 0n, requestChecksum: 0n, operation: Operation.SendMessages,
        body: buffer.subarray(0, b.length), userId: 0, timestamp: 5n, token: 500 + i,
      });
      // The first is proposed; with one prepare slot the next two park behind it.
      expect(outcome).toBe(i === 0 ? 'proposed' : 'queued');
      buffer.fill(0xee); // the host's buffer is reused for the next frame at once
    });
    h.tick(60);
    for (const d of h.drivers) {
      const polled = (d as PartitionDriver).poll({ consumer: { kind: 'consumer', key: 1 }, strategy: { kind: 'offset', value: 0n }, count: 10, autoCommit: false }, false);
      expect(polled.ok).toBe(true);
      const payloads = polled.ok ? polled.reply.batches.flatMap((b) => [...new TextDecoder().decode(b).matchAll(/m\d\.\d/g)].map((m) => m[0])) : [];
      expect(payloads).toEqual(['m1.0', 'm1.1', 'm2.0', 'm2.1', 'm3.0', 'm3.1']);
    }
  });
});
