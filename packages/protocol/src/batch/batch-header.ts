import { readU32LE, readU64LE } from './bytes-le.js';
import { checkLayout, frozenLayout } from './layout.js';

/**
 * The 256-byte batch header (messages.mdx). Little-endian throughout.
 *
 *   0        8        16         24           32       40         48    52           256
 *   ┌────────┬────────┬──────────┬────────────┬────────┬──────────┬─────┬────────────┐
 *   │partition│ base   │ base     │ origin     │ batch  │ batch    │count│ reserved   │
 *   │_id      │ offset │ timestamp│ timestamp  │ length │ checksum │ u32 │ (zero)     │
 *   └────────┴────────┴──────────┴────────────┴────────┴──────────┴─────┴────────────┘
 *   server-stamped ─────────────┘ producer ───────────────────────────────┘
 */
export const BATCH_HEADER = frozenLayout({
  partitionId: { offset: 0, size: 8 },
  baseOffset: { offset: 8, size: 8 },
  baseTimestamp: { offset: 16, size: 8 },
  originTimestamp: { offset: 24, size: 8 },
  batchLength: { offset: 32, size: 8 },
  batchChecksum: { offset: 40, size: 8 },
  messageCount: { offset: 48, size: 4 },
  reserved: { offset: 52, size: 204 },
});

export const BATCH_HEADER_SIZE = 256;
checkLayout('batch header', BATCH_HEADER, BATCH_HEADER_SIZE);

/** Decoded batch header (control path: bigints). Hot paths read fields in place. */
export interface BatchHeader {
  readonly partitionId: bigint;
  readonly baseOffset: bigint;
  readonly baseTimestamp: bigint;
  readonly originTimestamp: bigint;
  readonly batchLength: bigint;
  readonly batchChecksum: bigint;
  readonly messageCount: number;
}

/** Reads the header fields of `bytes[0, 256)`; null when fewer than 256 bytes are given. */
export function readBatchHeader(bytes: Uint8Array): BatchHeader | null {
  if (bytes.length < BATCH_HEADER_SIZE) return null;
  return {
    partitionId: readU64LE(bytes, BATCH_HEADER.partitionId.offset),
    baseOffset: readU64LE(bytes, BATCH_HEADER.baseOffset.offset),
    baseTimestamp: readU64LE(bytes, BATCH_HEADER.baseTimestamp.offset),
    originTimestamp: readU64LE(bytes, BATCH_HEADER.originTimestamp.offset),
    batchLength: readU64LE(bytes, BATCH_HEADER.batchLength.offset),
    batchChecksum: readU64LE(bytes, BATCH_HEADER.batchChecksum.offset),
    messageCount: readU32LE(bytes, BATCH_HEADER.messageCount.offset),
  };
}
