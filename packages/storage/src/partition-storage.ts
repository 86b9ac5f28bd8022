/**
 * Everything one partition keeps on disk, opened (and recovered) as one unit:
 *
 *   <root>/streams/<s>/topics/<t>/partitions/<p>/
 *     NNNNNNNNNNNNNNNNNNNN.log / .index    segments (partition-log.ts, segment-index.ts)
 *     offsets/consumers/<id>, offsets/groups/<id>   consumer offsets (consumer-offsets.ts)
 *     purge.gen                            applied purge generation + created revision
 *     purge.intent                         only while a purge runs (rolled forward at boot)
 *     superblock.a / superblock.b          the partition group's VsrState (superblock.ts)
 *     .staging/                            only while a state transfer installs (install.ts)
 *
 * Boot recovery order (`open`): create the directory if missing → resolve `.staging` (roll a
 * decided install forward, drop an undecided one) → roll a `purge.intent` forward → sweep
 * leftovers (`*.tmp`, an `.index` without its `.log`; a `.log` is never deleted) → recover
 * every segment (segment-recovery.ts), the last one active → check the segments are contiguous
 * → load consumer offsets and `purge.gen`. Anything that would mean serving wrong data refuses
 * THIS partition with a typed error (the host then wipes it and state-transfers it).
 *
 * Purge (reference behaviour, apache/iggy core/partitions: after a purge the offset frontier is
 * 0 and the next message gets offset 0): every segment and every stored consumer offset is
 * deleted and the log RESTARTS AT OFFSET 0 with an empty segment; `purge.gen` records the
 * generation. The driver resets the superblock's offset frontier accordingly.
 */
import { type Disk, DiskError, type DiskFault, type IoResult, attempt, joinPath } from './disk.js';
import { mkdirDurable, sweepTmpFiles, unlinkIfPresent } from './durable-file.js';
import { ConsumerOffsetStore, type OffsetFileFault } from './consumer-offsets.js';
import { resolvePartitionStaging, type StagingResolution } from './install.js';
import { PartitionLog, TOPIC_STORAGE_DEFAULTS, type TopicStorageOptions } from './partition-log.js';
import { PartitionReader, type ReaderOptions } from './partition-reader.js';
import {
  PURGE_INTENT_FILE_NAME,
  PURGE_RECORD_NONE,
  type PurgeRecord,
  readPurgeRecord,
  writePurgeRecord,
} from './purge-generation.js';
import { recoverSegment } from './segment-recovery.js';
import { type Segment, parseSegmentFileName } from './segment.js';
import { SuperblockStore } from './superblock.js';

export interface PartitionStorageOptions extends TopicStorageOptions, ReaderOptions {}

export const PARTITION_STORAGE_DEFAULTS: PartitionStorageOptions = Object.freeze({
  ...TOPIC_STORAGE_DEFAULTS,
  validateChecksum: true,
  readAheadBytesMax: 1 << 20,
});

export interface SegmentRecoveryNote {
  readonly start: number;
  readonly truncatedBytes: number;
  readonly truncateReason: string | null;
  readonly indexRepairReason: string | null;
}

export interface PartitionRecoveryReport {
  readonly created: boolean;
  readonly staging: StagingResolution;
  readonly purgeRolledForward: boolean;
  readonly swept: readonly string[];
  readonly segments: readonly SegmentRecoveryNote[];
  readonly offsetFaults: readonly OffsetFileFault[];
}

export type PartitionOpenError =
  | { readonly kind: 'io'; readonly fault: DiskFault }
  | { readonly kind: 'refused'; readonly reason: string };

export type PartitionOpenResult =
  | { readonly ok: true; readonly value: PartitionStorage }
  | { readonly ok: false; readonly error: PartitionOpenError };

export class PartitionStorage {
  readonly disk: Disk;
  readonly dir: string;
  readonly options: PartitionStorageOptions;
  readonly log: PartitionLog;
  readonly reader: PartitionReader;
  readonly offsets: ConsumerOffsetStore;
  readonly superblock: SuperblockStore;
  readonly report: PartitionRecoveryReport;
  #purge: PurgeRecord;

  /** Use `PartitionStorage.open`; this only assembles recovered parts. */
  constructor(
    disk: Disk,
    dir: string,
    options: PartitionStorageOptions,
    log: PartitionLog,
    offsets: ConsumerOffsetStore,
    purge: PurgeRecord,
    report: PartitionRecoveryReport,
  ) {
    this.disk = disk;
    this.dir = dir;
    this.options = options;
    this.log = log;
    this.reader = new PartitionReader(log, options);
    this.offsets = offsets;
    this.superblock = new SuperblockStore(disk, dir);
    this.#purge = purge;
    this.report = report;
  }

  /** Opens (creating when missing) and recovers the partition in `dir`. */
  static open(disk: Disk, dir: string, options: Partial<PartitionStorageOptions> = {}): PartitionOpenResult {
    const full: PartitionStorageOptions = { ...PARTITION_STORAGE_DEFAULTS, ...options };
    try {
      return openPartition(disk, dir, full);
    } catch (error) {
      if (!(error instanceof DiskError)) throw error;
      return { ok: false, error: { kind: 'io', fault: { code: error.code, syscall: error.syscall, path: error.path, message: error.message } } };
    }
  }

  get purgeRecord(): PurgeRecord {
    return this.#purge;
  }

  /**
   * Applies a committed purge of `generation`: intent (durable) → every segment deleted →
   * consumer offsets deleted → empty segment at offset 0 → `purge.gen` (durable) → intent removed.
   */
  purge(generation: bigint, createdRevision: bigint): IoResult<void> {
    const record = { generation, createdRevision };
    return attempt(() => {
      writePurgeRecord(this.disk, this.dir, record, PURGE_INTENT_FILE_NAME);
      this.log.resetTo(0);
      const cleared = this.offsets.clear();
      if (!cleared.ok) throw new DiskError(cleared.error.code, cleared.error.syscall, cleared.error.path);
      writePurgeRecord(this.disk, this.dir, record);
      this.disk.unlink(joinPath(this.dir, PURGE_INTENT_FILE_NAME));
      this.disk.fsyncDir(this.dir);
      this.#purge = record;
    });
  }

  close(): IoResult<void> {
    return this.log.close();
  }
}

function openPartition(disk: Disk, dir: string, options: PartitionStorageOptions): PartitionOpenResult {
  const created = disk.stat(dir) === null;
  mkdirDurable(disk, dir);
  const staging = resolvePartitionStaging(disk, dir, options);
  if (typeof staging !== 'string') return { ok: false, error: { kind: 'refused', reason: staging.refused } };

  const offsets = new ConsumerOffsetStore(disk, dir, options.enforceFsync);
  let purgeRolledForward = false;
  const intent = readPurgeRecord(disk, dir, PURGE_INTENT_FILE_NAME);
  if (intent.kind === 'ok') {
    for (const name of disk.readdir(dir)) if (parseSegmentFileName(name) !== null) disk.unlink(joinPath(dir, name));
    disk.fsyncDir(dir);
    const cleared = offsets.clear();
    if (!cleared.ok) throw new DiskError(cleared.error.code, cleared.error.syscall, cleared.error.path);
    writePurgeRecord(disk, dir, intent.record);
    disk.unlink(joinPath(dir, PURGE_INTENT_FILE_NAME));
    disk.fsyncDir(dir);
    purgeRolledForward = true;
  } else if (intent.kind === 'corrupt') {
    // An intent that is not whole was never acted on (it is written atomically): drop it.
    unlinkIfPresent(disk, joinPath(dir, PURGE_INTENT_FILE_NAME));
    disk.fsyncDir(dir);
  }

  const swept = sweepTmpFiles(disk, dir);
  const names = disk.readdir(dir);
  const logs = new Set<number>();
  for (const name of names) {
    const parsed = parseSegmentFileName(name);
    if (parsed?.kind === 'log') logs.add(parsed.start);
  }
  let orphans = false;
  for (const name of names) {
    const parsed = parseSegmentFileName(name);
    if (parsed?.kind === 'index' && !logs.has(parsed.start)) {
      disk.unlink(joinPath(dir, name));
      swept.push(name);
      orphans = true;
    }
  }
  if (orphans) disk.fsyncDir(dir);

  const starts = [...logs].sort((a, b) => a - b);
  const segments: Segment[] = [];
  const notes: SegmentRecoveryNote[] = [];
  const fail = (reason: string): PartitionOpenResult => {
    for (const s of segments) s.closeFds(disk);
    return { ok: false, error: { kind: 'refused', reason } };
  };
  if (starts.length === 0) {
    segments.push(PartitionLog.createSegment(disk, dir, 0, options));
  } else {
    for (let i = 0; i < starts.length; i++) {
      const start = starts[i] as number;
      const recovered = recoverSegment(disk, dir, start, i === starts.length - 1);
      if (recovered.kind === 'refused') return fail(recovered.reason);
      const previous = segments[segments.length - 1];
      if (previous !== undefined && previous.endOffset + 1 !== start) {
        recovered.segment.closeFds(disk);
        return fail(`segment_gap: segment ${start} follows one ending at ${previous.endOffset}`);
      }
      segments.push(recovered.segment);
      notes.push({
        start,
        truncatedBytes: recovered.truncatedBytes,
        truncateReason: recovered.truncateReason,
        indexRepairReason: recovered.indexRepairReason,
      });
    }
  }
  const log = new PartitionLog(disk, dir, options, segments);
  const loaded = offsets.load();
  if (!loaded.ok) throw new DiskError(loaded.error.code, loaded.error.syscall, loaded.error.path);
  const purgeRead = readPurgeRecord(disk, dir);
  const purge = purgeRead.kind === 'ok' ? purgeRead.record : PURGE_RECORD_NONE;
  if (purgeRead.kind === 'corrupt') return fail(`purge_gen_corrupt: ${purgeRead.reason}`);
  const report: PartitionRecoveryReport = {
    created,
    staging,
    purgeRolledForward,
    swept,
    segments: notes,
    offsetFaults: loaded.value.faulty,
  };
  return { ok: true, value: new PartitionStorage(disk, dir, options, log, offsets, purge, report) };
}

