import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { Histogram, SUB_BITS, bucketHigh, bucketIndex, bucketLow, latencySummary, percentileCurve } from '../src/histogram.js';

/** Nearest-rank percentile of a sorted array: the oracle. */
function oracle(sorted: readonly number[], q: number): number {
  if (q <= 0) return sorted[0] as number;
  const rank = Math.max(1, Math.ceil((q / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

const RELATIVE_ERROR = 1 / 2 ** (SUB_BITS - 1);
const QUANTILES = [0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100];

function check(values: readonly number[]): void {
  const h = new Histogram();
  for (const v of values) h.record(v);
  const sorted = [...values].sort((a, b) => a - b);
  expect(h.count).toBe(values.length);
  expect(h.min).toBe(sorted[0]);
  expect(h.max).toBe(sorted[sorted.length - 1]);
  for (const q of QUANTILES) {
    const exact = oracle(sorted, q);
    const got = h.percentile(q);
    // Never below the exact value, and at most one bucket width (≤ 1/512 of it) above.
    expect(got, `q=${q}`).toBeGreaterThanOrEqual(exact);
    expect(got, `q=${q}`).toBeLessThanOrEqual(Math.max(exact + exact * RELATIVE_ERROR, exact));
  }
}

describe('histogram', () => {
  it('bucket layout: contiguous, exact below 1024, every value inside its bucket', () => {
    for (let v = 0; v < 1024; v++) expect(bucketIndex(v)).toBe(v);
    let previousHigh = -1;
    for (let i = 0; i < 40 * 512; i++) {
      expect(bucketLow(i)).toBe(previousHigh + 1);
      expect(bucketHigh(i)).toBeGreaterThanOrEqual(bucketLow(i));
      previousHigh = bucketHigh(i);
    }
    const prng = new Prng(7n);
    for (let k = 0; k < 10_000; k++) {
      const v = Math.floor(prng.float() * 2 ** (1 + Math.floor(prng.float() * 52)));
      const i = bucketIndex(v);
      expect(v).toBeGreaterThanOrEqual(bucketLow(i));
      expect(v).toBeLessThanOrEqual(bucketHigh(i));
      expect(bucketHigh(i) - bucketLow(i)).toBeLessThanOrEqual(Math.max(0, bucketLow(i) * RELATIVE_ERROR));
    }
  });

  it('percentiles against a sorted-array oracle: uniform, log-normal-ish, constant, tiny', () => {
    const prng = new Prng(42n);
    check(Array.from({ length: 20_000 }, () => Math.floor(prng.float() * 5_000_000)));
    check(Array.from({ length: 20_000 }, () => Math.floor(Math.exp(10 + 4 * prng.float() * prng.float()))));
    check(Array.from({ length: 5_000 }, () => 123_456));
    check([3]);
    check([0, 1, 2, 1_000_000_000_000]);
    check(Array.from({ length: 3_000 }, (_, i) => (i % 100 === 0 ? 9e12 : 1000 + i)));
  });

  it('merge equals recording everything in one histogram; JSON round trip keeps the summary and percentiles', () => {
    const prng = new Prng(3n);
    const all = new Histogram();
    const parts = [new Histogram(), new Histogram(), new Histogram()];
    for (let i = 0; i < 9_000; i++) {
      const v = Math.floor(prng.float() * 1e9);
      all.record(v);
      parts[i % 3]?.record(v);
    }
    const merged = new Histogram();
    for (const p of parts) merged.merge(p);
    for (const q of QUANTILES) expect(merged.percentile(q)).toBe(all.percentile(q));
    expect(merged.count).toBe(all.count);
    expect(merged.mean).toBeCloseTo(all.mean, 3);
    const back = Histogram.fromJSON(JSON.parse(JSON.stringify(all.toJSON())));
    for (const q of QUANTILES) expect(back.percentile(q)).toBe(all.percentile(q));
    expect([back.min, back.max, back.count]).toEqual([all.min, all.max, all.count]);
  });

  it('empty histogram, clamping, summaries in ms and the percentile curve', () => {
    const h = new Histogram();
    expect([h.percentile(50), h.min, h.max, h.mean]).toEqual([0, 0, 0, 0]);
    expect(percentileCurve(h)).toEqual([]);
    h.record(-5);
    h.record(Number.NaN);
    h.record(2_000_000, 3);
    expect(h.count).toBe(5);
    expect(h.min).toBe(0);
    const summary = latencySummary(h);
    expect(summary.max).toBe(2);
    expect(summary.p99).toBeGreaterThanOrEqual(2);
    const curve = percentileCurve(h);
    expect(curve[0]?.percentile).toBe(0);
    expect(curve.at(-1)).toEqual({ percentile: 100, valueMs: 2 });
    for (let i = 1; i < curve.length; i++) expect(curve[i]?.valueMs).toBeGreaterThanOrEqual(curve[i - 1]?.valueMs ?? 0);
  });
});
