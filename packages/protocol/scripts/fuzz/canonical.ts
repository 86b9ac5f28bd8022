import { assert, toHex } from '@shoal/stdx';

/**
 * The property a lenient request decoder keeps: what it accepts has a canonical encoding, no
 * longer than the input, that decodes to the same value and re-encodes to itself. (Request
 * decoders read as the reference does: trailing bytes ignored, flags other than 1 read as unset,
 * so an accepted input need not be its own encoding.)
 */
export function assertCanonical<T>(
  name: string, input: Uint8Array, value: T,
  decode: (bytes: Uint8Array) => { ok: true; value: T } | { ok: false; reason: string },
  encode: (value: T) => Uint8Array,
): void {
  const canonical = encode(value);
  assert(canonical.length <= input.length, `${name}: canonical form is longer than the input`);
  const again = decode(canonical);
  assert(again.ok, `${name}: canonical form does not decode (${again.ok ? '' : again.reason})`);
  if (!again.ok) return;
  assert(showValue(again.value) === showValue(value), `${name}: canonical form decodes to another value`);
  assert(toHex(encode(again.value)) === toHex(canonical), `${name}: canonical form re-encodes differently`);
}

/** A stable text form of a decoded value (bigints as decimal, byte views as hex). */
export function showValue(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return `0x${toHex(v)}`;
    return v;
  });
}
