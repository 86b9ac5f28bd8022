import { assert } from '@shoal/stdx';
import { ByteReader } from '../../codec/byte-reader.js';
import { type Decoded, fail, ok } from '../../codec/decoded.js';
import { encodeWith } from '../../codec/body-codec.js';

/**
 * User headers block (encodings.mdx; core/binary_protocol/src/primitives/user_headers.rs): a flat
 * run of TLV fields `[kind: u8][length: u32][data: length bytes]`, pairing key then value.
 * Structural rules (the reference `validate_user_headers`): every kind non-zero, every length
 * 1..=255, no overrun, an even number of fields, exact consumption. Key kinds are NOT restricted
 * here (the reference leaves that to the options layer; encodings.mdx says keys are String kind),
 * and unknown value kinds are preserved and forwarded untouched.
 */
export const USER_HEADER_FIELD_LENGTH_MIN = 1;
export const USER_HEADER_FIELD_LENGTH_MAX = 255;
/** The shared budget of the reference (`MAX_USER_HEADERS_SIZE` = 100 * 1000). */
export const USER_HEADERS_SIZE_MAX = 100_000;
/** Smallest field: kind + length + one byte. */
export const USER_HEADER_FIELD_MIN_SIZE = 6;

export interface UserHeaderEntry {
  readonly keyKind: number;
  /** A view into the block (no copy). */
  readonly key: Uint8Array;
  readonly valueKind: number;
  readonly value: Uint8Array;
}

/** Walks the block; returns the number of key-value pairs or the first structural reason. */
export function validateUserHeaders(block: Uint8Array): Decoded<number> {
  const r = new ByteReader(block);
  let fields = 0;
  while (r.remaining > 0) {
    if (readField(r) === null) return fail(r.reason ?? 'header_field_invalid');
    fields++;
  }
  if (r.reason !== null) return fail(r.reason);
  if (fields % 2 !== 0) return fail('header_field_count_odd');
  return ok(fields / 2);
}

/** Decodes every pair (views into the block). */
export function decodeUserHeaders(block: Uint8Array): Decoded<UserHeaderEntry[]> {
  const count = validateUserHeaders(block);
  if (!count.ok) return count;
  return ok([...iterateUserHeaders(block)]);
}

/** Iterates a block that `validateUserHeaders` accepted (asserts otherwise: our bug). */
export function* iterateUserHeaders(block: Uint8Array): Generator<UserHeaderEntry> {
  const r = new ByteReader(block);
  while (r.remaining > 0) {
    const key = readField(r);
    const value = readField(r);
    assert(key !== null && value !== null, 'iterateUserHeaders over an unvalidated block');
    yield { keyKind: key.kind, key: key.data, valueKind: value.kind, value: value.data };
  }
}

export interface UserHeaderField {
  readonly kind: number;
  readonly data: Uint8Array;
}

function readField(r: ByteReader): UserHeaderField | null {
  const kind = r.u8('header_kind');
  const length = r.u32('header_length');
  if (r.failed) return null;
  if (kind === 0) {
    r.fail('header_kind_zero');
    return null;
  }
  if (length < USER_HEADER_FIELD_LENGTH_MIN || length > USER_HEADER_FIELD_LENGTH_MAX) {
    r.fail('header_field_length');
    return null;
  }
  const data = r.bytesView(length, 'header_data');
  return r.failed ? null : { kind, data };
}

export function userHeadersByteLength(entries: readonly UserHeaderEntry[]): number {
  return entries.reduce((sum, e) => sum + 10 + e.key.length + e.value.length, 0);
}

/** Encodes pairs; kinds must be non-zero u8 and every field 1..255 bytes (asserted). */
export function encodeUserHeaders(entries: readonly UserHeaderEntry[]): Uint8Array {
  return encodeWith((w) => {
    for (const e of entries) {
      for (const [kind, data] of [[e.keyKind, e.key], [e.valueKind, e.value]] as const) {
        assert(Number.isInteger(kind) && kind >= 1 && kind <= 255, `header kind ${kind}`);
        assert(data.length >= USER_HEADER_FIELD_LENGTH_MIN && data.length <= USER_HEADER_FIELD_LENGTH_MAX, `header field of ${data.length} bytes`);
        w.u8(kind).u32(data.length).bytes(data);
      }
    }
  }, userHeadersByteLength(entries));
}
