import { xxh3_64 } from '../hash/xxh3.js';
import { BATCH_HEADER } from './batch-header.js';

/**
 * `batch_checksum` = XXH3-64 over
 *
 *   partition_id | base_offset | base_timestamp | origin_timestamp | batch_length | message_count | cs_0 | cs_1 | …
 *   └──────────────── header bytes 0..40 (5 × u64) ──────────────┘ └ bytes 48..52 ┘ └ each frame's 8 stored checksum bytes ┘
 *
 * The input is assembled in ONE scratch buffer (never a buffer per frame): 44 field bytes, then
 * 8 bytes per frame. The scratch is module state, grown by doubling and retained up to
 * `SCRATCH_RETAIN_BYTES` (131,066 frames); a larger batch gets a one-off buffer. Every user of
 * the scratch is synchronous, so no two calls can interleave on one thread.
 */
export const BATCH_CHECKSUM_FIELDS_SIZE = 44;
const SCRATCH_RETAIN_BYTES = 1 << 20;

export interface ChecksumScratch {
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

function newScratch(size: number): ChecksumScratch {
  const bytes = new Uint8Array(size);
  return { bytes, view: new DataView(bytes.buffer) };
}

let shared = newScratch(16 * 1024);

/** A scratch with room for the header fields and `frames` checksums. */
export function checksumScratch(frames: number): ChecksumScratch {
  const needed = batchChecksumInputSize(frames);
  if (needed <= shared.bytes.length) return shared;
  if (needed > SCRATCH_RETAIN_BYTES) return newScratch(needed);
  let size = shared.bytes.length;
  while (size < needed) size *= 2;
  shared = newScratch(size);
  return shared;
}

export function batchChecksumInputSize(frames: number): number {
  return BATCH_CHECKSUM_FIELDS_SIZE + 8 * frames;
}

/** Offset in the scratch of frame `index`'s checksum slot. */
export function checksumSlot(index: number): number {
  return BATCH_CHECKSUM_FIELDS_SIZE + 8 * index;
}

/**
 * Copies the checksummed header fields of the batch header at `header[0, 256)` into the scratch
 * and hashes the scratch with `frames` checksum slots (already filled by the caller).
 */
export function hashBatchChecksumInput(header: Uint8Array, scratch: ChecksumScratch, frames: number): bigint {
  const fieldsEnd = BATCH_HEADER.batchLength.offset + BATCH_HEADER.batchLength.size;
  const count = BATCH_HEADER.messageCount.offset;
  const out = scratch.bytes;
  for (let i = 0; i < fieldsEnd; i++) out[i] = header[i] as number;
  for (let i = 0; i < BATCH_HEADER.messageCount.size; i++) out[fieldsEnd + i] = header[count + i] as number;
  return xxh3_64(out.subarray(0, batchChecksumInputSize(frames)));
}
