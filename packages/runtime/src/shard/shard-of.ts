/**
 * Which thread owns a consensus group:
 *
 *   metadata group 1<<63      → the metadata worker (its own thread here; the reference's shard 0)
 *   partition group g         → shard (murmur3_x86_32(seed 0, 8 LE bytes of g >> 20) + (g & 0xFFFFF)) % S
 *
 * g is the packed namespace `stream << 32 | topic << 20 | partition` (replication-semantics.md
 * §10.1): `g >> 20` is the topic (stream and topic ids), `g & 0xFFFFF` the partition id. So a
 * topic's partitions go round-robin over the shards, starting at a shard hashed from the topic:
 * a topic with P partitions puts ceil(P/S) or floor(P/S) on each shard, and different topics do
 * not all start at shard 0. The reference hashes the whole group (`murmur3(g) >> 16) % S`,
 * §10.2), which leaves e.g. 5 of 8 partitions of a topic on one of 2 shards; within one node the
 * function is a local choice (shard counts differ between nodes anyway), and it is fixed: every
 * thread computes the same owner with no table. S = 1 puts every partition on shard 0.
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3 x86_32 of the 8 little-endian bytes of a u64. */
export function murmur3OfU64(value: bigint, seed = 0): number {
  const lo = Number(value & 0xffff_ffffn);
  const hi = Number((value >> 32n) & 0xffff_ffffn);
  let h = seed >>> 0;
  h = mixBlock(h, lo);
  h = mixBlock(h, hi);
  h ^= 8; // length in bytes
  return fmix32(h);
}

function mixBlock(h: number, block: number): number {
  let k = Math.imul(block, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard (0-based) owning partition group `group` among `shardCount` shards. */
export function shardOfGroup(group: bigint, shardCount: number): number {
  if (shardCount <= 1) return 0;
  const topicHash = murmur3OfU64(group >> 20n);
  const partition = Number(group & 0xf_ffffn);
  return (((topicHash % shardCount) + (partition % shardCount)) % shardCount);
}
