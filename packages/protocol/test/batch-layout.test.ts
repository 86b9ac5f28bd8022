import { describe, expect, it } from 'vitest';
import { fromHex } from '@shoal/stdx';
import {
  BATCH_HEADER,
  BATCH_HEADER_SIZE,
  MESSAGE_FRAME,
  MESSAGE_FRAME_HEADER_SIZE,
  buildBatch,
  readBatchHeader,
  readMessageFrameHeader,
  stampBatch,
} from '../src/batch/index.js';
import { checkLayout, frozenLayout } from '../src/batch/layout.js';

function u64At(bytes: Uint8Array, at: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(at, true);
}
function u32At(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true);
}

describe('batch header layout', () => {
  it('is the messages.mdx table: offsets, sizes, 256 bytes', () => {
    expect(BATCH_HEADER_SIZE).toBe(256);
    expect(Object.fromEntries(Object.entries(BATCH_HEADER).map(([k, f]) => [k, [f.offset, f.size]]))).toEqual({
      partitionId: [0, 8],
      baseOffset: [8, 8],
      baseTimestamp: [16, 8],
      originTimestamp: [24, 8],
      batchLength: [32, 8],
      batchChecksum: [40, 8],
      messageCount: [48, 4],
      reserved: [52, 204],
    });
    expect(Object.isFrozen(BATCH_HEADER)).toBe(true);
    expect(Object.isFrozen(BATCH_HEADER.partitionId)).toBe(true);
  });

  it('puts every field at its offset, reserved bytes zero', () => {
    const built = buildBatch([
      { id: 7n, payload: new Uint8Array([1, 2, 3]), originTimestamp: 0x0102_0304_0506_0708n },
      { id: 8n, payload: new Uint8Array(0), originTimestamp: 0x0102_0304_0506_0709n },
    ]);
    if (!built.ok) throw new Error(built.reason);
    const bytes = built.value;
    const stamped = stampBatch(bytes, { partitionId: 0x11n, baseOffset: 0x2222n, baseTimestamp: 0x333333n });
    expect(stamped.ok).toBe(true);
    expect(u64At(bytes, 0)).toBe(0x11n);
    expect(u64At(bytes, 8)).toBe(0x2222n);
    expect(u64At(bytes, 16)).toBe(0x333333n);
    expect(u64At(bytes, 24)).toBe(0x0102_0304_0506_0708n);
    expect(u64At(bytes, 32)).toBe(BigInt(bytes.length));
    expect(stamped.ok && u64At(bytes, 40)).toBe(stamped.ok && stamped.value);
    expect(u32At(bytes, 48)).toBe(2);
    expect(bytes.subarray(52, 256).every((b) => b === 0)).toBe(true);
    const header = readBatchHeader(bytes);
    expect(header?.messageCount).toBe(2);
    expect(header?.baseOffset).toBe(0x2222n);
  });

  it('rejects a bad table at load time', () => {
    const gap = frozenLayout({ a: { offset: 0, size: 4 }, b: { offset: 8, size: 248 } });
    expect(() => checkLayout('gap', gap, 256)).toThrow(/offset 8, expected 4/);
    const short = frozenLayout({ a: { offset: 0, size: 4 } });
    expect(() => checkLayout('short', short, 256)).toThrow(/total 4/);
    expect(() => checkLayout('unfrozen', { a: { offset: 0, size: 256 } }, 256)).toThrow(/frozen/);
  });
});

describe('message frame header layout', () => {
  it('is the messages.mdx table: 48 bytes', () => {
    expect(MESSAGE_FRAME_HEADER_SIZE).toBe(48);
    expect(Object.fromEntries(Object.entries(MESSAGE_FRAME).map(([k, f]) => [k, [f.offset, f.size]]))).toEqual({
      checksum: [0, 8],
      id: [8, 16],
      offsetDelta: [24, 4],
      timestampDelta: [28, 4],
      userHeadersLength: [32, 4],
      payloadLength: [36, 4],
      reserved: [40, 8],
    });
  });

  it('puts every field at its offset; payload before user headers', () => {
    const id = 0x0011_2233_4455_6677_8899_aabb_ccdd_eeffn;
    const built = buildBatch([
      { id: 1n, payload: new Uint8Array(0), originTimestamp: 1000n },
      { id, payload: fromHex('aabbcc'), userHeaders: fromHex('0102'), originTimestamp: 1500n },
    ]);
    if (!built.ok) throw new Error(built.reason);
    const bytes = built.value;
    const at = BATCH_HEADER_SIZE + MESSAGE_FRAME_HEADER_SIZE; // second frame (first has no body)
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect(view.getBigUint64(at + 8, true) | (view.getBigUint64(at + 16, true) << 64n)).toBe(id);
    expect(view.getUint32(at + 24, true)).toBe(1);
    expect(view.getUint32(at + 28, true)).toBe(500);
    expect(view.getUint32(at + 32, true)).toBe(2);
    expect(view.getUint32(at + 36, true)).toBe(3);
    expect(view.getBigUint64(at + 40, true)).toBe(0n);
    expect([...bytes.subarray(at + 48, at + 53)]).toEqual([0xaa, 0xbb, 0xcc, 1, 2]);
    const frame = readMessageFrameHeader(bytes, at);
    expect(frame).toMatchObject({ id, offsetDelta: 1, timestampDelta: 500, userHeadersLength: 2, payloadLength: 3, reserved: 0n });
    expect(readMessageFrameHeader(bytes, bytes.length - 47)).toBeNull();
  });
});
