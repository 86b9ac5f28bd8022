/**
 * Consensus group ids (replication-semantics.md §10.1, cluster.mdx "Consensus planes").
 *
 *   metadata group   = 1 << 63
 *   partition group  = stream << 32 | topic << 20 | partition
 *
 *   bit 63   62 ......... 52  51 ........ 32  31 ...... 20  19 ........ 0
 *   [ 0 ] [ zero (11 bits) ] [ stream (20) ] [ topic (12) ] [ partition (20) ]
 *
 * stream < 2^20, topic < 2^12, partition < 1_000_000 (not 2^20). Out-of-range components are
 * refused, never masked.
 */
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { readU32 } from './little-endian.js';

export const METADATA_GROUP = 1n << 63n;

export const STREAM_BITS = 20;
export const TOPIC_BITS = 12;
export const PARTITION_BITS = 20;
export const STREAM_SHIFT = 32;
export const TOPIC_SHIFT = 20;
/** Exclusive upper bounds of the three components. */
export const STREAM_ID_LIMIT = 1 << STREAM_BITS;
export const TOPIC_ID_LIMIT = 1 << TOPIC_BITS;
export const PARTITION_ID_LIMIT = 1_000_000;

export interface PartitionNamespace {
  readonly stream: number;
  readonly topic: number;
  readonly partition: number;
}

function inRange(value: number, limit: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < limit;
}

/** Packs a partition group; a reason if any component is out of range. */
export function packPartitionGroup(stream: number, topic: number, partition: number): Decoded<bigint> {
  if (!inRange(stream, STREAM_ID_LIMIT)) return fail('stream_id_out_of_range');
  if (!inRange(topic, TOPIC_ID_LIMIT)) return fail('topic_id_out_of_range');
  if (!inRange(partition, PARTITION_ID_LIMIT)) return fail('partition_id_out_of_range');
  return ok((BigInt(stream) << 32n) | (BigInt(topic) << 20n) | BigInt(partition));
}

/** Unpacks a partition group; a reason for the metadata group or any bit pattern pack can't make. */
export function unpackPartitionGroup(group: bigint): Decoded<PartitionNamespace> {
  if (group === METADATA_GROUP) return fail('metadata_group');
  if (group < 0n || group >= 1n << 52n) return fail('group_reserved_bits_set');
  const stream = Number(group >> 32n);
  const topic = Number((group >> 20n) & 0xfffn);
  const partition = Number(group & 0xf_ffffn);
  if (partition >= PARTITION_ID_LIMIT) return fail('partition_id_out_of_range');
  return ok({ stream, topic, partition });
}

export function isMetadataGroup(group: bigint): boolean {
  return group === METADATA_GROUP;
}

/** Hot path: true when the u64 group field at `at` is 1 << 63, without a bigint. */
export function isMetadataGroupAt(bytes: Uint8Array, at: number): boolean {
  return readU32(bytes, at) === 0 && readU32(bytes, at + 4) === 0x8000_0000;
}
