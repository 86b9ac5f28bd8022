/**
 * The runtime's fuzz targets (packages/runtime/scripts/fuzz-targets: forwarding-channel frames,
 * the HTTP bearer header, offset-write bodies) under the protocol package's harness, as
 * `npm run fuzz` runs them, with a fixed seed and a small budget, so a decoder that throws,
 * over-reads or stops being canonical fails `npm test` and not only a manual fuzz run.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { discoverTargets, fuzzTarget, type FuzzFailure } from '../../packages/protocol/scripts/fuzz/harness.js';

const DIR = fileURLToPath(new URL('../../packages/runtime/scripts/fuzz-targets', import.meta.url));
const SEED = 0x5ea1n;
const INPUTS = 10_000;

const loaded = await discoverTargets(DIR, SEED);

const show = (failures: readonly FuzzFailure[]): string[] => failures.map((f) => `${f.target} ${f.kind} iteration=${f.iteration}: ${f.detail} input=${f.inputHex.slice(0, 256)}`);

describe("fuzz: the runtime's targets", () => {
  it('loads every target cleanly', () => {
    expect(show(loaded.failures)).toEqual([]);
    expect(loaded.targets.map((t) => t.name).sort()).toEqual(['forward-frames', 'http-bearer', 'offset-bodies']);
  });

  for (const target of loaded.targets) {
    it(`${target.name}: ${INPUTS} inputs, zero failures, and its seeds accepted`, () => {
      const failures: FuzzFailure[] = [];
      const report = fuzzTarget(target, { iterations: INPUTS, seed: SEED, onFailure: (f) => failures.push(f) });
      expect(show(failures.slice(0, 5))).toEqual([]);
      expect(report.inputs).toBe(INPUTS);
      // Seeds reach the accepting paths (a target whose seeds all fail fuzzes nothing but the refusals).
      const accepted = target.seeds(new Prng(SEED)).map((seed) => target.run(seed)).filter((s) => /^(request:ok|reply:ok|token:|store:ok|delete:ok)/.test(s));
      expect(accepted.length).toBeGreaterThanOrEqual(3);
    });
  }
});
