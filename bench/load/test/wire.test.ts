import { describe, expect, it } from 'vitest';
import {
  HEADER_SIZE, Operation, buildBatch, decodeRequestFrame, encodeRequestFrame, sendMessagesCommand, validateBatch,
} from '@shoal/protocol';
import { IDENTITY_BYTES, encodeIdentity } from '../src/exactly-once.js';
import { batchLength, benchMessageId, buildSendMessagesFrame, payloadTemplate } from '../src/shoal/wire.js';

/**
 * The lean frame builder against the protocol package's own encoders: the same messages through
 * `buildBatch` + `sendMessagesCommand.encodeRequest` + `encodeRequestFrame` must give the same
 * bytes.
 */
describe('lean SendMessages frames', () => {
  for (const [count, size] of [[1, 16], [3, 100], [1000, 1024]] as const) {
    it(`${count} × ${size} B: byte-identical to the protocol encoders, and a valid batch`, () => {
      const runTag = 0x1234_5678;
      const template = payloadTemplate(size);
      const fields = { client: 0xdead_beef_0000_0001n, session: 42n, request: 1n, timestamp: 1_700_000_000_000_123n };
      const shape = { streamId: 3, topicId: 1, partitionId: 5, count, messageSize: size };
      const origin = 1_700_000_000_000_000n;
      const frame = buildSendMessagesFrame(fields, shape, { runTag, producer: 2, firstSeq: 40, template, originTimestamp: origin });

      const messages = Array.from({ length: count }, (_, i) => {
        const payload = new Uint8Array(size);
        encodeIdentity(payload, 0, runTag, 2, 40 + i);
        payload.set(template, IDENTITY_BYTES);
        return { id: benchMessageId(runTag, 2, 40 + i), payload, originTimestamp: origin };
      });
      const batch = buildBatch(messages);
      if (!batch.ok) throw new Error(batch.reason);
      expect(batch.value.length).toBe(batchLength(count, size));
      const body = sendMessagesCommand.encodeRequest({
        streamId: { kind: 'numeric', value: 3 }, topicId: { kind: 'numeric', value: 1 },
        partitioning: { kind: 'partition_id', partitionId: 5 }, messagesCount: count, batch: batch.value,
      });
      const expected = encodeRequestFrame({ ...fields, operation: Operation.SendMessages }, body);
      expect(Buffer.from(frame).equals(Buffer.from(expected))).toBe(true);

      const decoded = decodeRequestFrame(frame);
      expect(decoded.ok).toBe(true);
      const request = sendMessagesCommand.decodeRequest(frame.subarray(HEADER_SIZE));
      if (!request.ok) throw new Error(request.reason);
      expect(request.value.messagesCount).toBe(count);
      const verdict = validateBatch(request.value.batch);
      expect(verdict.ok).toBe(true);
    });
  }
});
