import { describe, expect, it } from 'vitest';
import { AssertionError, BoundedQueue, Prng, assert, fromHex, joinU64, readU128LE, splitU64, toHex, writeU128LE } from '@shoal/stdx';

describe('assert', () => {
  it('throws AssertionError on false and passes on true', () => {
    expect(() => assert(false, 'boom')).toThrow(AssertionError);
    expect(() => assert(true)).not.toThrow();
  });
});

describe('Prng', () => {
  it('replays the same sequence for the same seed and differs across seeds', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const sa = Array.from({ length: 64 }, () => a.u32());
    const sb = Array.from({ length: 64 }, () => b.u32());
    const sc = Array.from({ length: 64 }, () => c.u32());
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
  });
  it('below() stays in range and covers it', () => {
    const p = new Prng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const v = p.below(10);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(10);
      seen.add(v);
    }
    expect(seen.size).toBe(10);
    expect(() => p.below(0)).toThrow(RangeError);
  });
  it('is roughly uniform', () => {
    const p = new Prng(1);
    const buckets = new Array<number>(8).fill(0);
    for (let i = 0; i < 80_000; i++) buckets[p.below(8)]!++;
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(600);
  });
});

describe('bigint helpers', () => {
  it('split/join u64 round-trip', () => {
    const v = 0x1234_5678_9abc_def0n;
    const { lo, hi } = splitU64(v);
    expect(joinU64(lo, hi)).toBe(v);
  });
  it('u128 LE round-trip at an offset', () => {
    const b = new Uint8Array(20);
    const v = (0x0123456789abcdefn << 64n) | 0xfedcba9876543210n;
    writeU128LE(b, 3, v);
    expect(readU128LE(b, 3)).toBe(v);
    expect(toHex(b.subarray(3, 19))).toBe('1032547698badcfeefcdab8967452301');
  });
  it('hex round-trip and rejection', () => {
    expect(toHex(fromHex('00ff10'))).toBe('00ff10');
    expect(() => fromHex('0g')).toThrow(RangeError);
  });
});

describe('BoundedQueue', () => {
  it('is FIFO, refuses when full, wraps around', () => {
    const q = new BoundedQueue<number>(3);
    expect(q.push(1) && q.push(2) && q.push(3)).toBe(true);
    expect(q.push(4)).toBe(false);
    expect(q.shift()).toBe(1);
    expect(q.push(4)).toBe(true);
    expect([...q]).toEqual([2, 3, 4]);
    expect(q.at(1)).toBe(3);
  });
});
