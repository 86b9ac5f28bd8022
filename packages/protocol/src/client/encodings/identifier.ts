import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import { utf8Encoder } from '../../codec/byte-writer.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';
import { NAME_LENGTH_MAX, checkName } from './name.js';

/**
 * Identifier (encodings.mdx): `[kind: u8][length: u8][value: N bytes]`.
 *   kind 1 numeric: length 4, value u32 LE
 *   kind 2 string:  length 1..255, value UTF-8
 * Rejected (rust_test_values.json `identifier_rejected_hex`): unknown kind, numeric length ≠ 4,
 * invalid UTF-8. A numeric 0 is accepted at the wire level.
 */
export const IdentifierKind = { Numeric: 1, String: 2 } as const;
export const NUMERIC_IDENTIFIER_LENGTH = 4;

export type Identifier =
  | { readonly kind: 'numeric'; readonly value: number }
  | { readonly kind: 'string'; readonly value: string };

export function numericIdentifier(value: number): Identifier {
  assert(Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff, `numeric identifier ${value}`);
  return { kind: 'numeric', value };
}

export function stringIdentifier(value: string): Identifier {
  const problem = checkName(value);
  assert(problem === null, `string identifier: ${problem ?? ''}`);
  return { kind: 'string', value };
}

export function identifierByteLength(id: Identifier): number {
  return 2 + (id.kind === 'numeric' ? NUMERIC_IDENTIFIER_LENGTH : utf8Encoder.encode(id.value).length);
}

export function writeIdentifier(w: ByteWriter, id: Identifier): void {
  if (id.kind === 'numeric') {
    assert(Number.isInteger(id.value) && id.value >= 0 && id.value <= 0xffff_ffff, `numeric identifier ${id.value}`);
    w.u8(IdentifierKind.Numeric).u8(NUMERIC_IDENTIFIER_LENGTH).u32(id.value);
    return;
  }
  const bytes = utf8Encoder.encode(id.value);
  assert(bytes.length >= 1 && bytes.length <= NAME_LENGTH_MAX, `string identifier of ${bytes.length} bytes`);
  w.u8(IdentifierKind.String).u8(bytes.length).bytes(bytes);
}

export function readIdentifier(r: ByteReader, what = 'identifier'): Identifier {
  const kind = r.u8(`${what}_kind`);
  const length = r.u8(`${what}_length`);
  if (r.failed) return { kind: 'numeric', value: 0 };
  if (kind === IdentifierKind.Numeric) {
    if (length !== NUMERIC_IDENTIFIER_LENGTH) r.fail(`numeric_${what}_length`);
    return { kind: 'numeric', value: r.u32(what) };
  }
  if (kind === IdentifierKind.String) {
    if (length === 0) r.fail(`empty_string_${what}`);
    return { kind: 'string', value: r.utf8(length, what) };
  }
  r.fail(`unknown_${what}_kind`);
  return { kind: 'numeric', value: 0 };
}

export function encodeIdentifier(id: Identifier): Uint8Array {
  return encodeWith((w) => writeIdentifier(w, id));
}

export function decodeIdentifier(bytes: Uint8Array): Decoded<Identifier> {
  return decodeExact(bytes, (r) => readIdentifier(r));
}
