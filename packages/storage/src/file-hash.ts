/**
 * XXH3-64 (seed 0) over a byte range of a file without holding the range in memory: the
 * state-transfer artifact checksum of a segment `.log` (up to 1 GiB) is computed chunk by chunk.
 *
 * Large ranges go through `@shoal/protocol`'s incremental `createXxh3Stream` (the one XXH3
 * module); the test suite checks it against `xxh3_64` on the same bytes.
 */
import { createXxh3Stream, xxh3_64 } from '@shoal/protocol';
import type { Disk, Fd } from './disk.js';

/** Bytes read per chunk when hashing a file range. */
export const FILE_HASH_CHUNK = 4 << 20;

/**
 * XXH3-64 of `[position, position + length)` of `fd`. Returns null when the file is shorter than
 * the range (the artifact changed under us). Throws DiskError on I/O failure.
 */
export function xxh3OfFileRange(disk: Disk, fd: Fd, position: number, length: number, scratch?: Uint8Array): bigint | null {
  if (length <= FILE_HASH_CHUNK) {
    const buffer = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = disk.read(fd, buffer, done, length - done, position + done);
      if (n === 0) return null;
      done += n;
    }
    return xxh3_64(buffer);
  }
  const buffer = scratch !== undefined && scratch.length >= FILE_HASH_CHUNK ? scratch : new Uint8Array(FILE_HASH_CHUNK);
  const streaming = createXxh3Stream();
  let done = 0;
  while (done < length) {
    const want = Math.min(FILE_HASH_CHUNK, length - done);
    let got = 0;
    while (got < want) {
      const n = disk.read(fd, buffer, got, want - got, position + done + got);
      if (n === 0) return null;
      got += n;
    }
    streaming.update(buffer.subarray(0, want));
    done += want;
  }
  return streaming.digest();
}

/** Streaming XXH3-64 over several in-memory parts (equal to `xxh3_64` of their concatenation). */
export function xxh3OfParts(parts: readonly Uint8Array[]): bigint {
  if (parts.length === 1) return xxh3_64(parts[0] as Uint8Array);
  const streaming = createXxh3Stream();
  for (const part of parts) streaming.update(part);
  return streaming.digest();
}
