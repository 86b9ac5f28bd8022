import { describe, expect, it } from 'vitest';
import {
  ErrorCode, EvictionReason, Operation, REPLY_HEADER, classifyServerFrame, encodeEvictionHeader, encodeReplyFrame,
  encodeResultRejection, encodeResultSuccess,
} from '@shoal/protocol';
import { RequestLedger } from '../src/engine/request-ledger.js';

const reply = (request: bigint, operation: number, body: Uint8Array, timestamp = 555n): Uint8Array =>
  encodeReplyFrame({ client: 9n, request, operation, timestamp, op: 3n, commit: 3n }, body);

const field = (frame: Uint8Array): { operation: number; timestamp: bigint; request: bigint } => {
  const v = new DataView(frame.buffer, frame.byteOffset);
  return {
    operation: v.getUint8(REPLY_HEADER.operation.offset),
    timestamp: v.getBigUint64(REPLY_HEADER.timestamp.offset, true),
    request: v.getBigUint64(REPLY_HEADER.request.offset, true),
  };
};

describe('request ledger: which request a core reply answers', () => {
  it('echoes the request operation and timestamp (a CreateTopic committed as 64), on a copy', () => {
    const ledger = new RequestLedger();
    ledger.record(1, 1n << 63n, { request: 4n, operation: Operation.CreateTopic, timestamp: 1111n, client: 9n, requestChecksum: 0n });
    const original = reply(4n, Operation.CreateTopicWithAssignments, encodeResultSuccess(Uint8Array.of(1)));
    const matched = ledger.match(1, 1n << 63n, original);
    expect(matched.completes).toBe(true);
    expect(field(matched.frame)).toEqual({ operation: Operation.CreateTopic, timestamp: 1111n, request: 4n });
    expect(field(original).operation).toBe(Operation.CreateTopicWithAssignments);
    expect(ledger.size).toBe(0);
  });

  it('settle (partition host): releases the matching request and leaves the frame as the core echoed it', () => {
    const ledger = new RequestLedger();
    ledger.record(7, 10n, { request: 3n, operation: Operation.SendMessages, timestamp: 100n, client: 9n, requestChecksum: 0n }, 5);
    ledger.record(7, 10n, { request: 4n, operation: Operation.SendMessages, timestamp: 200n, client: 9n, requestChecksum: 0n }, 6);
    const frame = reply(4n, Operation.SendMessages, new Uint8Array(0), 200n);
    const before = frame.slice();
    expect(ledger.settle(7, 10n, frame)).toEqual({ completes: true, recordedMs: 6 });
    expect(frame).toEqual(before);
    expect(ledger.settle(7, 10n, frame)).toEqual({ completes: false, recordedMs: -1 });
    expect(ledger.settle(7, 11n, reply(3n, 160, new Uint8Array(0)))).toEqual({ completes: false, recordedMs: -1 });
    const evicted = encodeEvictionHeader({ cluster: 0n, view: 0, replica: 0, client: 9n, reason: EvictionReason.NoSession });
    expect(ledger.settle(7, 10n, evicted)).toEqual({ completes: true, recordedMs: 5 });
    expect(ledger.size).toBe(0);
  });

  it('matches partition replies that share a request number in submission order, per group', () => {
    const ledger = new RequestLedger();
    ledger.record(7, 10n, { request: 3n, operation: Operation.SendMessages, timestamp: 100n, client: 9n, requestChecksum: 0n });
    ledger.record(7, 11n, { request: 3n, operation: Operation.SendMessages, timestamp: 200n, client: 9n, requestChecksum: 0n });
    ledger.record(7, 10n, { request: 3n, operation: Operation.SendMessages, timestamp: 300n, client: 9n, requestChecksum: 0n });
    expect(field(ledger.match(7, 10n, reply(3n, 160, new Uint8Array(0))).frame).timestamp).toBe(100n);
    expect(field(ledger.match(7, 10n, reply(3n, 160, new Uint8Array(0))).frame).timestamp).toBe(300n);
    expect(field(ledger.match(7, 11n, reply(3n, 160, new Uint8Array(0))).frame).timestamp).toBe(200n);
    expect(ledger.match(7, 11n, reply(3n, 160, new Uint8Array(0))).completes).toBe(false);
  });

  it('lets a dropped request go, and an eviction answer the oldest request of its group', () => {
    const ledger = new RequestLedger();
    ledger.record(2, 1n << 63n, { request: 5n, operation: Operation.CreateStream, timestamp: 1n, client: 9n, requestChecksum: 0n });
    ledger.record(2, 1n << 63n, { request: 6n, operation: Operation.CreateStream, timestamp: 2n, client: 9n, requestChecksum: 0n });
    ledger.forget(2, 1n << 63n, 6n);
    const eviction = encodeEvictionHeader({ client: 9n, reason: EvictionReason.NoSession });
    expect(ledger.match(2, 1n << 63n, eviction)).toEqual({ frame: eviction, completes: true, recordedMs: 0 });
    expect(ledger.size).toBe(0);
  });

  it('turns the result-framed 68 reply of a DeleteSegments into a header status (138 is not result-framed)', () => {
    const ledger = new RequestLedger();
    ledger.record(3, 1n << 63n, { request: 8n, operation: Operation.DeleteSegments, timestamp: 42n, client: 9n, requestChecksum: 0n });
    ledger.record(3, 1n << 63n, { request: 9n, operation: Operation.DeleteSegments, timestamp: 43n, client: 9n, requestChecksum: 0n });
    const ok = ledger.match(3, 1n << 63n, reply(8n, Operation.TruncatePartition, encodeResultSuccess()));
    expect(ok.frame.length).toBe(256);
    expect(classifyServerFrame(ok.frame)).toEqual({ outcome: 'ok', operation: Operation.DeleteSegments, payload: new Uint8Array(0) });
    const rejected = ledger.match(3, 1n << 63n, reply(9n, Operation.TruncatePartition, encodeResultRejection(ErrorCode.PartitionNotFound)));
    expect(classifyServerFrame(rejected.frame)).toMatchObject({ outcome: 'error', source: 'status', errorCode: ErrorCode.PartitionNotFound });
  });
});
