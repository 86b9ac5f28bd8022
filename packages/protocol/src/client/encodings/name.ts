import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import { utf8Encoder } from '../../codec/byte-writer.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';

/**
 * Name (encodings.mdx): `[length: u8][value: UTF-8, 1-255 bytes]`, used for stream, topic, group,
 * user and token names, SDK names and versions. Also the u8- and u32-prefixed strings other
 * payloads use (passwords may be empty at the wire level; the server's own rules apply later).
 */
export const NAME_LENGTH_MIN = 1;
export const NAME_LENGTH_MAX = 255;

export function utf8Length(value: string): number {
  return utf8Encoder.encode(value).length;
}

/** Reason a string cannot be a Name, or null. */
export function checkName(value: string): string | null {
  const length = utf8Length(value);
  if (length < NAME_LENGTH_MIN) return 'name_empty';
  if (length > NAME_LENGTH_MAX) return 'name_too_long';
  if (!isWellFormed(value)) return 'name_not_utf8';
  return null;
}

export function writeName(w: ByteWriter, value: string): void {
  const bytes = utf8Encoder.encode(value);
  assert(bytes.length >= NAME_LENGTH_MIN && bytes.length <= NAME_LENGTH_MAX, `name of ${bytes.length} bytes`);
  assert(isWellFormed(value), 'name has a lone surrogate');
  w.u8(bytes.length).bytes(bytes);
}

export function readName(r: ByteReader, what = 'name'): string {
  const length = r.u8(`${what}_length`);
  if (!r.failed && length < NAME_LENGTH_MIN) r.fail(`empty_${what}`);
  return r.utf8(length, what);
}

/** `[length: u8][UTF-8, 0-255 bytes]` (passwords, tokens in legacy shapes). */
export function writeShortString(w: ByteWriter, value: string): void {
  const bytes = utf8Encoder.encode(value);
  assert(bytes.length <= NAME_LENGTH_MAX, `short string of ${bytes.length} bytes`);
  assert(isWellFormed(value), 'string has a lone surrogate');
  w.u8(bytes.length).bytes(bytes);
}

export function readShortString(r: ByteReader, what: string): string {
  return r.utf8(r.u8(`${what}_length`), what);
}

/** `[length: u32][UTF-8]`. */
export function writeLongString(w: ByteWriter, value: string): void {
  const bytes = utf8Encoder.encode(value);
  assert(isWellFormed(value), 'string has a lone surrogate');
  w.u32(bytes.length).bytes(bytes);
}

export function readLongString(r: ByteReader, what: string): string {
  return r.utf8(r.u32(`${what}_length`), what);
}

export function encodeName(value: string): Uint8Array {
  return encodeWith((w) => writeName(w, value));
}

export function decodeName(bytes: Uint8Array): Decoded<string> {
  return decodeExact(bytes, (r) => readName(r));
}

/** Strings with lone surrogates cannot round-trip through UTF-8. */
function isWellFormed(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}
