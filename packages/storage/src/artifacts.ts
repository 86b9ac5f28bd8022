/**
 * State-transfer artifacts, serving side (replication-semantics.md §6.4–6.6): an OFFER is a list
 * of manifest entries (kind, frontier, len, XXH3) plus a way to read any artifact in chunks.
 *
 *   metadata:  METADATA_SNAPSHOT (frontier = snapshot sequence number; bytes = snapshot.bin
 *              payload, trailer verified and stripped), CLIENT_TABLE (frontier = commit_min;
 *              ICT2 bytes)
 *   partition: one SEGMENT_LOG per non-empty segment (frontier = segment start offset; the .log
 *              bytes verbatim, [0, size) at offer time), one CONSUMER_OFFSETS (frontier =
 *              commit_op; ICO1)
 *
 * Segment bytes are not copied into the offer: chunks are pread from the segment file on demand
 * (segments are append-only, so [0, len) cannot change; a segment deleted by retention while the
 * offer is live makes `chunk` fail with `artifact_gone`). The partition log is fdatasynced first
 * (a forced flush, §6.4).
 */
import {
  ArtifactKind,
  type ManifestEntry,
  encodeConsumerOffsets,
  encodeManifest,
  manifestEntryFor,
} from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import { DiskError, type DiskFault, attempt, faultOf } from './disk.js';
import { xxh3OfFileRange } from './file-hash.js';
import type { PartitionLog } from './partition-log.js';
import type { Segment } from './segment.js';
import type { SnapshotFile } from './snapshot-file.js';
import type { ConsumerOffsetStore } from './consumer-offsets.js';

/** `chunk_max` default: 256 KiB (§6.4 step 5). */
export const STATE_CHUNK_MAX = 256 * 1024;

export type ArtifactError =
  | { readonly kind: 'io'; readonly fault: DiskFault }
  | { readonly kind: 'artifact_gone'; readonly artifact: number }
  | { readonly kind: 'out_of_range'; readonly artifact: number }
  | { readonly kind: 'refused'; readonly reason: string };

export type ArtifactResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ArtifactError };

interface ArtifactSource {
  readonly entry: ManifestEntry;
  read(offset: number, length: number): Uint8Array;
}

export class StateOffer {
  readonly #sources: readonly ArtifactSource[];
  readonly commitOp: bigint;

  constructor(sources: readonly ArtifactSource[], commitOp: bigint) {
    this.#sources = sources;
    this.commitOp = commitOp;
  }

  get entries(): readonly ManifestEntry[] {
    return this.#sources.map((s) => s.entry);
  }

  /** The ISM1 manifest body of StateTransferTarget. */
  manifest(): Uint8Array {
    return encodeManifest(this.entries);
  }

  /**
   * `bytes[offset .. min(offset + min(len, chunkMax), artifact_len)]` of artifact `artifact`
   * (§6.4 step 6). A request at or past the end, or for a bad index, is `out_of_range`.
   */
  chunk(artifact: number, offset: number, length: number, chunkMax = STATE_CHUNK_MAX): ArtifactResult<Uint8Array> {
    const source = this.#sources[artifact];
    if (source === undefined) return { ok: false, error: { kind: 'out_of_range', artifact } };
    const total = Number(source.entry.len);
    if (!(Number.isSafeInteger(offset) && offset >= 0 && offset < total && length > 0)) {
      return { ok: false, error: { kind: 'out_of_range', artifact } };
    }
    const n = Math.min(length, chunkMax, total - offset);
    try {
      const bytes = source.read(offset, n);
      if (bytes.length !== n) return { ok: false, error: { kind: 'artifact_gone', artifact } };
      return { ok: true, value: bytes };
    } catch (error) {
      if (!(error instanceof DiskError)) throw error;
      if (error.code === 'ENOENT') return { ok: false, error: { kind: 'artifact_gone', artifact } };
      return { ok: false, error: { kind: 'io', fault: faultOf(error) } };
    }
  }
}

function memorySource(entry: ManifestEntry, bytes: Uint8Array): ArtifactSource {
  return { entry, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/**
 * The metadata offer. `snapshotOp` is the snapshot's sequence number (the state machine decodes
 * it from the payload; storage treats the payload as opaque). Refused when there is no
 * snapshot.bin, or it does not verify.
 */
export function buildMetadataOffer(
  snapshot: SnapshotFile,
  snapshotOp: bigint,
  clientTableIct2: Uint8Array,
  commitMin: bigint,
): ArtifactResult<StateOffer> {
  const read = snapshot.read();
  if (!read.ok) return { ok: false, error: { kind: 'io', fault: read.error } };
  const verdict = read.value;
  if (verdict.kind === 'missing') return { ok: false, error: { kind: 'refused', reason: 'no_snapshot' } };
  if (verdict.kind === 'corrupt') return { ok: false, error: { kind: 'refused', reason: verdict.reason } };
  const payload = verdict.payload;
  return {
    ok: true,
    value: new StateOffer(
      [
        memorySource(manifestEntryFor(ArtifactKind.MetadataSnapshot, snapshotOp, payload), payload),
        memorySource(manifestEntryFor(ArtifactKind.ClientTable, commitMin, clientTableIct2), clientTableIct2),
      ],
      commitMin,
    ),
  };
}

/**
 * The partition offer: fdatasync, then one SEGMENT_LOG per non-empty segment (hashed by
 * streaming the file) and one CONSUMER_OFFSETS (ICO1 from the stored offsets).
 */
export function buildPartitionOffer(
  log: PartitionLog,
  offsets: ConsumerOffsetStore,
  purgeGeneration: bigint,
  commitOp: bigint,
): ArtifactResult<StateOffer> {
  const built = attempt(() => {
    const synced = log.sync();
    if (!synced.ok) throw new DiskError(synced.error.code, synced.error.syscall, synced.error.path);
    const sources: ArtifactSource[] = [];
    for (const segment of log.segments) {
      if (segment.empty) continue;
      const size = segment.size;
      const fd = log.readFdOf(segment);
      const checksum = xxh3OfFileRange(log.disk, fd, 0, size);
      assert(checksum !== null, 'partition offer: segment shorter than its logical size');
      sources.push(segmentSource(log, segment, { kind: ArtifactKind.SegmentLog, frontier: BigInt(segment.startOffset), len: BigInt(size), checksum }));
    }
    const ico1 = encodeConsumerOffsets(offsets.snapshot(purgeGeneration, BigInt(log.nextOffset)));
    sources.push(memorySource(manifestEntryFor(ArtifactKind.ConsumerOffsets, commitOp, ico1), ico1));
    return new StateOffer(sources, commitOp);
  });
  if (!built.ok) return { ok: false, error: { kind: 'io', fault: built.error } };
  return built;
}

function segmentSource(log: PartitionLog, segment: Segment, entry: ManifestEntry): ArtifactSource {
  return {
    entry,
    read: (offset, length) => {
      const out = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const n = log.readLog(segment, out, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return out.subarray(0, got);
    },
  };
}
