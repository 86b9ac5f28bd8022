import { BodyWriter, ByteReader, type Decoded, fail, ok } from '@shoal/protocol';

/** Exact-consumption decode and growable encode over protocol's cursor types. */
export function decodeExact<T>(bytes: Uint8Array, read: (r: ByteReader) => T): Decoded<T> {
  const r = new ByteReader(bytes);
  const value = read(r);
  r.expectEnd();
  return r.reason !== null ? fail(r.reason) : ok(value);
}

export function encodeWith(write: (w: BodyWriter) => void, capacity = 64): Uint8Array {
  const w = new BodyWriter(capacity);
  write(w);
  return w.finish();
}

/** Fails the reader unless `count` elements of at least `minSize` bytes still fit. */
export function fitsCount(r: ByteReader, count: number, minSize: number, what: string): boolean {
  if (r.failed) return false;
  if (count * minSize > r.remaining) {
    r.fail(`count_exceeds_bytes_${what}`);
    return false;
  }
  return true;
}
