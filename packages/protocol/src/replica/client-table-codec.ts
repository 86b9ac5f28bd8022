/**
 * ICT2: the client table as a state-transfer artifact (replication-semantics.md §7.6),
 * little-endian:
 *
 *   "ICT2"                       49 43 54 32
 *   count               u32      occupied entries, <= 65536
 *   count x entry, in slot order:
 *     client_id           u128
 *     epoch               u64
 *     user_id             u32
 *     watermark           u64
 *     watermark_checksum  u128
 *     ring_len            u8     1..=5
 *     ring_len x { reply_len u32, reply_bytes[reply_len] }   oldest first
 *   trailer             u64      XXH3-64 of every byte before it
 *
 * Each cached reply is a whole Reply frame: reply_len >= 256, its `size` >= 256 and <= reply_len,
 * command 8 and a valid Reply header. Duplicate client ids and leftover bytes are errors. Decoded
 * reply bytes are views into the input.
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { HEADER_SIZE, OFFSET_SIZE, REPLY_LAYOUT } from './header-layout.js';
import { readU128Big, readU32, readU64Big, writeU128Big, writeU32, writeU64Big } from './little-endian.js';
import { TRAILER_SIZE, hasMagic, splitVerifiedTrailer, writeMagic, writeTrailer } from './trailer.js';
import { validateCachedReplyHeader } from './validate.js';

export const CLIENT_TABLE_MAGIC = 'ICT2';
export const CLIENT_TABLE_ENTRIES_MAX = 65536;
export const REPLY_RING_CAPACITY = 5;
/** client_id + epoch + user_id + watermark + watermark_checksum + ring_len. */
export const CLIENT_TABLE_ENTRY_FIXED_SIZE = 16 + 8 + 4 + 8 + 16 + 1;

export interface ClientTableEntry {
  readonly clientId: bigint;
  readonly epoch: bigint;
  readonly userId: number;
  readonly watermark: bigint;
  readonly watermarkChecksum: bigint;
  /** Cached Reply frames, oldest first (1..5). */
  readonly replies: readonly Uint8Array[];
}

export interface DecodedClientTableEntry extends ClientTableEntry {
  /** `commit` of the newest cached reply, recomputed rather than trusted (§7.6). */
  readonly latestCommit: bigint;
}

export function encodeClientTable(entries: readonly ClientTableEntry[]): Uint8Array {
  assert(entries.length <= CLIENT_TABLE_ENTRIES_MAX, 'ICT2: too many entries');
  let length = 4 + 4 + TRAILER_SIZE;
  for (const entry of entries) {
    assert(entry.replies.length >= 1 && entry.replies.length <= REPLY_RING_CAPACITY, 'ICT2: ring_len out of 1..5');
    length += CLIENT_TABLE_ENTRY_FIXED_SIZE;
    for (const reply of entry.replies) length += 4 + reply.length;
  }
  const out = new Uint8Array(length);
  writeMagic(out, 0, CLIENT_TABLE_MAGIC);
  writeU32(out, 4, entries.length);
  let at = 8;
  for (const entry of entries) {
    assert(entry.clientId >= 0n && entry.clientId < 1n << 128n, 'ICT2: client_id not a u128');
    assert(entry.watermarkChecksum >= 0n && entry.watermarkChecksum < 1n << 128n, 'ICT2: watermark_checksum');
    assert(entry.epoch >= 0n && entry.epoch < 1n << 64n, 'ICT2: epoch not a u64');
    assert(entry.watermark >= 0n && entry.watermark < 1n << 64n, 'ICT2: watermark not a u64');
    assert(Number.isInteger(entry.userId) && entry.userId >= 0 && entry.userId <= 0xffff_ffff, 'ICT2: user_id');
    writeU128Big(out, at, entry.clientId);
    writeU64Big(out, at + 16, entry.epoch);
    writeU32(out, at + 24, entry.userId);
    writeU64Big(out, at + 28, entry.watermark);
    writeU128Big(out, at + 36, entry.watermarkChecksum);
    out[at + 52] = entry.replies.length;
    at += CLIENT_TABLE_ENTRY_FIXED_SIZE;
    for (const reply of entry.replies) {
      assert(replyProblem(reply, 0, reply.length) === null, 'ICT2: cached reply is not a valid Reply frame');
      writeU32(out, at, reply.length);
      out.set(reply, at + 4);
      at += 4 + reply.length;
    }
  }
  assert(at === length - TRAILER_SIZE, 'ICT2: length accounting');
  return writeTrailer(out);
}

function replyProblem(bytes: Uint8Array, at: number, replyLen: number): string | null {
  if (replyLen < HEADER_SIZE) return 'ict2_reply_too_short';
  const size = readU32(bytes, at + OFFSET_SIZE);
  if (size < HEADER_SIZE) return 'ict2_reply_size_below_header';
  if (size > replyLen) return 'ict2_reply_size_above_len';
  const header = validateCachedReplyHeader(bytes, at);
  return header === null ? null : `ict2_reply_${header}`;
}

export function decodeClientTable(bytes: Uint8Array): Decoded<DecodedClientTableEntry[]> {
  const content = splitVerifiedTrailer(bytes);
  if (typeof content === 'string') return fail(`ict2_${content}`);
  if (content.length < 4 || !hasMagic(content, 0, CLIENT_TABLE_MAGIC)) {
    return fail(content.length < 4 ? 'ict2_truncated' : 'ict2_bad_magic');
  }
  if (content.length < 8) return fail('ict2_truncated');
  const count = readU32(content, 4);
  if (count > CLIENT_TABLE_ENTRIES_MAX) return fail('ict2_too_many_entries');
  const seen = new Set<bigint>();
  const entries: DecodedClientTableEntry[] = [];
  let at = 8;
  for (let index = 0; index < count; index++) {
    if (content.length - at < CLIENT_TABLE_ENTRY_FIXED_SIZE) return fail('ict2_truncated');
    const clientId = readU128Big(content, at);
    const epoch = readU64Big(content, at + 16);
    const userId = readU32(content, at + 24);
    const watermark = readU64Big(content, at + 28);
    const watermarkChecksum = readU128Big(content, at + 36);
    const ringLen = content[at + 52] as number;
    at += CLIENT_TABLE_ENTRY_FIXED_SIZE;
    if (ringLen < 1 || ringLen > REPLY_RING_CAPACITY) return fail('ict2_ring_len_out_of_range');
    const replies: Uint8Array[] = [];
    for (let r = 0; r < ringLen; r++) {
      if (content.length - at < 4) return fail('ict2_truncated');
      const replyLen = readU32(content, at);
      at += 4;
      if (content.length - at < replyLen) return fail('ict2_truncated');
      const problem = replyProblem(content, at, replyLen);
      if (problem !== null) return fail(problem);
      replies.push(content.subarray(at, at + replyLen));
      at += replyLen;
    }
    if (seen.has(clientId)) return fail('ict2_duplicate_client_id');
    seen.add(clientId);
    const newest = replies[replies.length - 1] as Uint8Array;
    const latestCommit = readU64Big(newest, REPLY_LAYOUT.commit.offset);
    entries.push({ clientId, epoch, userId, watermark, watermarkChecksum, replies, latestCommit });
  }
  if (at !== content.length) return fail('ict2_trailing_bytes');
  return ok(entries);
}
