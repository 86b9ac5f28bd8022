/** Exact wide-integer helpers. u64/u128 are `bigint` at the edges; hot paths use split words. */

export const U32_MAX = 0xffff_ffff;
export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

export function isU64(value: bigint): boolean {
  return value >= 0n && value <= U64_MAX;
}

export function isU128(value: bigint): boolean {
  return value >= 0n && value <= U128_MAX;
}

/** Low and high 32-bit halves of a u64 (hot-path form). */
export function splitU64(value: bigint): { lo: number; hi: number } {
  return { lo: Number(value & 0xffff_ffffn), hi: Number((value >> 32n) & 0xffff_ffffn) };
}

export function joinU64(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** A u64 as a JS number when it is a safe integer; throws RangeError otherwise. */
export function u64ToSafeNumber(value: bigint): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`u64 ${value} is not a safe integer`);
  }
  return Number(value);
}

export function readU128LE(bytes: Uint8Array, offset: number): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.getBigUint64(offset, true) | (view.getBigUint64(offset + 8, true) << 64n);
}

export function writeU128LE(bytes: Uint8Array, offset: number, value: bigint): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setBigUint64(offset, value & U64_MAX, true);
  view.setBigUint64(offset + 8, (value >> 64n) & U64_MAX, true);
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Bit i of a u128 bitset. */
export function bitTest(bitset: bigint, index: number): boolean {
  return ((bitset >> BigInt(index)) & 1n) === 1n;
}

export function bitSet(bitset: bigint, index: number): bigint {
  return bitset | (1n << BigInt(index));
}

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += (bytes[i] as number).toString(16).padStart(2, '0');
  return out;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new RangeError('fromHex: not hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
