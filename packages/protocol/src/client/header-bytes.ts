import { readU128LE, writeU128LE } from '@shoal/stdx';

/**
 * Little-endian field access at absolute header offsets. The caller has already checked that the
 * buffer holds the whole header (these helpers are for validated 256-byte regions, never for
 * untrusted lengths; untrusted bytes go through ByteReader or a length check first).
 */
export function dataViewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function getU8(bytes: Uint8Array, offset: number): number {
  return bytes[offset] as number;
}

export function getU32(bytes: Uint8Array, offset: number): number {
  return dataViewOf(bytes).getUint32(offset, true);
}

export function getU64(bytes: Uint8Array, offset: number): bigint {
  return dataViewOf(bytes).getBigUint64(offset, true);
}

export function getU128(bytes: Uint8Array, offset: number): bigint {
  return readU128LE(bytes, offset);
}

/**
 * A u128 through a DataView the caller already holds (header decoders read many fields: one
 * view for all of them). The shift and OR run only when the high half is set.
 */
export function u128At(v: DataView, offset: number): bigint {
  const lo = v.getBigUint64(offset, true);
  const hi = v.getBigUint64(offset + 8, true);
  return hi === 0n ? lo : lo | (hi << 64n);
}

export function setU8(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value & 0xff;
}

export function setU32(bytes: Uint8Array, offset: number, value: number): void {
  dataViewOf(bytes).setUint32(offset, value >>> 0, true);
}

export function setU64(bytes: Uint8Array, offset: number, value: bigint): void {
  dataViewOf(bytes).setBigUint64(offset, BigInt.asUintN(64, value), true);
}

export function setU128(bytes: Uint8Array, offset: number, value: bigint): void {
  writeU128LE(bytes, offset, BigInt.asUintN(128, value));
}

/** True when bytes[start, end) are all zero. */
export function isZeroRange(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}
