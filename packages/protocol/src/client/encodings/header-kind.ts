import { assert } from '@shoal/stdx';
import { utf8Encoder } from '../../codec/byte-writer.js';
import { type Decoded, fail, ok } from '../../codec/decoded.js';

/**
 * Header kinds (encodings.mdx): the typed values of user headers and option values. Integers are
 * little-endian; Bool is one byte. Codes outside 1..15 are "unknown": the wire layer forwards them
 * untouched (mixed-version clusters), only a typed decode reports them.
 */
export const HeaderKind = {
  Raw: 1,
  String: 2,
  Bool: 3,
  Int8: 4,
  Int16: 5,
  Int32: 6,
  Int64: 7,
  Int128: 8,
  Uint8: 9,
  Uint16: 10,
  Uint32: 11,
  Uint64: 12,
  Uint128: 13,
  Float32: 14,
  Float64: 15,
} as const;
export type HeaderKind = (typeof HeaderKind)[keyof typeof HeaderKind];
export const HEADER_KIND_KNOWN_MAX = 15;

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(HeaderKind).map(([name, code]) => [code, name]));

/** Fixed value widths; Raw and String are variable (null). */
const WIDTHS: Readonly<Record<number, number | null>> = {
  1: null, 2: null, 3: 1, 4: 1, 5: 2, 6: 4, 7: 8, 8: 16, 9: 1, 10: 2, 11: 4, 12: 8, 13: 16, 14: 4, 15: 8,
};

export function isKnownHeaderKind(code: number): code is HeaderKind {
  return code >= 1 && code <= HEADER_KIND_KNOWN_MAX;
}

export function headerKindName(code: number): string | null {
  return NAMES.get(code) ?? null;
}

/** Fixed byte width of a known kind's value; null for Raw, String and unknown kinds. */
export function headerKindWidth(code: number): number | null {
  return WIDTHS[code] ?? null;
}

export type HeaderValue =
  | { readonly kind: 'raw'; readonly value: Uint8Array }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'int8' | 'int16' | 'int32' | 'uint8' | 'uint16' | 'uint32' | 'float32' | 'float64'; readonly value: number }
  | { readonly kind: 'int64' | 'int128' | 'uint64' | 'uint128'; readonly value: bigint }
  | { readonly kind: 'unknown'; readonly code: number; readonly value: Uint8Array };

const KIND_CODE: Readonly<Record<Exclude<HeaderValue['kind'], 'unknown'>, HeaderKind>> = {
  raw: 1, string: 2, bool: 3, int8: 4, int16: 5, int32: 6, int64: 7, int128: 8,
  uint8: 9, uint16: 10, uint32: 11, uint64: 12, uint128: 13, float32: 14, float64: 15,
};

export function headerValueKindCode(value: HeaderValue): number {
  return value.kind === 'unknown' ? value.code : KIND_CODE[value.kind];
}

/** Interprets the value bytes of a field by kind; unknown kinds come back as `unknown` (raw). */
export function decodeHeaderValue(kind: number, bytes: Uint8Array): Decoded<HeaderValue> {
  if (!isKnownHeaderKind(kind)) {
    return kind === 0 ? fail('header_kind_zero') : ok({ kind: 'unknown', code: kind, value: bytes });
  }
  const width = WIDTHS[kind] ?? null;
  if (width !== null && bytes.length !== width) return fail('header_value_width');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (kind) {
    case HeaderKind.Raw:
      return ok({ kind: 'raw', value: bytes });
    case HeaderKind.String:
      try {
        return ok({ kind: 'string', value: strictUtf8.decode(bytes) });
      } catch {
        return fail('header_value_invalid_utf8');
      }
    case HeaderKind.Bool: {
      const b = bytes[0] as number;
      return b > 1 ? fail('header_value_invalid_bool') : ok({ kind: 'bool', value: b === 1 });
    }
    case HeaderKind.Int8: return ok({ kind: 'int8', value: view.getInt8(0) });
    case HeaderKind.Int16: return ok({ kind: 'int16', value: view.getInt16(0, true) });
    case HeaderKind.Int32: return ok({ kind: 'int32', value: view.getInt32(0, true) });
    case HeaderKind.Int64: return ok({ kind: 'int64', value: view.getBigInt64(0, true) });
    case HeaderKind.Int128: return ok({ kind: 'int128', value: BigInt.asIntN(128, u128(view)) });
    case HeaderKind.Uint8: return ok({ kind: 'uint8', value: view.getUint8(0) });
    case HeaderKind.Uint16: return ok({ kind: 'uint16', value: view.getUint16(0, true) });
    case HeaderKind.Uint32: return ok({ kind: 'uint32', value: view.getUint32(0, true) });
    case HeaderKind.Uint64: return ok({ kind: 'uint64', value: view.getBigUint64(0, true) });
    case HeaderKind.Uint128: return ok({ kind: 'uint128', value: u128(view) });
    case HeaderKind.Float32: return ok({ kind: 'float32', value: view.getFloat32(0, true) });
    case HeaderKind.Float64: return ok({ kind: 'float64', value: view.getFloat64(0, true) });
  }
  return fail('header_kind_unhandled');
}

/** Value bytes of a typed value (the caller writes kind and length). */
export function encodeHeaderValue(value: HeaderValue): Uint8Array {
  switch (value.kind) {
    case 'raw':
    case 'unknown':
      return value.value;
    case 'string':
      return utf8Encoder.encode(value.value);
    case 'bool':
      return Uint8Array.of(value.value ? 1 : 0);
    default:
      break;
  }
  const width = WIDTHS[KIND_CODE[value.kind]] ?? 0;
  const out = new Uint8Array(width);
  const view = new DataView(out.buffer);
  switch (value.kind) {
    case 'int8': view.setInt8(0, value.value); break;
    case 'int16': view.setInt16(0, value.value, true); break;
    case 'int32': view.setInt32(0, value.value, true); break;
    case 'uint8': view.setUint8(0, value.value); break;
    case 'uint16': view.setUint16(0, value.value, true); break;
    case 'uint32': view.setUint32(0, value.value, true); break;
    case 'float32': view.setFloat32(0, value.value, true); break;
    case 'float64': view.setFloat64(0, value.value, true); break;
    case 'int64': view.setBigInt64(0, value.value, true); break;
    case 'uint64': view.setBigUint64(0, value.value, true); break;
    case 'int128':
    case 'uint128': {
      const v = BigInt.asUintN(128, value.value);
      view.setBigUint64(0, v & 0xffff_ffff_ffff_ffffn, true);
      view.setBigUint64(8, v >> 64n, true);
      break;
    }
  }
  assert(out.length > 0, 'header value width');
  return out;
}

function u128(view: DataView): bigint {
  return view.getBigUint64(0, true) | (view.getBigUint64(8, true) << 64n);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
