import { describe, expect, it } from 'vitest';
import { packPartitionGroup } from '@shoal/protocol';
import { murmur3OfU64, shardOfGroup } from '../src/shard/shard-of.js';
import { makeToken, nextGeneration, tokenGeneration, tokenShard, tokenSlot } from '../src/client-plane/token.js';

/** MurmurHash3 x86_32 of any byte string, written from the algorithm's description (test oracle). */
function murmur3(bytes: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const blocks = bytes.length >> 2;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < blocks; i++) {
    let k = Math.imul(view.getUint32(i * 4, true), c1);
    k = Math.imul((k << 15) | (k >>> 17), c2);
    h ^= k;
    h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0;
  }
  const tail = blocks * 4;
  const rest = bytes.length & 3;
  if (rest > 0) {
    let k = 0;
    for (let i = rest - 1; i >= 0; i--) k = (k << 8) | (bytes[tail + i] as number);
    k = Math.imul(k, c1);
    k = Math.imul((k << 15) | (k >>> 17), c2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

describe('partition group → shard', () => {
  it('the oracle reproduces the published MurmurHash3 x86_32 vectors', () => {
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(murmur3(text(''), 0)).toBe(0);
    expect(murmur3(text(''), 1)).toBe(0x514e28b7);
    expect(murmur3(text('The quick brown fox jumps over the lazy dog'), 0)).toBe(0x2e4ff723);
  });

  it('hashes the 8 little-endian bytes of the group exactly as the oracle does', () => {
    for (const g of [0n, 1n, 0x5_0020_0007n, 0xfff_ffff_423fn, (1n << 63n) - 1n, 123456789n]) {
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setBigUint64(0, g, true);
      expect(murmur3OfU64(g)).toBe(murmur3(bytes, 0));
    }
  });

  it("puts a topic's partitions round-robin over the shards, from a per-topic start; always shard 0 with one shard", () => {
    const starts = new Set<number>();
    for (let stream = 0; stream < 20; stream++) {
      for (let topic = 0; topic < 3; topic++) {
        for (const shards of [2, 3, 4]) {
          const counts = new Array<number>(shards).fill(0);
          for (let partition = 0; partition < 8; partition++) {
            const g = packPartitionGroup(stream, topic, partition);
            if (!g.ok) throw new Error('pack');
            expect(shardOfGroup(g.value, 1)).toBe(0);
            const shard = shardOfGroup(g.value, shards);
            counts[shard] = (counts[shard] as number) + 1;
            if (partition === 0 && shards === 4) starts.add(shard);
          }
          expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        }
      }
    }
    expect(starts.size).toBe(4); // topics start on different shards
  });
});

describe('connection tokens', () => {
  it('round-trip shard, slot and generation below 2^53', () => {
    for (const [shard, slot, generation] of [[0, 0, 1], [255, 2 ** 20 - 1, 2 ** 25 - 1], [3, 17, 42]] as const) {
      const token = makeToken(shard, slot, generation);
      expect(Number.isSafeInteger(token)).toBe(true);
      expect([tokenShard(token), tokenSlot(token), tokenGeneration(token)]).toEqual([shard, slot, generation]);
    }
    expect(nextGeneration(2 ** 25 - 1)).toBe(1);
  });
});
