/**
 * Little-endian reads and writes by byte math, for the batch hot paths: no DataView to create per
 * call, works on any Uint8Array (Buffer included) whatever its byteOffset. Callers bounds-check
 * first; these helpers never look outside `[at, at + width)`.
 */

export function readU32LE(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] as number) |
      ((bytes[at + 1] as number) << 8) |
      ((bytes[at + 2] as number) << 16) |
      ((bytes[at + 3] as number) << 24)) >>>
    0
  );
}

export function writeU32LE(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

/** A u64 field as a JS number when it is below 2^53, otherwise -1 (the field is "too large"). */
export function readU64LESafe(bytes: Uint8Array, at: number): number {
  const hi = readU32LE(bytes, at + 4);
  if (hi > 0x1f_ffff) return -1;
  return hi * 0x1_0000_0000 + readU32LE(bytes, at);
}

/** Writes a non-negative safe integer as a u64 field. */
export function writeU64LESafe(bytes: Uint8Array, at: number, value: number): void {
  writeU32LE(bytes, at, value >>> 0);
  writeU32LE(bytes, at + 4, Math.floor(value / 0x1_0000_0000) >>> 0);
}

export function readU64LE(bytes: Uint8Array, at: number): bigint {
  return (BigInt(readU32LE(bytes, at + 4)) << 32n) | BigInt(readU32LE(bytes, at));
}

/** Writes the low 64 bits of `value` (callers range-check first). */
export function writeU64LE(bytes: Uint8Array, at: number, value: bigint): void {
  writeU32LE(bytes, at, Number(value & 0xffff_ffffn));
  writeU32LE(bytes, at + 4, Number((value >> 32n) & 0xffff_ffffn));
}

export function readU128LE(bytes: Uint8Array, at: number): bigint {
  return (readU64LE(bytes, at + 8) << 64n) | readU64LE(bytes, at);
}

/** Writes the low 128 bits of `value` (callers range-check first). */
export function writeU128LE(bytes: Uint8Array, at: number, value: bigint): void {
  writeU64LE(bytes, at, value & 0xffff_ffff_ffff_ffffn);
  writeU64LE(bytes, at + 8, (value >> 64n) & 0xffff_ffff_ffff_ffffn);
}

/** True when the 8 bytes at `a[aAt]` equal the 8 bytes at `b[bAt]`. */
export function equal8(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number): boolean {
  return readU32LE(a, aAt) === readU32LE(b, bAt) && readU32LE(a, aAt + 4) === readU32LE(b, bAt + 4);
}

/** True when every byte of `bytes[start, end)` is zero. */
export function isZeroRange(bytes: Uint8Array, start: number, end: number): boolean {
  let acc = 0;
  for (let i = start; i < end; i++) acc |= bytes[i] as number;
  return acc === 0;
}
