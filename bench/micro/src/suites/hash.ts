import nodeRs from '@node-rs/xxhash';
import { createXXHash3 } from 'hash-wasm';
import { LONG_INPUT_MIN, xxh3_64 } from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { formatBytes, measureCases, row, type BenchCase } from '../measure.js';
import type { BenchRow, Suite } from '../suite.js';

/** The sizes the brief asks for, plus the ones between 1 KiB and 64 KiB that place the crossover. */
const SIZES = [48, 240, 1024, 1280, 1536, 1792, 2048, 4096, 8192, 16384, 65536, 1 << 20] as const;

const CANDIDATES = ['node-rs one-shot', 'node-rs Xxh3 reused', 'hash-wasm reused', 'xxh3_64 (module)'] as const;

function label(candidate: string, size: number): string {
  return `${candidate.padEnd(20)} ${formatBytes(size).padStart(7)}`;
}

/**
 * XXH3-64 candidates, per call: `@node-rs/xxhash` one-shot `xxh3.xxh64(buf)`; its streaming
 * `Xxh3` object reused (reset/update/digest); `hash-wasm` hasher reused (init/update/digest);
 * and the protocol's `xxh3_64` (which dispatches on LONG_INPUT_MIN). The crossover between the
 * two node-rs forms is where LONG_INPUT_MIN belongs.
 */
const suite: Suite = {
  name: 'hash',
  description: 'XXH3-64 candidates by input size (per call)',
  async run(settings) {
    const streaming = nodeRs.xxh3.Xxh3.withSeed(0n);
    const wasm = await createXXHash3(0, 0);
    const prng = new Prng(1);
    const rows: BenchRow[] = [];
    for (const size of SIZES) {
      const input = prng.bytes(size);
      const ops: Record<(typeof CANDIDATES)[number], () => unknown> = {
        'node-rs one-shot': () => nodeRs.xxh3.xxh64(input),
        'node-rs Xxh3 reused': () => {
          streaming.reset();
          streaming.update(input);
          return streaming.digest();
        },
        'hash-wasm reused': () => {
          wasm.init();
          wasm.update(input);
          return wasm.digest('binary');
        },
        'xxh3_64 (module)': () => xxh3_64(input),
      };
      checkAgreement(input, ops);
      const cases: BenchCase[] = CANDIDATES.map((name) => ({ name: label(name, size), op: ops[name], bytesPerOp: size }));
      rows.push(...measureCases(cases, settings));
    }
    return { rows, notes: crossoverNotes(rows) };
  },
};

function checkAgreement(input: Uint8Array, ops: Record<string, () => unknown>): void {
  const values = Object.entries(ops).map(([name, op]) => {
    const out = op();
    const value = out instanceof Uint8Array ? Buffer.from(out).readBigUInt64BE(0) : (out as bigint);
    return [name, value] as const;
  });
  const first = values[0]?.[1];
  for (const [name, value] of values) {
    if (value !== first) throw new Error(`${name} disagrees at ${input.length} bytes: ${value} vs ${first}`);
  }
}

function crossoverNotes(rows: readonly BenchRow[]): string[] {
  const ns = (candidate: string, size: number): number => row(rows, label(candidate, size)).nsPerOp;
  // Smallest size from which the reused object wins at that size and every larger one.
  let crossover: number | null = null;
  for (let i = SIZES.length - 1; i >= 0; i--) {
    const size = SIZES[i] as number;
    if (ns('node-rs Xxh3 reused', size) < ns('node-rs one-shot', size)) crossover = size;
    else break;
  }
  const faster = (size: number): string =>
    ns('node-rs Xxh3 reused', size) < ns('node-rs one-shot', size) ? 'reused' : 'one-shot';
  const below = SIZES.filter((s) => s < (crossover ?? Infinity));
  const lastOneShot = below[below.length - 1];
  return [
    `node-rs winner by size: ${SIZES.map((s) => `${formatBytes(s)} ${faster(s)}`).join(', ')}`,
    crossover === null
      ? 'crossover: the reused Xxh3 object never wins consistently at the measured sizes'
      : `crossover: one-shot wins up to ${lastOneShot === undefined ? '-' : formatBytes(lastOneShot)}, the reused Xxh3 object from ${formatBytes(crossover)} on`,
    `LONG_INPUT_MIN = ${LONG_INPUT_MIN} (${formatBytes(LONG_INPUT_MIN)}): inputs of at least this length use the reused object`,
  ];
}

export default suite;
