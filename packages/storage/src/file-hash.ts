/**
 * XXH3-64 (seed 0) over a byte range of a file without holding the range in memory: the
 * state-transfer artifact checksum of a segment `.log` (up to 1 GiB) is computed chunk by chunk.
 *
 * `@shoal/protocol`'s `xxh3_64` is one-shot; the streaming state comes from the same library
 * (`@node-rs/xxhash` `Xxh3`), with `hash-wasm` as the fallback exactly as in protocol. The test
 * suite checks both against `xxh3_64` on the same bytes.
 */
import { xxh3_64 } from '@shoal/protocol';
import type { Disk, Fd } from './disk.js';

interface StreamingXxh3 {
  reset(): void;
  update(bytes: Uint8Array): void;
  digest(): bigint;
}

type NodeRsModule = typeof import('@node-rs/xxhash');

const nodeRs: NodeRsModule | null = await import('@node-rs/xxhash').then(
  (m) => ((m as { default?: NodeRsModule }).default ?? m) as NodeRsModule,
  () => null,
);

async function loadStreaming(): Promise<StreamingXxh3> {
  if (nodeRs !== null) {
    try {
      const state = nodeRs.xxh3.Xxh3.withSeed(0n);
      return { reset: () => state.reset(), update: (b) => state.update(b), digest: () => state.digest() };
    } catch {
      // fall through to hash-wasm
    }
  }
  const { createXXHash3 } = await import('hash-wasm');
  const hasher = await createXXHash3(0, 0);
  return {
    reset: () => {
      hasher.init();
    },
    update: (b) => {
      hasher.update(b);
    },
    digest: () => {
      const out = hasher.digest('binary');
      let value = 0n;
      for (let i = 0; i < 8; i++) value = (value << 8n) | BigInt(out[i] as number);
      return value;
    },
  };
}

const streaming = await loadStreaming();

/** Bytes read per chunk when hashing a file range. */
export const FILE_HASH_CHUNK = 4 << 20;

/**
 * XXH3-64 of `[position, position + length)` of `fd`. Returns null when the file is shorter than
 * the range (the artifact changed under us). Throws DiskError on I/O failure.
 */
export function xxh3OfFileRange(disk: Disk, fd: Fd, position: number, length: number, scratch?: Uint8Array): bigint | null {
  if (length <= FILE_HASH_CHUNK) {
    const buffer = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = disk.read(fd, buffer, done, length - done, position + done);
      if (n === 0) return null;
      done += n;
    }
    return xxh3_64(buffer);
  }
  const buffer = scratch !== undefined && scratch.length >= FILE_HASH_CHUNK ? scratch : new Uint8Array(FILE_HASH_CHUNK);
  streaming.reset();
  let done = 0;
  while (done < length) {
    const want = Math.min(FILE_HASH_CHUNK, length - done);
    let got = 0;
    while (got < want) {
      const n = disk.read(fd, buffer, got, want - got, position + done + got);
      if (n === 0) return null;
      got += n;
    }
    streaming.update(buffer.subarray(0, want));
    done += want;
  }
  return streaming.digest();
}

/** Streaming XXH3-64 over several in-memory parts (equal to `xxh3_64` of their concatenation). */
export function xxh3OfParts(parts: readonly Uint8Array[]): bigint {
  if (parts.length === 1) return xxh3_64(parts[0] as Uint8Array);
  streaming.reset();
  for (const part of parts) streaming.update(part);
  return streaming.digest();
}
