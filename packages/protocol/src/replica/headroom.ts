import { HEADER_SIZE } from './header-layout.js';

/**
 * Bodies born with room for their frame header in front, so the prepare built around them
 * needs no second buffer: a primary stamps a SendMessages batch into such a body (one copy out
 * of the request, which it must own anyway), and `writePrepareFrame` writes the header into the
 * room in front instead of allocating `256 + body` bytes and copying the body again (1 MiB per
 * batch of 1,000 KiB messages).
 *
 * The room is granted once: a body is framed in place only by the first `writePrepareFrame`
 * that sees it (later ones copy, as for any body), and only while its ArrayBuffer is exactly
 * header + body (nobody else can hold a view of the header bytes).
 */
const roomy = new WeakSet<ArrayBuffer>();

/** A zeroed body of `length` bytes with a frame header's worth of free room before it. */
export function bodyWithHeadroom(length: number): Uint8Array {
  const buffer = new ArrayBuffer(HEADER_SIZE + length);
  roomy.add(buffer);
  return new Uint8Array(buffer, HEADER_SIZE, length);
}

/** The whole zeroed-header frame around `body` when it still has its room (taking it), else null. */
export function takeHeadroom(body: Uint8Array): Uint8Array | null {
  const buffer = body.buffer;
  if (!(buffer instanceof ArrayBuffer) || !roomy.has(buffer)) return null;
  if (body.byteOffset !== HEADER_SIZE || buffer.byteLength !== HEADER_SIZE + body.length) return null;
  roomy.delete(buffer);
  return new Uint8Array(buffer);
}
