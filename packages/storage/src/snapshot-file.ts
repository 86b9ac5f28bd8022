/**
 * `<root>/metadata/snapshot.bin` (replication-semantics.md §9.3): the metadata checkpoint FILE.
 * The payload (MessagePack, format v3) is made and read by the state machines; here it is opaque.
 *
 *   [payload: n bytes][magic u32 LE 0x49534E50 (50 4e 53 49)][checkpoint_checksum u128 LE]
 *
 * `checkpoint_checksum = widen(XXH3(payload))`: bytes 0..8 the hash, 8..16 zero. A file without
 * the magic at `len − 20` is a legacy unsealed snapshot (the whole file is the payload); its
 * checksum is computed from the bytes as read. Written `snapshot.bin.tmp` → fsync → rename →
 * fsync dir, so the real name never holds a torn file.
 *
 * Ambiguity kept from the reference: a sealed file that lost its tail would read as "legacy".
 * Recovery closes the gap by comparing the computed checksum with the superblock's
 * `checkpoint_checksum` (metadata-recovery.ts), and Shoal never writes an unsealed snapshot.
 */
import { xxh3_64 } from '@shoal/protocol';
import { type Disk, type IoResult, attempt, joinPath } from './disk.js';
import { readWholeFile, writeFileAtomic } from './durable-file.js';

export const SNAPSHOT_FILE_NAME = 'snapshot.bin';
export const SNAPSHOT_MAGIC = 0x49534e50;
export const SNAPSHOT_TRAILER_SIZE = 20;

export type SnapshotRead =
  | { readonly kind: 'missing' }
  /** Sealed file whose trailer verifies. */
  | { readonly kind: 'sealed'; readonly payload: Uint8Array; readonly checksum: bigint }
  /** No magic at `len − 20`: the whole file is the payload (checksum computed, not verified). */
  | { readonly kind: 'legacy'; readonly payload: Uint8Array; readonly checksum: bigint }
  | { readonly kind: 'corrupt'; readonly reason: string };

export function snapshotTrailer(payload: Uint8Array): { readonly trailer: Uint8Array; readonly checksum: bigint } {
  const checksum = xxh3_64(payload);
  const trailer = new Uint8Array(SNAPSHOT_TRAILER_SIZE);
  const view = new DataView(trailer.buffer);
  view.setUint32(0, SNAPSHOT_MAGIC, true);
  view.setBigUint64(4, checksum, true);
  view.setBigUint64(12, 0n, true);
  return { trailer, checksum };
}

/** Classifies the bytes of a snapshot file (never throws). */
export function classifySnapshot(bytes: Uint8Array | null): SnapshotRead {
  if (bytes === null) return { kind: 'missing' };
  const n = bytes.length;
  if (n >= SNAPSHOT_TRAILER_SIZE) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(n - SNAPSHOT_TRAILER_SIZE, true) === SNAPSHOT_MAGIC) {
      const payload = bytes.subarray(0, n - SNAPSHOT_TRAILER_SIZE);
      const low = view.getBigUint64(n - 16, true);
      const high = view.getBigUint64(n - 8, true);
      const checksum = xxh3_64(payload);
      if (high !== 0n || low !== checksum) return { kind: 'corrupt', reason: 'snapshot_trailer_checksum_mismatch' };
      return { kind: 'sealed', payload, checksum };
    }
  }
  if (n === 0) return { kind: 'corrupt', reason: 'snapshot_empty' };
  return { kind: 'legacy', payload: bytes, checksum: xxh3_64(bytes) };
}

export class SnapshotFile {
  readonly #disk: Disk;
  readonly path: string;

  constructor(disk: Disk, metadataDir: string) {
    this.#disk = disk;
    this.path = joinPath(metadataDir, SNAPSHOT_FILE_NAME);
  }

  /** Durably replaces snapshot.bin with `payload` + trailer; returns `checkpoint_checksum` (widened). */
  write(payload: Uint8Array): IoResult<bigint> {
    const { trailer, checksum } = snapshotTrailer(payload);
    return attempt(() => {
      writeFileAtomic(this.#disk, this.path, [payload, trailer]);
      return checksum;
    });
  }

  read(): IoResult<SnapshotRead> {
    return attempt(() => {
      let verdict = classifySnapshot(readWholeFile(this.#disk, this.path));
      // One re-read: a transient read fault must not look like a corrupt checkpoint.
      if (verdict.kind === 'corrupt') verdict = classifySnapshot(readWholeFile(this.#disk, this.path));
      return verdict;
    });
  }
}
