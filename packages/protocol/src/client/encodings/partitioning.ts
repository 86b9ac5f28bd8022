import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';

/**
 * Partitioning (encodings.mdx; core/binary_protocol/src/primitives/partitioning.rs):
 * `[kind: u8][length: u8][value: 0-255 bytes]`
 *   1 Balanced:    length 0
 *   2 PartitionId: length 4, u32 LE
 *   3 MessagesKey: length 1..255, raw key bytes (not necessarily UTF-8)
 * Rejected (rust_test_values.json `partitioning.rejected_hex`): `0300` (empty key), `ff00` (unknown
 * kind), `010100` (balanced with a value), `0203000000` (partition id of 3 bytes).
 */
export const PartitioningKind = { Balanced: 1, PartitionId: 2, MessagesKey: 3 } as const;
export const MESSAGES_KEY_LENGTH_MAX = 255;

export type Partitioning =
  | { readonly kind: 'balanced' }
  | { readonly kind: 'partition_id'; readonly partitionId: number }
  | { readonly kind: 'messages_key'; readonly key: Uint8Array };

export function partitioningByteLength(p: Partitioning): number {
  if (p.kind === 'balanced') return 2;
  if (p.kind === 'partition_id') return 6;
  return 2 + p.key.length;
}

export function writePartitioning(w: ByteWriter, p: Partitioning): void {
  switch (p.kind) {
    case 'balanced':
      w.u8(PartitioningKind.Balanced).u8(0);
      return;
    case 'partition_id':
      assert(Number.isInteger(p.partitionId) && p.partitionId >= 0 && p.partitionId <= 0xffff_ffff, `partition id ${p.partitionId}`);
      w.u8(PartitioningKind.PartitionId).u8(4).u32(p.partitionId);
      return;
    case 'messages_key':
      assert(p.key.length >= 1 && p.key.length <= MESSAGES_KEY_LENGTH_MAX, `messages key of ${p.key.length} bytes`);
      w.u8(PartitioningKind.MessagesKey).u8(p.key.length).bytes(p.key);
      return;
  }
}

export function readPartitioning(r: ByteReader): Partitioning {
  const kind = r.u8('partitioning_kind');
  const length = r.u8('partitioning_length');
  if (r.failed) return { kind: 'balanced' };
  switch (kind) {
    case PartitioningKind.Balanced:
      if (length !== 0) r.fail('balanced_partitioning_with_value');
      return { kind: 'balanced' };
    case PartitioningKind.PartitionId:
      if (length !== 4) r.fail('partition_id_partitioning_length');
      return { kind: 'partition_id', partitionId: r.u32('partitioning_partition_id') };
    case PartitioningKind.MessagesKey:
      if (length === 0) r.fail('empty_messages_key');
      return { kind: 'messages_key', key: r.bytesView(length, 'messages_key') };
    default:
      r.fail('unknown_partitioning_kind');
      return { kind: 'balanced' };
  }
}

export function encodePartitioning(p: Partitioning): Uint8Array {
  return encodeWith((w) => writePartitioning(w, p));
}

export function decodePartitioning(bytes: Uint8Array): Decoded<Partitioning> {
  return decodeExact(bytes, readPartitioning);
}
