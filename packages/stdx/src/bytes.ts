/** Byte-array helpers. */

/** The parts joined into one new array (one copy of each part). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Whether two arrays hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The same bytes as a plain `Uint8Array` view (no copy). A Node `Buffer` is a Uint8Array whose
 * `slice()` returns a view, not a copy: code that keeps `x.slice()` as its own copy (the
 * consensus core's journal, suffix headers) would otherwise keep a view into a socket read chunk
 * and mutate it (found by the nemesis: a journaled prepare's command byte rewritten to 19).
 */
export function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
