import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { type Decoded, fail, ok } from './decoded.js';

/**
 * Runs `read` over the whole of `bytes`; the result is a value only when nothing failed and every
 * byte was consumed (exact consumption is the rule for every body in this package).
 */
export function decodeExact<T>(bytes: Uint8Array, read: (r: ByteReader) => T): Decoded<T> {
  const r = new ByteReader(bytes);
  const value = read(r);
  r.expectEnd();
  return r.reason !== null ? fail(r.reason) : ok(value);
}

/**
 * Runs `read` from the start of `bytes` and ignores whatever follows what it consumed: the
 * reference server's request decoders (`WireDecode::decode_from`, core/binary_protocol/src/codec.rs)
 * return the bytes they consumed and the server never checks the rest, so a request body may carry
 * trailing bytes (the Node SDK's DeleteTopic appends a legacy `partitions_count`).
 */
export function decodePrefix<T>(bytes: Uint8Array, read: (r: ByteReader) => T): Decoded<T> {
  const r = new ByteReader(bytes);
  const value = read(r);
  return r.reason !== null ? fail(r.reason) : ok(value);
}

export function encodeWith(write: (w: ByteWriter) => void, capacity = 64): Uint8Array {
  const w = new ByteWriter(capacity);
  write(w);
  return w.finish();
}

/**
 * Fails the reader unless `count` elements of at least `minSize` bytes can still fit: a cheap bound
 * so a hostile count cannot drive a long loop over a short buffer. Returns whether to continue.
 */
export function checkCount(r: ByteReader, count: number, minSize: number, what: string): boolean {
  if (r.failed) return false;
  if (count * minSize > r.remaining) {
    r.fail(`count_exceeds_bytes_${what}`);
    return false;
  }
  return true;
}

/**
 * A request flag as the reference reads it: set only when the byte is exactly 1 (`has_permissions
 * == 1`, `partition_flag == 1`, core/binary_protocol/src/requests/**); any other value is unset.
 */
export function readFlagIsOne(r: ByteReader, what: string): boolean {
  return r.u8(what) === 1;
}

/** A request boolean as the reference reads it: any non-zero byte is true (`auto_commit`, `fsync`). */
export function readNonZero(r: ByteReader, what: string): boolean {
  return r.u8(what) !== 0;
}

/** A u8 flag that must be 0 or 1. */
export function readBool(r: ByteReader, what: string): boolean {
  const value = r.u8(what);
  if (value > 1) r.fail(`invalid_bool_${what}`);
  return value === 1;
}
