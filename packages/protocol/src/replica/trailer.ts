/**
 * The 8-byte XXH3 trailer shared by the state-transfer formats (ISM1 manifest, ICT2 client
 * table, ICO1 consumer offsets; replication-semantics.md §2.7): XXH3-64 of every byte before it,
 * little-endian. Decoders check it first, before trusting any other byte.
 */
import { xxh3_64 } from '../hash/xxh3.js';
import { readU64Big, writeU64Big } from './little-endian.js';

export const TRAILER_SIZE = 8;

/** The content before a verified trailer, or a reason (`truncated`, `trailer_mismatch`). */
export function splitVerifiedTrailer(bytes: Uint8Array): Uint8Array | string {
  if (bytes.length < TRAILER_SIZE) return 'truncated';
  const contentLength = bytes.length - TRAILER_SIZE;
  const content = bytes.subarray(0, contentLength);
  if (readU64Big(bytes, contentLength) !== xxh3_64(content)) return 'trailer_mismatch';
  return content;
}

/** Appends the trailer in place: `out` holds content in `[0, length - 8)`. */
export function writeTrailer(out: Uint8Array): Uint8Array {
  const contentLength = out.length - TRAILER_SIZE;
  writeU64Big(out, contentLength, xxh3_64(out.subarray(0, contentLength)));
  return out;
}

/** True when `bytes[at, at + 4)` equal the 4 ASCII characters of `magic`. */
export function hasMagic(bytes: Uint8Array, at: number, magic: string): boolean {
  for (let i = 0; i < 4; i++) if (bytes[at + i] !== magic.charCodeAt(i)) return false;
  return true;
}

export function writeMagic(out: Uint8Array, at: number, magic: string): void {
  for (let i = 0; i < 4; i++) out[at + i] = magic.charCodeAt(i);
}
