/**
 * XXH3-64 with seed 0 and the default secret: the only hash of the protocol's seals, prepare
 * identities, batch and frame checksums, manifests and artifact checksums.
 *
 * Implementation chosen by bench/micro (`npm run bench:micro -- hash`): `@node-rs/xxhash`
 * (xxhash-rust behind N-API, prebuilt per platform as optional dependencies, no install script).
 * Its one-shot `xxh64` wins below a few KiB (the per-call cost is dominated by the N-API
 * crossing); its streaming `Xxh3` object, reused, runs the SIMD long-input path and wins above
 * (`LONG_INPUT_MIN`). If the native binding is missing on a platform, `hash-wasm` (identical
 * output, verified by the same vectors) takes over.
 */
export type Xxh3Backend = 'node-rs' | 'hash-wasm';

interface Backend {
  readonly name: Xxh3Backend;
  oneShot(bytes: Uint8Array): bigint;
  long(bytes: Uint8Array): bigint;
  stream(): Xxh3Stream;
}

/** Incremental XXH3-64 (seed 0): for inputs too large to hold at once (state-transfer artifacts). */
export interface Xxh3Stream {
  update(bytes: Uint8Array): Xxh3Stream;
  digest(): bigint;
}

/**
 * Inputs at or above this length use the reused streaming state (measured crossover).
 * `npm run bench:micro -- hash` (Node 20.20, 2 vCPU EPYC): the one-shot call wins up to 1.5 KiB
 * (1 KiB: ~590 vs ~730 ns), the reused object from 2 KiB on (2 KiB: ~1,050 vs ~770 ns; 4 KiB:
 * ~2,600 vs ~1,240 ns), 1.75 KiB flips between runs. Was 4096, which left 2..4 KiB inputs on
 * the slower path.
 */
export const LONG_INPUT_MIN = 2048;

type NodeRsModule = typeof import('@node-rs/xxhash');

const nodeRs: NodeRsModule | null = await import('@node-rs/xxhash').then(
  (m) => ((m as { default?: NodeRsModule }).default ?? m) as NodeRsModule,
  () => null,
);

function loadNodeRs(): Backend | null {
  if (nodeRs === null) return null;
  try {
    const mod = nodeRs;
    const streaming = mod.xxh3.Xxh3.withSeed(0n);
    const oneShot = mod.xxh3.xxh64;
    // Smoke-check the binding against XXH3("") before trusting it.
    if (oneShot(new Uint8Array(0)) !== 0x2d06800538d394c2n) return null;
    return {
      name: 'node-rs',
      oneShot: (bytes) => oneShot(bytes),
      long: (bytes) => {
        streaming.reset();
        streaming.update(bytes);
        return streaming.digest();
      },
      stream: () => {
        const state = mod.xxh3.Xxh3.withSeed(0n);
        const self: Xxh3Stream = {
          update: (bytes) => {
            state.update(bytes);
            return self;
          },
          digest: () => state.digest(),
        };
        return self;
      },
    };
  } catch {
    return null;
  }
}

async function loadHashWasm(): Promise<Backend> {
  const { createXXHash3 } = await import('hash-wasm');
  const hasher = await createXXHash3(0, 0);
  const digest = (bytes: Uint8Array): bigint => {
    hasher.init();
    hasher.update(bytes);
    const out = hasher.digest('binary');
    let value = 0n;
    for (let i = 0; i < 8; i++) value = (value << 8n) | BigInt(out[i] as number);
    return value;
  };
  // hash-wasm hashers are created asynchronously, so the fallback shares one streaming hasher: a
  // new stream supersedes any unfinished one, and a superseded stream refuses further use.
  const streamHasher = await createXXHash3(0, 0);
  let generation = 0;
  const stream = (): Xxh3Stream => {
    const mine = ++generation;
    streamHasher.init();
    const live = (): void => {
      if (mine !== generation) throw new Error('Xxh3Stream superseded by a newer stream (hash-wasm fallback)');
    };
    const self: Xxh3Stream = {
      update: (bytes) => {
        live();
        streamHasher.update(bytes);
        return self;
      },
      digest: () => {
        live();
        const out = streamHasher.digest('binary');
        return new DataView(out.buffer, out.byteOffset, 8).getBigUint64(0, false);
      },
    };
    return self;
  };
  return { name: 'hash-wasm', oneShot: digest, long: digest, stream };
}

let backend: Backend = loadNodeRs() ?? (await loadHashWasm());

/** Which implementation is live (reported by the benchmark and the vectors runner). */
export function xxh3Backend(): Xxh3Backend {
  return backend.name;
}

/** For tests and the benchmark: force a backend (both must agree on every vector). */
export async function useXxh3Backend(name: Xxh3Backend): Promise<void> {
  if (name === 'hash-wasm') {
    backend = await loadHashWasm();
    return;
  }
  const native = loadNodeRs();
  if (native === null) throw new Error('@node-rs/xxhash is not available on this platform');
  backend = native;
}

/** XXH3-64 (seed 0) of `bytes` as an unsigned 64-bit bigint. */
export function xxh3_64(bytes: Uint8Array): bigint {
  return bytes.length >= LONG_INPUT_MIN ? backend.long(bytes) : backend.oneShot(bytes);
}

/** A fresh incremental XXH3-64 state; `digest()` ends it. */
export function createXxh3Stream(): Xxh3Stream {
  return backend.stream();
}

/** XXH3-64 of `bytes[start, end)` without copying. */
export function xxh3_64Range(bytes: Uint8Array, start: number, end: number): bigint {
  return xxh3_64(bytes.subarray(start, end));
}
