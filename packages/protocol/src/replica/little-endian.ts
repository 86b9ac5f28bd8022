/**
 * In-place little-endian reads and writes on a `Uint8Array` at an absolute index, without
 * allocating on the number paths. u8/u32 come back as numbers; u64/u128 as `bigint` only through
 * the explicit `*Big` functions (control paths). The number form of a u64 is exact only while the
 * value is a safe integer; callers that need it check `u64IsSafe` first (validation does).
 *
 * Every index here is already bounds-checked by the caller: these are the primitives under the
 * views and validators, which first check that the buffer holds the 256-byte header.
 */

/** 2^32 as a number: the weight of a u64's high word. */
const WORD = 0x1_0000_0000;

/** A u64 is a safe JS integer iff its high word is below 2^21 (2^53 = 2^21 * 2^32). */
const SAFE_HIGH_WORD_LIMIT = 0x20_0000;

export function readU8(bytes: Uint8Array, at: number): number {
  return bytes[at] as number;
}

export function readU32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] as number) |
      ((bytes[at + 1] as number) << 8) |
      ((bytes[at + 2] as number) << 16) |
      ((bytes[at + 3] as number) << 24)) >>>
    0
  );
}

/** True when the u64 at `at` is at most Number.MAX_SAFE_INTEGER. */
export function u64IsSafe(bytes: Uint8Array, at: number): boolean {
  return readU32(bytes, at + 4) < SAFE_HIGH_WORD_LIMIT;
}

/** The u64 at `at` as a number. Exact only when `u64IsSafe(bytes, at)`. */
export function readU64Number(bytes: Uint8Array, at: number): number {
  return readU32(bytes, at + 4) * WORD + readU32(bytes, at);
}

// One DataView per underlying ArrayBuffer, reused while consecutive calls read the same buffer
// (the usual case: one receive buffer or ring). Indexes are shifted by the array's byteOffset.
let cachedBuffer: ArrayBufferLike | null = null;
let cachedView: DataView = new DataView(new ArrayBuffer(0));

function viewOf(bytes: Uint8Array): DataView {
  if (bytes.buffer !== cachedBuffer) {
    cachedBuffer = bytes.buffer;
    cachedView = new DataView(bytes.buffer);
  }
  return cachedView;
}

export function readU64Big(bytes: Uint8Array, at: number): bigint {
  return viewOf(bytes).getBigUint64(bytes.byteOffset + at, true);
}

export function readU128Big(bytes: Uint8Array, at: number): bigint {
  const view = viewOf(bytes);
  const base = bytes.byteOffset + at;
  return view.getBigUint64(base, true) | (view.getBigUint64(base + 8, true) << 64n);
}

export function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

export function writeU64Big(bytes: Uint8Array, at: number, value: bigint): void {
  viewOf(bytes).setBigUint64(bytes.byteOffset + at, value, true);
}

export function writeU128Big(bytes: Uint8Array, at: number, value: bigint): void {
  const view = viewOf(bytes);
  const base = bytes.byteOffset + at;
  view.setBigUint64(base, value & 0xffff_ffff_ffff_ffffn, true);
  view.setBigUint64(base + 8, value >> 64n, true);
}

/** A widened u64 hash (low 8 bytes the hash, high 8 bytes zero) written into a u128 field. */
export function writeWidened(bytes: Uint8Array, at: number, hash: bigint): void {
  viewOf(bytes).setBigUint64(bytes.byteOffset + at, hash, true);
  bytes.fill(0, at + 8, at + 16);
}

/** True when the u128 field at `at` holds exactly `hash` widened (high half zero). */
export function equalsWidened(bytes: Uint8Array, at: number, hash: bigint): boolean {
  if (readU32(bytes, at + 8) !== 0 || readU32(bytes, at + 12) !== 0) return false;
  return viewOf(bytes).getBigUint64(bytes.byteOffset + at, true) === hash;
}

/** True when `bytes[start, end)` are all zero. */
export function allZero(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** True when the `length` bytes at `a` in `x` equal the `length` bytes at `b` in `y`. */
export function rangesEqual(x: Uint8Array, a: number, y: Uint8Array, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (x[a + i] !== y[b + i]) return false;
  return true;
}
