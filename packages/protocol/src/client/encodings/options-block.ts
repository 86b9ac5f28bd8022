import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import { utf8Encoder } from '../../codec/byte-writer.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { type Decoded, fail, ok } from '../../codec/decoded.js';
import { encodeWith } from '../../codec/body-codec.js';
import { HeaderKind } from './header-kind.js';
import { USER_HEADER_FIELD_LENGTH_MAX, iterateUserHeaders, validateUserHeaders } from './user-headers.js';

/**
 * Options block (encodings.mdx; core/binary_protocol/src/primitives/options.rs): the user-headers
 * TLV encoding, validated as a user-headers block first, then: at most 100000 bytes (checked
 * before the walk), at most 1024 entries, every key of kind String and valid UTF-8, no duplicate
 * keys. Value kinds are not restricted (forward compatibility). In requests the block runs to the
 * end of the payload with no prefix; in responses (stream and topic entries) it sits behind a u32
 * byte-length prefix.
 */
export const OPTIONS_ENTRIES_MAX = 1024;
export const OPTIONS_BYTES_MAX = 100_000;

export interface OptionEntry {
  readonly key: string;
  readonly valueKind: number;
  /** Value bytes (a view into the block when decoded). */
  readonly value: Uint8Array;
}

/** Validates a block; returns the number of entries. */
export function validateOptionsBlock(block: Uint8Array): Decoded<number> {
  const decoded = decodeOptionsBlock(block);
  return decoded.ok ? ok(decoded.value.length) : decoded;
}

export function decodeOptionsBlock(block: Uint8Array): Decoded<OptionEntry[]> {
  if (block.length > OPTIONS_BYTES_MAX) return fail('options_block_too_large');
  const pairs = validateUserHeaders(block);
  if (!pairs.ok) return pairs;
  if (pairs.value > OPTIONS_ENTRIES_MAX) return fail('options_too_many_entries');
  const entries: OptionEntry[] = [];
  const seen = new Set<string>();
  for (const entry of iterateUserHeaders(block)) {
    if (entry.keyKind !== HeaderKind.String) return fail('option_key_not_string');
    let key: string;
    try {
      key = strictUtf8.decode(entry.key);
    } catch {
      return fail('option_key_invalid_utf8');
    }
    if (seen.has(key)) return fail('option_key_duplicate');
    seen.add(key);
    entries.push({ key, valueKind: entry.valueKind, value: entry.value });
  }
  return ok(entries);
}

/** Reason the entries cannot form a valid block, or null. */
export function checkOptionEntries(entries: readonly OptionEntry[]): string | null {
  if (entries.length > OPTIONS_ENTRIES_MAX) return 'options_too_many_entries';
  const seen = new Set<string>();
  let size = 0;
  for (const e of entries) {
    const key = utf8Encoder.encode(e.key);
    if (key.length < 1 || key.length > USER_HEADER_FIELD_LENGTH_MAX) return 'option_key_length';
    if (e.value.length < 1 || e.value.length > USER_HEADER_FIELD_LENGTH_MAX) return 'option_value_length';
    if (!Number.isInteger(e.valueKind) || e.valueKind < 1 || e.valueKind > 255) return 'option_value_kind';
    if (seen.has(e.key)) return 'option_key_duplicate';
    seen.add(e.key);
    size += 10 + key.length + e.value.length;
  }
  return size > OPTIONS_BYTES_MAX ? 'options_block_too_large' : null;
}

export function writeOptionsBlock(w: ByteWriter, entries: readonly OptionEntry[]): void {
  const problem = checkOptionEntries(entries);
  assert(problem === null, `options block: ${problem ?? ''}`);
  for (const e of entries) {
    const key = utf8Encoder.encode(e.key);
    w.u8(HeaderKind.String).u32(key.length).bytes(key);
    w.u8(e.valueKind).u32(e.value.length).bytes(e.value);
  }
}

export function encodeOptionsBlock(entries: readonly OptionEntry[]): Uint8Array {
  return encodeWith((w) => writeOptionsBlock(w, entries));
}

/** Reads the rest of the payload as an options block (request form). */
export function readOptionsToEnd(r: ByteReader): OptionEntry[] {
  const block = r.rest();
  if (r.failed) return [];
  const decoded = decodeOptionsBlock(block);
  if (!decoded.ok) {
    r.fail(decoded.reason);
    return [];
  }
  return decoded.value;
}

/** `[length: u32][block]` (response form). */
export function writePrefixedOptions(w: ByteWriter, entries: readonly OptionEntry[]): void {
  const block = encodeOptionsBlock(entries);
  w.u32(block.length).bytes(block);
}

export function readPrefixedOptions(r: ByteReader, what = 'options'): OptionEntry[] {
  const length = r.u32(`${what}_length`);
  const block = r.bytesView(length, what);
  if (r.failed) return [];
  const decoded = decodeOptionsBlock(block);
  if (!decoded.ok) {
    r.fail(decoded.reason);
    return [];
  }
  return decoded.value;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
