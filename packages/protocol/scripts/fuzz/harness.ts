import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Prng, toHex } from '@shoal/stdx';
import type { FuzzTarget } from './target.js';

/**
 * The fuzz harness: discovers every `targets/*.ts` module (default export: a FuzzTarget), feeds
 * each one random inputs and mutations of its seeds, and runs every input twice:
 *
 *   exact:     [input]                          its own ArrayBuffer, exactly input.length bytes
 *   embedded:  [canaries][input][canaries]      a view into a larger buffer of random bytes
 *
 * An exception from `run` is a failure; two different summaries mean the target read outside its
 * view (the canaries leaked into the result): an over-read failure. Everything is derived from
 * the run seed, the target's name and the iteration number, so one seed replays the same run,
 * and adding a target does not change the inputs any other target sees.
 */

export const TARGETS_DIR = fileURLToPath(new URL('./targets/', import.meta.url));

export interface FuzzFailure {
  readonly target: string;
  /** -1 for a target that failed to load or to produce seeds. */
  readonly iteration: number;
  readonly seed: string;
  readonly kind: 'load' | 'seeds' | 'exception' | 'over-read' | 'bad-summary';
  readonly detail: string;
  readonly inputHex: string;
}

export interface TargetReport {
  readonly name: string;
  readonly inputs: number;
  readonly failures: number;
  /** How many inputs ended in each outcome class (the summary up to its first ':'). */
  readonly outcomes: ReadonlyMap<string, number>;
  readonly millis: number;
}

export interface LoadedTargets {
  readonly targets: FuzzTarget[];
  readonly failures: FuzzFailure[];
}

/** Imports every `*.ts` in `dir` (sorted by file name); a module that does not load is a failure. */
export async function discoverTargets(dir: string = TARGETS_DIR, seed = 0n): Promise<LoadedTargets> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
  const targets: FuzzTarget[] = [];
  const failures: FuzzFailure[] = [];
  const names = new Set<string>();
  for (const file of files) {
    const fail = (detail: string): void => {
      failures.push({ target: file, iteration: -1, seed: seed.toString(), kind: 'load', detail, inputHex: '' });
    };
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(join(dir, file)).href)) as { default?: unknown };
    } catch (error) {
      fail(`import failed: ${describe(error)}`);
      continue;
    }
    const target = module.default as Partial<FuzzTarget> | undefined;
    if (
      target === undefined ||
      typeof target.name !== 'string' ||
      typeof target.seeds !== 'function' ||
      typeof target.run !== 'function'
    ) {
      fail('default export is not a FuzzTarget { name, seeds, run }');
      continue;
    }
    if (names.has(target.name)) {
      fail(`duplicate target name ${target.name}`);
      continue;
    }
    names.add(target.name);
    targets.push(target as FuzzTarget);
  }
  return { targets, failures };
}

/** FNV-1a over the target name, folded into the seed: per-target streams independent of others. */
export function targetSeed(seed: bigint, name: string): bigint {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return BigInt.asUintN(64, seed * 0x9e3779b97f4a7c15n + BigInt(hash));
}

function iterationPrng(seed: bigint, name: string, iteration: number): Prng {
  return new Prng(BigInt.asUintN(64, targetSeed(seed, name) ^ (BigInt(iteration) * 0xbf58476d1ce4e5b9n)));
}

export interface FuzzRunOptions {
  readonly iterations: number;
  readonly seed: bigint;
  /** Called for every failure as it happens (the CLI prints them). */
  readonly onFailure?: (failure: FuzzFailure) => void;
}

/** Fuzzes one target for `iterations` inputs. */
export function fuzzTarget(target: FuzzTarget, options: FuzzRunOptions): TargetReport {
  const started = performance.now();
  const outcomes = new Map<string, number>();
  let failures = 0;
  const report = (failure: FuzzFailure): void => {
    failures++;
    options.onFailure?.(failure);
  };
  let seeds: Uint8Array[];
  try {
    seeds = target.seeds(iterationPrng(options.seed, target.name, -1)).map((s) => s.slice());
  } catch (error) {
    report({ target: target.name, iteration: -1, seed: options.seed.toString(), kind: 'seeds', detail: describe(error), inputHex: '' });
    seeds = [];
  }
  for (let iteration = 0; iteration < options.iterations; iteration++) {
    const prng = iterationPrng(options.seed, target.name, iteration);
    const input = nextInput(prng, seeds);
    const outcome = runTwice(target, input, prng);
    if (typeof outcome === 'string') {
      const cls = outcome.split(':', 1)[0] ?? outcome;
      outcomes.set(cls, (outcomes.get(cls) ?? 0) + 1);
    } else {
      report({ target: target.name, iteration, seed: options.seed.toString(), ...outcome, inputHex: toHex(input) });
    }
  }
  return { name: target.name, inputs: options.iterations, failures, outcomes, millis: performance.now() - started };
}

/** The summary, or what went wrong. */
export function runTwice(
  target: FuzzTarget,
  input: Uint8Array,
  prng: Prng,
): string | { kind: FuzzFailure['kind']; detail: string } {
  const exact = input.slice();
  const before = 1 + prng.below(64);
  const after = 1 + prng.below(64);
  const host = prng.bytes(before + input.length + after);
  host.set(input, before);
  const embedded = host.subarray(before, before + input.length);
  let first: unknown;
  let second: unknown;
  try {
    first = target.run(exact);
  } catch (error) {
    return { kind: 'exception', detail: `exact copy: ${describe(error)}` };
  }
  try {
    second = target.run(embedded);
  } catch (error) {
    return { kind: 'exception', detail: `embedded copy: ${describe(error)}` };
  }
  if (typeof first !== 'string' || typeof second !== 'string') {
    return { kind: 'bad-summary', detail: `run returned ${typeof first} / ${typeof second}, not a string` };
  }
  if (first !== second) return { kind: 'over-read', detail: `exact "${first}" vs embedded "${second}"` };
  return first;
}

// ─── input generation ──────────────────────────────────────────────────────────────────────────

const LENGTHS = [0, 1, 2, 7, 8, 47, 48, 49, 255, 256, 257, 303, 304, 511, 512, 1024, 4096] as const;
const U32_BOUNDARIES = [0, 1, 2, 29, 30, 47, 48, 255, 256, 257, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff] as const;
const U64_BOUNDARIES = [0n, 1n, 0xffff_ffffn, 0x1_0000_0000n, 1n << 53n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n] as const;
const BYTE_VALUES = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe, 0x1d, 0x1e] as const;

/** One input: random bytes (20%), a seed as is (5%), or a seed with 1..4 (sometimes 16) mutations. */
export function nextInput(prng: Prng, seeds: readonly Uint8Array[]): Uint8Array {
  const roll = prng.below(100);
  if (seeds.length === 0 || roll < 20) return randomInput(prng);
  const seed = prng.pick(seeds);
  if (roll < 25) return seed.slice();
  let input: Uint8Array = seed.slice();
  const mutations = prng.chance(1, 8) ? 1 + prng.below(16) : 1 + prng.below(4);
  for (let i = 0; i < mutations; i++) input = mutate(prng, input, seeds);
  return input;
}

function randomLength(prng: Prng): number {
  const roll = prng.below(100);
  if (roll < 40) return prng.pick(LENGTHS);
  if (roll < 70) return prng.below(300);
  if (roll < 98) return prng.below(4096);
  return 65_536 + prng.below(65_536);
}

export function randomInput(prng: Prng): Uint8Array {
  const bytes = new Uint8Array(randomLength(prng));
  const style = prng.below(4);
  if (style === 0) return bytes;
  if (style === 1) return bytes.fill(prng.pick(BYTE_VALUES));
  return prng.fill(bytes);
}

/** One mutation of `input` (which it may modify); returns the mutated bytes. */
export function mutate(prng: Prng, input: Uint8Array, seeds: readonly Uint8Array[]): Uint8Array {
  const length = input.length;
  switch (prng.below(11)) {
    case 0: // bit flip
      if (length > 0) flipBit(input, prng.below(length * 8));
      return input;
    case 1: // byte set to a boundary value
      if (length > 0) input[prng.below(length)] = prng.pick(BYTE_VALUES);
      return input;
    case 2: // random byte
      if (length > 0) input[prng.below(length)] = prng.below(256);
      return input;
    case 3: // truncation (often at a structural boundary)
      return input.slice(0, prng.chance(1, 2) ? prng.below(length + 1) : Math.min(length, prng.pick(LENGTHS)));
    case 4: // extension with zeros or random bytes
      return concat(input, prng.chance(1, 2) ? new Uint8Array(prng.below(64)) : prng.bytes(prng.below(300)));
    case 5: // splice: part of a seed over part of the input
      return splice(prng, input, prng.pick(seeds));
    case 6: // u32 overwrite with a boundary value (or the input's own length ± 1)
      return overwrite(prng, input, 4, () => {
        const pick = prng.below(4);
        if (pick === 0) return BigInt((length + prng.range(-1, 1)) >>> 0);
        if (pick === 1) return BigInt((length - 256 + prng.range(-1, 1)) >>> 0);
        return BigInt(prng.pick(U32_BOUNDARIES));
      });
    case 7: // u64 overwrite with a boundary value
      return overwrite(prng, input, 8, () => (prng.chance(1, 4) ? BigInt(length) : prng.pick(U64_BOUNDARIES)));
    case 8: // duplicate a range
      if (length === 0) return input;
      {
        const from = prng.below(length);
        const to = from + prng.below(Math.min(512, length - from) + 1);
        const at = prng.below(length + 1);
        return concat(concat(input.subarray(0, at), input.slice(from, to)), input.subarray(at));
      }
    case 9: // delete a range
      if (length === 0) return input;
      {
        const from = prng.below(length);
        const to = from + prng.below(Math.min(512, length - from) + 1);
        return concat(input.subarray(0, from), input.subarray(to));
      }
    default: // several bytes of one value (zeroing or saturating a field)
      if (length > 0) {
        const from = prng.below(length);
        input.fill(prng.pick(BYTE_VALUES), from, Math.min(length, from + 1 + prng.below(16)));
      }
      return input;
  }
}

function flipBit(bytes: Uint8Array, bit: number): void {
  const at = bit >> 3;
  bytes[at] = (bytes[at] ?? 0) ^ (1 << (bit & 7));
}

function overwrite(prng: Prng, input: Uint8Array, width: 4 | 8, value: () => bigint): Uint8Array {
  if (input.length < width) return input;
  let at = prng.below(input.length - width + 1);
  if (prng.bool()) at -= at % width;
  let v = value();
  for (let i = 0; i < width; i++) {
    input[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return input;
}

function splice(prng: Prng, input: Uint8Array, other: Uint8Array): Uint8Array {
  if (other.length === 0) return input;
  const from = prng.below(other.length);
  const piece = other.subarray(from, from + 1 + prng.below(other.length - from));
  const at = prng.below(input.length + 1);
  const out = new Uint8Array(Math.max(input.length, at + piece.length));
  out.set(input);
  out.set(piece, at);
  return prng.chance(1, 2) ? out : out.slice(0, Math.max(input.length, at));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
