import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';

/**
 * Optional partition id (encodings.mdx): 5 fixed bytes `[flag: u8][partition_id: u32]`; flag 1 =
 * set, flag 0 = none and the value bytes zero (what the encoder writes). Read as the reference
 * reads it (requests/messages/poll_messages.rs, consumer_offsets/*): set exactly when the flag is
 * 1; any other flag means none and the value bytes are ignored.
 */
export const OPTIONAL_PARTITION_ID_LENGTH = 5;

export function writeOptionalPartitionId(w: ByteWriter, partitionId: number | null): void {
  if (partitionId === null) {
    w.u8(0).u32(0);
    return;
  }
  assert(Number.isInteger(partitionId) && partitionId >= 0 && partitionId <= 0xffff_ffff, `partition id ${partitionId}`);
  w.u8(1).u32(partitionId);
}

export function readOptionalPartitionId(r: ByteReader): number | null {
  const flag = r.u8('partition_flag');
  const value = r.u32('partition_id');
  if (r.failed) return null;
  return flag === 1 ? value : null;
}

export function encodeOptionalPartitionId(partitionId: number | null): Uint8Array {
  return encodeWith((w) => writeOptionalPartitionId(w, partitionId));
}

export function decodeOptionalPartitionId(bytes: Uint8Array): Decoded<number | null> {
  return decodeExact(bytes, readOptionalPartitionId);
}
