import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter } from '../src/index.js';

describe('ByteWriter', () => {
  // Regression: a write that grew the buffer used to go through the stale DataView (RangeError).
  it('grows across every write width without losing bytes', () => {
    const w = new ByteWriter(16);
    for (let i = 0; i < 200; i++) {
      w.u8(i & 0xff).u16(i).u32(i * 7).u64(BigInt(i) << 40n).u128(BigInt(i) << 100n).bytes(new Uint8Array([i & 0xff, 1, 2])).zeros(3);
    }
    const out = w.finish();
    expect(out.length).toBe(200 * (1 + 2 + 4 + 8 + 16 + 3 + 3));
    const r = new ByteReader(out);
    for (let i = 0; i < 200; i++) {
      expect(r.u8()).toBe(i & 0xff);
      expect(r.u16()).toBe(i);
      expect(r.u32()).toBe(i * 7);
      expect(r.u64()).toBe(BigInt(i) << 40n);
      expect(r.u128()).toBe(BigInt(i) << 100n);
      expect([...r.bytesView(3)]).toEqual([i & 0xff, 1, 2]);
      expect([...r.bytesView(3)]).toEqual([0, 0, 0]);
    }
    r.expectEnd();
    expect(r.reason).toBeNull();
  });
});

describe('ByteReader', () => {
  it('records the first failure, returns zeros afterwards and never throws', () => {
    const r = new ByteReader(new Uint8Array([1, 2, 3]));
    expect(r.u16()).toBe(0x0201);
    expect(r.u32('count')).toBe(0);
    expect(r.reason).toBe('truncated_count');
    expect(r.u8()).toBe(0);
    expect(r.reason).toBe('truncated_count');
    expect(r.remaining).toBe(0);
  });
  it('rejects invalid UTF-8 instead of substituting', () => {
    const r = new ByteReader(new Uint8Array([0xff, 0xfe]));
    expect(r.utf8(2, 'name')).toBe('');
    expect(r.reason).toBe('invalid_utf8_name');
  });
  it('respects an end bound inside a larger buffer', () => {
    const r = new ByteReader(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 2, 4);
    expect(r.u16()).toBe(0x0403);
    expect(r.u8()).toBe(0);
    expect(r.failed).toBe(true);
  });
  it('expectEnd flags trailing bytes', () => {
    const r = new ByteReader(new Uint8Array([1, 2]));
    r.u8();
    r.expectEnd();
    expect(r.reason).toBe('trailing_bytes');
  });
});
