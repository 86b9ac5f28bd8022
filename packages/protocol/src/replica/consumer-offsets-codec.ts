/**
 * ICO1: the CONSUMER_OFFSETS state-transfer artifact of a partition (replication-semantics.md
 * §6.6), little-endian:
 *
 *   offset 0   "ICO1"
 *          4   version           u8    1 (anything else refused)
 *          5   purge_generation  u64
 *         13   next_offset       u64
 *         21   consumer_count    u32   <= 2^20
 *         25   group_count       u32   <= 2^20
 *         29   consumer_count x { id u32, offset u64 }   ids strictly ascending
 *              group_count    x { id u32, offset u64 }   ids strictly ascending
 *        end   trailer           u64   XXH3-64 of every byte before it
 *
 * Trailing bytes are an error.
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { readU32, readU64Big, writeU32, writeU64Big } from './little-endian.js';
import { TRAILER_SIZE, hasMagic, splitVerifiedTrailer, writeMagic, writeTrailer } from './trailer.js';

export const CONSUMER_OFFSETS_MAGIC = 'ICO1';
export const CONSUMER_OFFSETS_VERSION = 1;
export const CONSUMER_OFFSETS_SECTION_MAX = 1 << 20;
export const CONSUMER_OFFSETS_PREAMBLE_SIZE = 4 + 1 + 8 + 8 + 4 + 4;
export const CONSUMER_OFFSET_ENTRY_SIZE = 4 + 8;

export interface ConsumerOffsetEntry {
  readonly id: number;
  readonly offset: bigint;
}

export interface ConsumerOffsets {
  readonly purgeGeneration: bigint;
  readonly nextOffset: bigint;
  readonly consumers: readonly ConsumerOffsetEntry[];
  readonly groups: readonly ConsumerOffsetEntry[];
}

function assertSection(entries: readonly ConsumerOffsetEntry[], what: string): void {
  assert(entries.length <= CONSUMER_OFFSETS_SECTION_MAX, `ICO1: too many ${what}`);
  let previous = -1;
  for (const entry of entries) {
    assert(Number.isInteger(entry.id) && entry.id >= 0 && entry.id <= 0xffff_ffff, `ICO1: ${what} id not a u32`);
    assert(entry.id > previous, `ICO1: ${what} ids must be strictly ascending`);
    assert(entry.offset >= 0n && entry.offset < 1n << 64n, `ICO1: ${what} offset not a u64`);
    previous = entry.id;
  }
}

export function encodeConsumerOffsets(value: ConsumerOffsets): Uint8Array {
  assertSection(value.consumers, 'consumers');
  assertSection(value.groups, 'groups');
  for (const v of [value.purgeGeneration, value.nextOffset]) assert(v >= 0n && v < 1n << 64n, 'ICO1: not a u64');
  const entries = value.consumers.length + value.groups.length;
  const out = new Uint8Array(CONSUMER_OFFSETS_PREAMBLE_SIZE + entries * CONSUMER_OFFSET_ENTRY_SIZE + TRAILER_SIZE);
  writeMagic(out, 0, CONSUMER_OFFSETS_MAGIC);
  out[4] = CONSUMER_OFFSETS_VERSION;
  writeU64Big(out, 5, value.purgeGeneration);
  writeU64Big(out, 13, value.nextOffset);
  writeU32(out, 21, value.consumers.length);
  writeU32(out, 25, value.groups.length);
  let at = CONSUMER_OFFSETS_PREAMBLE_SIZE;
  for (const entry of [...value.consumers, ...value.groups]) {
    writeU32(out, at, entry.id);
    writeU64Big(out, at + 4, entry.offset);
    at += CONSUMER_OFFSET_ENTRY_SIZE;
  }
  return writeTrailer(out);
}

function readSection(
  content: Uint8Array,
  at: number,
  count: number,
  what: string,
): { entries: ConsumerOffsetEntry[]; reason: string | null } {
  const entries: ConsumerOffsetEntry[] = [];
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const entryAt = at + i * CONSUMER_OFFSET_ENTRY_SIZE;
    const id = readU32(content, entryAt);
    if (id <= previous) return { entries, reason: `ico1_${what}_ids_not_ascending` };
    previous = id;
    entries.push({ id, offset: readU64Big(content, entryAt + 4) });
  }
  return { entries, reason: null };
}

export function decodeConsumerOffsets(bytes: Uint8Array): Decoded<ConsumerOffsets> {
  const content = splitVerifiedTrailer(bytes);
  if (typeof content === 'string') return fail(`ico1_${content}`);
  if (content.length < 4) return fail('ico1_truncated');
  if (!hasMagic(content, 0, CONSUMER_OFFSETS_MAGIC)) return fail('ico1_bad_magic');
  if (content.length < 5) return fail('ico1_truncated');
  if (content[4] !== CONSUMER_OFFSETS_VERSION) return fail('ico1_unsupported_version');
  if (content.length < CONSUMER_OFFSETS_PREAMBLE_SIZE) return fail('ico1_truncated');
  const consumerCount = readU32(content, 21);
  const groupCount = readU32(content, 25);
  if (consumerCount > CONSUMER_OFFSETS_SECTION_MAX || groupCount > CONSUMER_OFFSETS_SECTION_MAX) {
    return fail('ico1_too_many_entries');
  }
  const expected = CONSUMER_OFFSETS_PREAMBLE_SIZE + (consumerCount + groupCount) * CONSUMER_OFFSET_ENTRY_SIZE;
  if (content.length < expected) return fail('ico1_truncated');
  if (content.length > expected) return fail('ico1_trailing_bytes');
  const consumers = readSection(content, CONSUMER_OFFSETS_PREAMBLE_SIZE, consumerCount, 'consumer');
  if (consumers.reason !== null) return fail(consumers.reason);
  const groupsAt = CONSUMER_OFFSETS_PREAMBLE_SIZE + consumerCount * CONSUMER_OFFSET_ENTRY_SIZE;
  const groups = readSection(content, groupsAt, groupCount, 'group');
  if (groups.reason !== null) return fail(groups.reason);
  return ok({
    purgeGeneration: readU64Big(content, 5),
    nextOffset: readU64Big(content, 13),
    consumers: consumers.entries,
    groups: groups.entries,
  });
}
