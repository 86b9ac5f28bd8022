import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { discoverTargets, fuzzTarget, mutate, nextInput, randomInput, runTwice, type FuzzFailure } from '../scripts/fuzz/harness.js';
import type { FuzzTarget } from '../scripts/fuzz/target.js';

/** Combined inputs over all discovered targets, split evenly. */
const TOTAL_INPUTS = 100_000;
const SEED = 0x5ea1n;

const loaded = await discoverTargets(undefined, SEED);
const perTarget = Math.ceil(TOTAL_INPUTS / Math.max(1, loaded.targets.length));

function show(failures: FuzzFailure[]): string[] {
  return failures.map((f) => `${f.target} ${f.kind} seed=${f.seed} iteration=${f.iteration}: ${f.detail} input=${f.inputHex.slice(0, 512)}`);
}

describe('fuzz suite: every discovered target', () => {
  it('discovers the targets, each loading cleanly', () => {
    expect(show(loaded.failures)).toEqual([]);
    const names = loaded.targets.map((t) => t.name);
    for (const mine of ['batch-validate', 'batch-slice', 'batch-frames', 'framing-decoder']) expect(names).toContain(mine);
    expect(perTarget * loaded.targets.length).toBeGreaterThanOrEqual(TOTAL_INPUTS);
  });

  for (const target of loaded.targets) {
    it(`${target.name}: ${perTarget} inputs, zero failures`, () => {
      const failures: FuzzFailure[] = [];
      const report = fuzzTarget(target, { iterations: perTarget, seed: SEED, onFailure: (f) => failures.push(f) });
      expect(show(failures.slice(0, 5))).toEqual([]);
      expect(report.failures).toBe(0);
      expect(report.inputs).toBe(perTarget);
    });
  }
});

describe('fuzz harness', () => {
  const overReader: FuzzTarget = {
    name: 'over-reader',
    seeds: () => [new Uint8Array(8)],
    // The classic bug: a DataView over the whole ArrayBuffer, ignoring byteOffset/length.
    run: (input) => (input.buffer.byteLength >= 4 ? String(new DataView(input.buffer).getUint32(0)) : 'short'),
  };
  const thrower: FuzzTarget = {
    name: 'thrower',
    seeds: () => [new Uint8Array([1, 2, 3])],
    run: (input) => {
      if (input.length > 2 && input[2] === 3) throw new RangeError('boom');
      return 'ok';
    },
  };

  it('reports an over-read as a differing summary', () => {
    const failures: FuzzFailure[] = [];
    const report = fuzzTarget(overReader, { iterations: 200, seed: 1n, onFailure: (f) => failures.push(f) });
    expect(report.failures).toBeGreaterThan(0);
    expect(failures[0]?.kind).toBe('over-read');
    expect(failures[0]?.seed).toBe('1');
  });

  it('reports an exception with the input hex', () => {
    const failures: FuzzFailure[] = [];
    fuzzTarget(thrower, { iterations: 200, seed: 1n, onFailure: (f) => failures.push(f) });
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]?.kind).toBe('exception');
    expect(failures[0]?.detail).toMatch(/RangeError: boom/);
    expect(failures[0]?.inputHex).toMatch(/^0102/);
  });

  it('is deterministic from the seed, and the seed matters', () => {
    const run = (seed: bigint): string[] => {
      const prng = new Prng(seed);
      return Array.from({ length: 50 }, () => Buffer.from(nextInput(prng, [new Uint8Array(300)])).toString('hex'));
    };
    expect(run(7n)).toEqual(run(7n));
    expect(run(7n)).not.toEqual(run(8n));
  });

  it('generates the boundary lengths and large inputs, and every mutation stays a byte array', () => {
    const prng = new Prng(3);
    const lengths = new Set<number>();
    let large = 0;
    for (let i = 0; i < 5000; i++) {
      const input = randomInput(prng);
      lengths.add(input.length);
      if (input.length >= 65_536) large++;
    }
    for (const length of [0, 255, 256, 257]) expect(lengths.has(length)).toBe(true);
    expect(large).toBeGreaterThan(0);
    for (let i = 0; i < 5000; i++) {
      const out = mutate(prng, prng.bytes(prng.below(600)), [prng.bytes(300)]);
      expect(out).toBeInstanceOf(Uint8Array);
    }
  });

  it('runs the exact and the embedded copy on equal bytes', () => {
    const seen: Uint8Array[] = [];
    const spy: FuzzTarget = { name: 'spy', seeds: () => [], run: (input) => (seen.push(input), 'ok') };
    expect(runTwice(spy, new Uint8Array([9, 8, 7]), new Prng(1))).toBe('ok');
    expect(seen[0]?.byteLength).toBe(seen[0]?.buffer.byteLength);
    expect(seen[1]?.byteOffset).toBeGreaterThan(0);
    expect(seen[1]?.buffer.byteLength).toBeGreaterThan(3);
    expect([...(seen[1] ?? [])]).toEqual([9, 8, 7]);
  });
});
