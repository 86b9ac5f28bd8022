import xxhash from 'xxhash-wasm';
import { ShoalInvalidArgumentError } from './errors.js';
import { payloadBytes } from './messages.js';

/**
 * Client-side partition selection, resolved before a batch is sent so that it can go straight to
 * the partition's primary (the Rust, Go, Java and C# SDKs do the same and send Partitioning kind 2).
 *
 * - balanced: round robin over the topic's partitions, per producer, one partition per send call;
 * - partition id: as given (0-based);
 * - messages key: XXH32(key bytes, seed 0) mod partitions count: the same function the reference
 *   server applies to a MessagesKey partitioning (`calculate_partition_id_by_messages_key_hash`),
 *   so keyed messages land where a server-resolved key would put them.
 */
type Xxh32 = (bytes: Uint8Array) => number;

let loading: Promise<Xxh32> | null = null;
let loaded: Xxh32 | null = null;

/** Loads the WASM XXH32 once. */
export function loadXxh32(): Promise<Xxh32> {
  if (loading === null) {
    loading = xxhash().then((api) => {
      loaded = (bytes: Uint8Array) => api.h32Raw(bytes, 0) >>> 0;
      return loaded;
    });
  }
  return loading;
}

/** XXH32 (seed 0) of the key; `loadXxh32()` must have resolved. */
export function xxh32Sync(key: Uint8Array): number {
  if (loaded === null) throw new ShoalInvalidArgumentError('xxh32 not loaded yet: await loadXxh32() first');
  return loaded(key);
}

export function keyBytes(key: string | Uint8Array): Uint8Array {
  const bytes = payloadBytes(key);
  if (bytes.length < 1 || bytes.length > 255) throw new ShoalInvalidArgumentError(`a messages key must be 1..255 bytes (got ${bytes.length})`);
  return bytes;
}

/** The partition (0-based) a messages key maps to. */
export async function partitionForKey(key: string | Uint8Array, partitionsCount: number): Promise<number> {
  const hash = await loadXxh32();
  return partitionForKeySync(key, partitionsCount, hash);
}

export function partitionForKeySync(key: string | Uint8Array, partitionsCount: number, hash: Xxh32 = xxh32Sync): number {
  if (!Number.isInteger(partitionsCount) || partitionsCount < 1) throw new ShoalInvalidArgumentError(`topic has ${partitionsCount} partitions`);
  return hash(keyBytes(key)) % partitionsCount;
}

/** Round robin over `0..count-1`; the count may change between calls (partitions added). */
export class BalancedPartitioner {
  #next = 0;

  next(partitionsCount: number): number {
    if (!Number.isInteger(partitionsCount) || partitionsCount < 1) throw new ShoalInvalidArgumentError(`topic has ${partitionsCount} partitions`);
    const partition = this.#next % partitionsCount;
    this.#next = (partition + 1) % partitionsCount;
    return partition;
  }
}
