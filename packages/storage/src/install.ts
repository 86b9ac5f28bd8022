/**
 * State-transfer install, receiving side: stage → verify → commit, atomic across crashes.
 *
 *   1 stage    chunks land in `<dir>/.staging/` (a fresh directory per transfer), each artifact
 *              in its own file, appended at exactly the received offset (§6.4 step 7 rules);
 *   2 verify   every artifact whole: length and XXH3 against the manifest entry (§6.7); then its
 *              own format: SEGMENT_LOG walked batch by batch (structure, checksums, base_offset
 *              continuity from its frontier and across segments) with its `.index` REBUILT
 *              locally (one entry per batch); ICO1 / ICT2 decoded. Every staged file fsynced,
 *              the staging directory fsynced;
 *   3 commit   `install.marker` written (atomic replace) INSIDE the staging directory: from here
 *              on the install is decided. Then the swap: staged files renamed over the live ones,
 *              stale live files removed, directory fsynced, derived files rewritten, staging
 *              removed last.
 *
 * Boot (`resolvePartitionStaging` / `resolveMetadataStaging`): a staging directory WITH a valid
 * marker is rolled forward (every swap step is idempotent); WITHOUT one it is deleted (rolled
 * back). So a crash at any point leaves the old state or the new one, never a mix.
 *
 * Marker `install.marker` (LE): "SIM1" | plane u8 (0 metadata, 1 partition) | flags u8 (bit 0:
 * metadata snapshot installed) | reserved u16 | commit_op u64 | a u64 (partition: next_offset;
 * metadata: snapshot op) | b u64 (partition: purge generation; metadata: WAL truncate-from op,
 * 0 = none) | count u32 | count × segment start u64 | XXH3 u64 of everything before it.
 */
import { assert, equalBytes } from '@shoal/stdx';
import {
  ArtifactKind,
  type ConsumerOffsets,
  type ManifestEntry,
  decodeClientTable,
  decodeConsumerOffsets,
  xxh3_64,
} from '@shoal/protocol';
import { type Disk, DiskError, type DiskFault, type Fd, attempt, joinPath } from './disk.js';
import { mkdirDurable, readWholeFile, removeTreeDurable, writeFileAtomic } from './durable-file.js';
import { xxh3OfFileRange } from './file-hash.js';
import { ConsumerOffsetStore } from './consumer-offsets.js';
import { PURGE_RECORD_NONE, readPurgeRecord, writePurgeRecord } from './purge-generation.js';
import { SegmentIndex } from './segment-index.js';
import { INDEX_EXTENSION, LOG_EXTENSION, parseSegmentFileName, segmentBaseName, walkBatches } from './segment.js';
import { CLIENT_TABLE_FILE_NAME } from './client-table-file.js';
import { SNAPSHOT_FILE_NAME, snapshotTrailer } from './snapshot-file.js';
import { PartitionLog, type TopicStorageOptions } from './partition-log.js';
import type { MetadataJournal } from './metadata-journal.js';

export const STAGING_DIR_NAME = '.staging';
export const INSTALL_MARKER_NAME = 'install.marker';
const MARKER_MAGIC = 'SIM1';
export const ICO1_STAGED_NAME = 'consumer_offsets.ico1';
const SNAPSHOT_PAYLOAD_STAGED_NAME = 'snapshot.payload';

export interface InstallLimits {
  /** `partition.transfer_artifact_bytes_max` (default 1088 MiB). */
  readonly segmentLogBytesMax: number;
  readonly consumerOffsetsBytesMax: number;
  readonly totalBytesMax: number;
  /** Metadata: per artifact and total (§6.4: 1 GiB / 4 GiB). */
  readonly metadataArtifactBytesMax: number;
  readonly metadataTotalBytesMax: number;
}

export const INSTALL_LIMITS_DEFAULT: InstallLimits = Object.freeze({
  segmentLogBytesMax: 1088 * 1024 * 1024,
  consumerOffsetsBytesMax: 32 * 1024 * 1024,
  totalBytesMax: 2 ** 40,
  metadataArtifactBytesMax: 2 ** 30,
  metadataTotalBytesMax: 2 ** 32,
});

export type InstallError =
  | { readonly kind: 'io'; readonly fault: DiskFault }
  | { readonly kind: 'invalid'; readonly reason: string };

/** A partition install that stopped before it changed the partition directory (its staging dropped). */
export interface InstallNotApplied {
  readonly kind: 'not_applied';
  readonly reason: string;
}

/** Marker writes (each read back) before a partition install gives up undecided; reads of it at boot. */
const MARKER_WRITE_ATTEMPTS = 3;

export type InstallResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: InstallError };

export type ChunkVerdict = 'accepted' | 'not_first_incomplete' | 'offset_mismatch' | 'overrun' | 'empty';

export type StagingResolution = 'none' | 'rolled_forward' | 'rolled_back';

interface Marker {
  readonly plane: 0 | 1;
  readonly flags: number;
  readonly commitOp: bigint;
  readonly a: bigint;
  readonly b: bigint;
  readonly segments: readonly number[];
}

function encodeMarker(m: Marker): Uint8Array {
  const out = new Uint8Array(36 + m.segments.length * 8 + 8);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 4; i++) out[i] = MARKER_MAGIC.charCodeAt(i);
  out[4] = m.plane;
  out[5] = m.flags;
  view.setBigUint64(8, m.commitOp, true);
  view.setBigUint64(16, m.a, true);
  view.setBigUint64(24, m.b, true);
  view.setUint32(32, m.segments.length, true);
  m.segments.forEach((start, i) => view.setBigUint64(36 + i * 8, BigInt(start), true));
  view.setBigUint64(out.length - 8, xxh3_64(out.subarray(0, out.length - 8)), true);
  return out;
}

function decodeMarker(bytes: Uint8Array | null): Marker | null {
  if (bytes === null || bytes.length < 44) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < 4; i++) if (bytes[i] !== MARKER_MAGIC.charCodeAt(i)) return null;
  if (view.getBigUint64(bytes.length - 8, true) !== xxh3_64(bytes.subarray(0, bytes.length - 8))) return null;
  const count = view.getUint32(32, true);
  if (bytes.length !== 44 + count * 8) return null;
  const plane = bytes[4];
  if (plane !== 0 && plane !== 1) return null;
  const segments: number[] = [];
  for (let i = 0; i < count; i++) segments.push(Number(view.getBigUint64(36 + i * 8, true)));
  return { plane, flags: bytes[5] as number, commitOp: view.getBigUint64(8, true), a: view.getBigUint64(16, true), b: view.getBigUint64(24, true), segments };
}

// ---------------------------------------------------------------------------------------------
// Staging: chunk reception, shared by both planes.

class Staging {
  readonly disk: Disk;
  readonly dir: string;
  readonly entries: readonly ManifestEntry[];
  readonly names: readonly string[];
  readonly #received: number[];
  readonly #fds: (Fd | null)[];

  constructor(disk: Disk, dir: string, entries: readonly ManifestEntry[], names: readonly string[]) {
    assert(entries.length === names.length, 'staging: one file name per artifact');
    this.disk = disk;
    this.dir = dir;
    this.entries = entries;
    this.names = names;
    this.#received = entries.map(() => 0);
    this.#fds = entries.map(() => null);
  }

  pathOf(i: number): string {
    return joinPath(this.dir, this.names[i] as string);
  }

  /** Fresh staging directory with one empty file per artifact. Throws DiskError. */
  begin(): void {
    removeTreeDurable(this.disk, this.dir);
    mkdirDurable(this.disk, this.dir);
    for (let i = 0; i < this.entries.length; i++) this.#fds[i] = this.disk.open(this.pathOf(i), 'truncate');
    this.disk.fsyncDir(this.dir);
  }

  /** Index of the first artifact not yet complete, or -1. */
  get firstIncomplete(): number {
    return this.entries.findIndex((e, i) => this.#received[i] !== Number(e.len));
  }

  get complete(): boolean {
    return this.firstIncomplete < 0;
  }

  received(i: number): number {
    return this.#received[i] ?? 0;
  }

  /** §6.4 step 7: only the first incomplete artifact, at exactly the received offset. */
  chunk(artifact: number, offset: number, bytes: Uint8Array): ChunkVerdict {
    if (artifact !== this.firstIncomplete) return 'not_first_incomplete';
    if (bytes.length === 0) return 'empty';
    const have = this.#received[artifact] as number;
    if (offset !== have) return 'offset_mismatch';
    if (have + bytes.length > Number((this.entries[artifact] as ManifestEntry).len)) return 'overrun';
    this.disk.write(this.#fds[artifact] as Fd, bytes, 0, bytes.length, offset);
    this.#received[artifact] = have + bytes.length;
    return 'accepted';
  }

  /** Length + XXH3 of every artifact (§6.7), each file fsynced. Returns a reason or null. Throws DiskError. */
  verifyTransit(): string | null {
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i] as ManifestEntry;
      const fd = this.#fds[i] as Fd;
      this.disk.fsync(fd);
      const length = Number(entry.len);
      if (this.disk.size(fd) !== length) return `artifact_${i}_length_mismatch`;
      if (xxh3OfFileRange(this.disk, fd, 0, length) !== entry.checksum) return `artifact_${i}_checksum_mismatch`;
    }
    return null;
  }

  closeFds(): void {
    for (let i = 0; i < this.#fds.length; i++) {
      const fd = this.#fds[i];
      if (fd !== null && fd !== undefined) this.disk.close(fd);
      this.#fds[i] = null;
    }
  }

  writeMarker(marker: Marker): void {
    this.disk.fsyncDir(this.dir);
    writeFileAtomic(this.disk, joinPath(this.dir, INSTALL_MARKER_NAME), [encodeMarker(marker)]);
  }
}

function io<T>(body: () => T | InstallError): InstallResult<T> {
  const result = attempt(body);
  if (!result.ok) return { ok: false, error: { kind: 'io', fault: result.error } };
  const value = result.value;
  if (typeof value === 'object' && value !== null && 'kind' in value && (value as InstallError).kind === 'invalid') {
    return { ok: false, error: value as InstallError };
  }
  return { ok: true, value: value as T };
}

/**
 * The staging directory's marker as a boot reads it: a read that hands back damaged bytes (the
 * stored ones intact) is retried, so a read fault cannot roll back an install whose swap began
 * (a partition install swaps only once its marker read back: an unreadable marker after that is
 * bit rot). Null: none, or never readable. Throws DiskError.
 */
function readMarker(disk: Disk, staging: string): Marker | null {
  const path = joinPath(staging, INSTALL_MARKER_NAME);
  for (let i = 0; i < MARKER_WRITE_ATTEMPTS; i++) {
    const bytes = readWholeFile(disk, path);
    if (bytes === null) return null;
    const marker = decodeMarker(bytes);
    if (marker !== null) return marker;
  }
  return null;
}

/**
 * Removes a staging directory whose install is complete: the marker FIRST (durably), so a crash
 * halfway through an `rm -r` on a real filesystem leaves an unmarked directory (dropped at boot),
 * never a marker whose staged files are half gone. Throws DiskError.
 */
function dropStaging(disk: Disk, staging: string): void {
  const marker = joinPath(staging, INSTALL_MARKER_NAME);
  if (disk.stat(marker) !== null) {
    disk.unlink(marker);
    disk.fsyncDir(staging);
  }
  removeTreeDurable(disk, staging);
}

function invalid(reason: string): InstallError {
  return { kind: 'invalid', reason };
}

// ---------------------------------------------------------------------------------------------
// Partition plane.

export interface PartitionInstallSummary {
  readonly segments: readonly { readonly start: number; readonly nextOffset: number; readonly bytes: number }[];
  readonly offsets: ConsumerOffsets;
  readonly nextOffset: number;
}

export class PartitionInstaller {
  readonly partitionDir: string;
  readonly commitOp: bigint;
  readonly #staging: Staging;
  readonly #order: number[];
  #summary: PartitionInstallSummary | null = null;
  #state: 'new' | 'staging' | 'verified' | 'committed' | 'aborted' = 'new';

  constructor(disk: Disk, partitionDir: string, entries: readonly ManifestEntry[], commitOp: bigint) {
    this.partitionDir = partitionDir;
    this.commitOp = commitOp;
    const names = entries.map((e) =>
      e.kind === ArtifactKind.SegmentLog && e.frontier <= BigInt(Number.MAX_SAFE_INTEGER)
        ? segmentBaseName(Number(e.frontier)) + LOG_EXTENSION
        : e.kind === ArtifactKind.ConsumerOffsets
          ? ICO1_STAGED_NAME
          : `artifact-${e.kind}`,
    );
    this.#staging = new Staging(disk, joinPath(partitionDir, STAGING_DIR_NAME), entries, names);
    this.#order = entries
      .map((e, i) => [e, i] as const)
      .filter(([e]) => e.kind === ArtifactKind.SegmentLog)
      .sort((x, y) => (x[0].frontier < y[0].frontier ? -1 : 1))
      .map(([, i]) => i);
  }

  get complete(): boolean {
    return this.#staging.complete;
  }

  get firstIncomplete(): number {
    return this.#staging.firstIncomplete;
  }

  received(artifact: number): number {
    return this.#staging.received(artifact);
  }

  /** Checks the manifest against the plane's rules and caps, then opens a fresh staging directory. */
  begin(limits: InstallLimits = INSTALL_LIMITS_DEFAULT): InstallResult<void> {
    assert(this.#state === 'new', 'installer: begin twice');
    const entries = this.#staging.entries;
    let total = 0n;
    let offsets = 0;
    const starts = new Set<bigint>();
    for (const e of entries) {
      total += e.len;
      if (e.kind === ArtifactKind.SegmentLog) {
        if (e.len > BigInt(limits.segmentLogBytesMax)) return { ok: false, error: invalid('segment_log_too_large') };
        if (e.frontier > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, error: invalid('segment_frontier_out_of_range') };
        if (starts.has(e.frontier)) return { ok: false, error: invalid('duplicate_segment_frontier') };
        if (e.len === 0n) return { ok: false, error: invalid('empty_segment_log') };
        starts.add(e.frontier);
      } else if (e.kind === ArtifactKind.ConsumerOffsets) {
        if (e.len > BigInt(limits.consumerOffsetsBytesMax)) return { ok: false, error: invalid('consumer_offsets_too_large') };
        offsets++;
      } else {
        return { ok: false, error: invalid(`artifact_kind_${e.kind}_not_partition`) };
      }
    }
    if (offsets !== 1) return { ok: false, error: invalid('consumer_offsets_artifact_count') };
    if (total > BigInt(limits.totalBytesMax)) return { ok: false, error: invalid('offer_too_large') };
    const begun = io(() => this.#staging.begin());
    if (begun.ok) this.#state = 'staging';
    return begun;
  }

  chunk(artifact: number, offset: number, bytes: Uint8Array): InstallResult<ChunkVerdict> {
    assert(this.#state === 'staging', 'installer: chunk outside staging');
    return io(() => this.#staging.chunk(artifact, offset, bytes));
  }

  /** §6.7 + format checks; rebuilds each staged segment's index. Nothing live is touched. */
  verify(): InstallResult<PartitionInstallSummary> {
    assert(this.#state === 'staging' && this.#staging.complete, 'installer: verify before every artifact arrived');
    const result = io<PartitionInstallSummary>(() => {
      const transit = this.#staging.verifyTransit();
      if (transit !== null) return invalid(transit);
      const icoIndex = this.#staging.entries.findIndex((e) => e.kind === ArtifactKind.ConsumerOffsets);
      const ico = decodeConsumerOffsets(readWholeFile(this.#staging.disk, this.#staging.pathOf(icoIndex)) ?? new Uint8Array(0));
      if (!ico.ok) return invalid(ico.reason);
      const segments: { start: number; nextOffset: number; bytes: number }[] = [];
      let expected = -1;
      for (const i of this.#order) {
        const entry = this.#staging.entries[i] as ManifestEntry;
        const start = Number(entry.frontier);
        if (expected >= 0 && start !== expected) return invalid(`segment_${start}_not_contiguous_with_${expected}`);
        const walked = this.#stageIndex(i, start, Number(entry.len));
        if (typeof walked === 'string') return invalid(walked);
        segments.push({ start, nextOffset: walked, bytes: Number(entry.len) });
        expected = walked;
      }
      const nextOffset = ico.value.nextOffset;
      if (nextOffset > BigInt(Number.MAX_SAFE_INTEGER)) return invalid('next_offset_out_of_range');
      if (expected >= 0 && Number(nextOffset) < expected) return invalid('next_offset_below_segments');
      this.#staging.disk.fsyncDir(this.#staging.dir);
      return { segments, offsets: ico.value, nextOffset: expected >= 0 ? expected : Number(nextOffset) };
    });
    if (result.ok) {
      this.#summary = result.value;
      this.#state = 'verified';
    }
    return result;
  }

  /**
   * Decides the install (marker) and swaps it in. `options` are the topic's storage options
   * (used when the offer holds no segment: an empty active segment is created at next_offset).
   * Afterwards, reopen the partition (PartitionStorage.open) to load the new state.
   */
  commit(options: TopicStorageOptions): InstallResult<void> | { readonly ok: false; readonly error: InstallNotApplied } {
    assert(this.#state === 'verified' && this.#summary !== null, 'installer: commit before verify');
    const summary = this.#summary;
    const intended: Marker = {
      plane: 1,
      flags: 0,
      commitOp: this.commitOp,
      a: BigInt(summary.nextOffset),
      b: summary.offsets.purgeGeneration,
      segments: summary.segments.map((s) => s.start),
    };
    const decided = this.#decide(intended);
    if (decided !== null) {
      // Nothing in the partition directory changed: drop the staging (marker first, durably) so
      // no boot rolls forward a marker this process could not confirm; the caller keeps its state.
      const dropped = io(() => dropStaging(this.#staging.disk, this.#staging.dir));
      this.#state = 'aborted';
      return dropped.ok ? { ok: false, error: { kind: 'not_applied', reason: decided } } : dropped;
    }
    const result = io(() => {
      const applied = applyPartitionInstall(this.#staging.disk, this.partitionDir, intended, options);
      if (applied !== null) return invalid(applied);
      return undefined;
    });
    this.#state = result.ok ? 'committed' : 'aborted';
    return result;
  }

  /**
   * Writes the marker and reads it back until the bytes a boot would read are the ones meant
   * (a read that flips a bit or a write that lands elsewhere is retried): null once decided, else
   * why not (an I/O error or a marker that never read back).
   */
  #decide(intended: Marker): string | null {
    const bytes = encodeMarker(intended);
    const path = joinPath(this.#staging.dir, INSTALL_MARKER_NAME);
    const written = attempt(() => {
      this.#staging.closeFds();
      for (let i = 0; i < MARKER_WRITE_ATTEMPTS; i++) {
        this.#staging.writeMarker(intended);
        const read = readWholeFile(this.#staging.disk, path);
        if (read !== null && equalBytes(read, bytes)) return true;
      }
      return false;
    });
    if (!written.ok) return `marker_io: ${written.error.message}`;
    return written.value ? null : 'marker_did_not_read_back';
  }

  /** Drops the staging directory (transfer abandoned). */
  abort(): InstallResult<void> {
    this.#state = 'aborted';
    return io(() => {
      this.#staging.closeFds();
      removeTreeDurable(this.#staging.disk, this.#staging.dir);
    });
  }

  /** Walks staged segment `i`, writing its index next to it. Returns next offset or a reason. */
  #stageIndex(i: number, start: number, length: number): number | string {
    const disk = this.#staging.disk;
    const logPath = this.#staging.pathOf(i);
    const indexPath = logPath.slice(0, -LOG_EXTENSION.length) + INDEX_EXTENSION;
    const fd = disk.open(logPath, 'read');
    const index = new SegmentIndex();
    let walk: ReturnType<typeof walkBatches>;
    try {
      walk = walkBatches(disk, fd, 0, length, start, true, (b) => index.push(b.baseOffset, b.baseTimestamp, b.position));
    } finally {
      disk.close(fd);
    }
    if (walk.stop !== null) return `segment_${start}: ${walk.stop.reason} at ${walk.stop.position}`;
    if (walk.batches === 0) return `segment_${start}: no batch`;
    const bytes = index.encode();
    const indexFd = disk.open(indexPath, 'truncate');
    try {
      disk.write(indexFd, bytes, 0, bytes.length, 0);
      disk.fsync(indexFd);
    } finally {
      disk.close(indexFd);
    }
    return walk.nextOffset;
  }
}

/**
 * The idempotent swap of a decided partition install. Returns null, or a reason when the
 * staging directory is missing a file the marker names and the live directory lacks it too.
 * Throws DiskError.
 */
function applyPartitionInstall(disk: Disk, partitionDir: string, marker: Marker, options: TopicStorageOptions): string | null {
  const staging = joinPath(partitionDir, STAGING_DIR_NAME);
  const keep = new Set(marker.segments);
  for (const start of marker.segments) {
    for (const ext of [LOG_EXTENSION, INDEX_EXTENSION]) {
      const name = segmentBaseName(start) + ext;
      const staged = joinPath(staging, name);
      if (disk.stat(staged) !== null) disk.rename(staged, joinPath(partitionDir, name));
      else if (disk.stat(joinPath(partitionDir, name)) === null) return `install_incomplete: ${name} missing`;
    }
  }
  for (const name of disk.readdir(partitionDir)) {
    const parsed = parseSegmentFileName(name);
    if (parsed !== null && !keep.has(parsed.start)) disk.unlink(joinPath(partitionDir, name));
  }
  disk.fsyncDir(partitionDir);
  const icoBytes = readWholeFile(disk, joinPath(staging, ICO1_STAGED_NAME));
  if (icoBytes === null) return 'install_incomplete: consumer offsets missing';
  const ico = decodeConsumerOffsets(icoBytes);
  if (!ico.ok) return `install_incomplete: ${ico.reason}`;
  const store = new ConsumerOffsetStore(disk, partitionDir, true);
  const replaced = store.replaceAll(ico.value.consumers, ico.value.groups);
  if (!replaced.ok) throw new DiskError(replaced.error.code, replaced.error.syscall, replaced.error.path);
  const previous = readPurgeRecord(disk, partitionDir);
  const revision = previous.kind === 'ok' ? previous.record.createdRevision : PURGE_RECORD_NONE.createdRevision;
  writePurgeRecord(disk, partitionDir, { generation: marker.b, createdRevision: revision });
  if (marker.segments.length === 0) {
    const segment = PartitionLog.createSegment(disk, partitionDir, Number(marker.a), options);
    segment.closeFds(disk);
  }
  dropStaging(disk, staging);
  return null;
}

/** Boot: roll a decided partition install forward, or drop an undecided one. Throws DiskError. */
export function resolvePartitionStaging(disk: Disk, partitionDir: string, options: TopicStorageOptions): StagingResolution | { readonly refused: string } {
  const staging = joinPath(partitionDir, STAGING_DIR_NAME);
  if (disk.stat(staging) === null) return 'none';
  const marker = readMarker(disk, staging);
  if (marker === null || marker.plane !== 1) {
    removeTreeDurable(disk, staging);
    return 'rolled_back';
  }
  const applied = applyPartitionInstall(disk, partitionDir, marker, options);
  if (applied !== null) return { refused: applied };
  return 'rolled_forward';
}

// ---------------------------------------------------------------------------------------------
// Metadata plane.

export class MetadataInstaller {
  readonly metadataDir: string;
  readonly commitOp: bigint;
  readonly #staging: Staging;
  readonly #snapshotIndex: number;
  readonly #tableIndex: number;
  #state: 'new' | 'staging' | 'verified' | 'committed' | 'aborted' = 'new';
  #payload: Uint8Array | null = null;
  #table: Uint8Array | null = null;

  constructor(disk: Disk, metadataDir: string, entries: readonly ManifestEntry[], commitOp: bigint) {
    this.metadataDir = metadataDir;
    this.commitOp = commitOp;
    const names = entries.map((e, i) =>
      e.kind === ArtifactKind.MetadataSnapshot ? SNAPSHOT_PAYLOAD_STAGED_NAME : e.kind === ArtifactKind.ClientTable ? CLIENT_TABLE_FILE_NAME : `artifact-${i}`,
    );
    this.#staging = new Staging(disk, joinPath(metadataDir, STAGING_DIR_NAME), entries, names);
    this.#snapshotIndex = entries.findIndex((e) => e.kind === ArtifactKind.MetadataSnapshot);
    this.#tableIndex = entries.findIndex((e) => e.kind === ArtifactKind.ClientTable);
  }

  get complete(): boolean {
    return this.#staging.complete;
  }

  get firstIncomplete(): number {
    return this.#staging.firstIncomplete;
  }

  /** §6.5: both kinds 0 and 1 required, nothing else; §6.4 caps. */
  begin(limits: InstallLimits = INSTALL_LIMITS_DEFAULT): InstallResult<void> {
    assert(this.#state === 'new', 'metadata installer: begin twice');
    const entries = this.#staging.entries;
    const kinds = entries.map((e) => e.kind).sort();
    if (kinds.length !== 2 || kinds[0] !== ArtifactKind.MetadataSnapshot || kinds[1] !== ArtifactKind.ClientTable) {
      return { ok: false, error: invalid('metadata_offer_needs_exactly_snapshot_and_client_table') };
    }
    let total = 0n;
    for (const e of entries) {
      if (e.len > BigInt(limits.metadataArtifactBytesMax)) return { ok: false, error: invalid('artifact_too_large') };
      total += e.len;
    }
    if (total > BigInt(limits.metadataTotalBytesMax)) return { ok: false, error: invalid('offer_too_large') };
    const begun = io(() => this.#staging.begin());
    if (begun.ok) this.#state = 'staging';
    return begun;
  }

  chunk(artifact: number, offset: number, bytes: Uint8Array): InstallResult<ChunkVerdict> {
    assert(this.#state === 'staging', 'metadata installer: chunk outside staging');
    return io(() => this.#staging.chunk(artifact, offset, bytes));
  }

  /**
   * Length + XXH3 of both artifacts, ICT2 decode, and the staged `snapshot.bin` (payload + fresh
   * trailer). Returns the snapshot payload and the ICT2 bytes: the caller decodes the payload with
   * the state machine (format v3, `commit_op >= snapshot_seq`, ...) BEFORE `commit`.
   */
  verify(): InstallResult<{ readonly snapshotPayload: Uint8Array; readonly clientTable: Uint8Array; readonly snapshotOp: bigint; readonly tableFrontier: bigint }> {
    assert(this.#state === 'staging' && this.#staging.complete, 'metadata installer: verify before every artifact arrived');
    const result = io(() => {
      const transit = this.#staging.verifyTransit();
      if (transit !== null) return invalid(transit);
      const disk = this.#staging.disk;
      const payload = readWholeFile(disk, this.#staging.pathOf(this.#snapshotIndex)) ?? new Uint8Array(0);
      const table = readWholeFile(disk, this.#staging.pathOf(this.#tableIndex)) ?? new Uint8Array(0);
      const decoded = decodeClientTable(table);
      if (!decoded.ok) return invalid(decoded.reason);
      const { trailer } = snapshotTrailer(payload);
      writeFileAtomic(disk, joinPath(this.#staging.dir, SNAPSHOT_FILE_NAME), [payload, trailer]);
      this.#payload = payload;
      this.#table = table;
      const entries = this.#staging.entries;
      return {
        snapshotPayload: payload,
        clientTable: table,
        snapshotOp: (entries[this.#snapshotIndex] as ManifestEntry).frontier,
        tableFrontier: (entries[this.#tableIndex] as ManifestEntry).frontier,
      };
    });
    if (result.ok) this.#state = 'verified';
    return result;
  }

  /**
   * Decides and swaps (§6.8 step 2–3, storage part): when `installSnapshot` ("ahead"), the WAL is
   * truncated from `snapshotOp + 1` and snapshot.bin replaced; the client table file is replaced
   * either way. The superblock write (step 5) is the caller's, after this returns.
   */
  commit(installSnapshot: boolean, journal: MetadataJournal | null): InstallResult<void> {
    assert(this.#state === 'verified' && this.#payload !== null && this.#table !== null, 'metadata installer: commit before verify');
    const snapshotOp = (this.#staging.entries[this.#snapshotIndex] as ManifestEntry).frontier;
    const result = io(() => {
      this.#staging.closeFds();
      this.#staging.writeMarker({
        plane: 0,
        flags: installSnapshot ? 1 : 0,
        commitOp: this.commitOp,
        a: snapshotOp,
        b: installSnapshot ? snapshotOp + 1n : 0n,
        segments: [],
      });
      applyMetadataSwap(this.#staging.disk, this.metadataDir, installSnapshot);
      if (installSnapshot && journal !== null) {
        const truncated = journal.truncateFrom(Number(snapshotOp + 1n));
        if (!truncated.ok) {
          const e = truncated.error;
          if (e.code === 'poisoned') throw new DiskError('EIO', 'journal.truncateFrom', journal.path, e.message);
          throw new DiskError(e.code, e.syscall, e.path);
        }
        journal.setWatermark(Number(snapshotOp));
      }
      dropStaging(this.#staging.disk, this.#staging.dir);
    });
    this.#state = result.ok ? 'committed' : 'aborted';
    return result;
  }

  abort(): InstallResult<void> {
    this.#state = 'aborted';
    return io(() => {
      this.#staging.closeFds();
      removeTreeDurable(this.#staging.disk, this.#staging.dir);
    });
  }
}

function applyMetadataSwap(disk: Disk, metadataDir: string, installSnapshot: boolean): void {
  const staging = joinPath(metadataDir, STAGING_DIR_NAME);
  const stagedSnapshot = joinPath(staging, SNAPSHOT_FILE_NAME);
  if (installSnapshot && disk.stat(stagedSnapshot) !== null) disk.rename(stagedSnapshot, joinPath(metadataDir, SNAPSHOT_FILE_NAME));
  const stagedTable = joinPath(staging, CLIENT_TABLE_FILE_NAME);
  if (disk.stat(stagedTable) !== null) disk.rename(stagedTable, joinPath(metadataDir, CLIENT_TABLE_FILE_NAME));
  disk.fsyncDir(metadataDir);
}

export type MetadataStagingResolution =
  | { readonly kind: 'none' | 'rolled_back' }
  /** The swap is done; the WAL must still be truncated from `truncateWalFrom` (when not null), then `finishMetadataStaging`. */
  | { readonly kind: 'rolled_forward'; readonly truncateWalFrom: number | null; readonly snapshotOp: bigint };

/** Boot, before the WAL is opened: roll a decided metadata install forward or drop an undecided one. Throws DiskError. */
export function resolveMetadataStaging(disk: Disk, metadataDir: string): MetadataStagingResolution {
  const staging = joinPath(metadataDir, STAGING_DIR_NAME);
  if (disk.stat(staging) === null) return { kind: 'none' };
  const marker = readMarker(disk, staging);
  if (marker === null || marker.plane !== 0) {
    removeTreeDurable(disk, staging);
    return { kind: 'rolled_back' };
  }
  const installSnapshot = (marker.flags & 1) === 1;
  applyMetadataSwap(disk, metadataDir, installSnapshot);
  return { kind: 'rolled_forward', truncateWalFrom: installSnapshot ? Number(marker.b) : null, snapshotOp: marker.a };
}

/** Removes the metadata staging directory once the roll-forward's WAL truncation is durable. Throws DiskError. */
export function finishMetadataStaging(disk: Disk, metadataDir: string): void {
  dropStaging(disk, joinPath(metadataDir, STAGING_DIR_NAME));
}

