/**
 * The segmented log of one partition: sealed segments + one active segment, offsets contiguous
 * from `startOffset` to `nextOffset − 1`.
 *
 *   [seg 0 sealed][seg 1000 sealed] ... [seg N active ▸ appends land here]
 *    ▲ startOffset (retention moves it up)          nextOffset ▲
 *
 * DURABILITY (Shoal's interpretation of the topic options; docs/storage-layout.md):
 *   - `append(batches)` WRITES the committed batches of one commit step to the active segment
 *     with one gathered pwrite, then their index entries with one pwrite, before it returns. The
 *     caller answers the client after that, so a process crash (SIGKILL) never loses an
 *     acknowledged message: the bytes are in the kernel's page cache.
 *   - fdatasync (.log then .index) follows the topic options: `enforce_fsync = true` → before
 *     `append` returns; otherwise when the unsynced window reaches `messages_required_to_save`
 *     messages or `size_of_messages_required_to_save` bytes (bounding what a POWER failure can
 *     lose), when a segment is sealed, and on `sync()` (shutdown, state-transfer offers).
 *
 * Rotation: after the batch whose append makes the active segment reach `segment_size` (soft
 * limit: the crossing batch lands whole), the segment is sealed (fdatasync, preallocated tail
 * cut) and a new one starts at the next offset (files created, directory fsynced).
 *
 * Invariants asserted: each appended batch's base_offset = nextOffset, message_count > 0,
 * batch_length = buffer length; index offsets and positions strictly increase.
 */
import { assert } from '@shoal/stdx';
import { BATCH_HEADER_SIZE, xxh3_64 } from '@shoal/protocol';
import { type Disk, DiskError, type Fd, type IoResult, attempt, faultOf } from './disk.js';
import { preallocateZeros, readAll } from './durable-file.js';
import { INDEX_ENTRY_SIZE, SegmentIndex, decodeIndex, writeIndexEntry } from './segment-index.js';
import { Segment, batchBaseOffset, batchBaseTimestamp, batchLength, batchMessageCount } from './segment.js';

export interface TopicStorageOptions {
  /** Soft size limit per segment, bytes (topic option, default 1 GiB). */
  readonly segmentSize: number;
  /** fdatasync every append before it returns (default false). */
  readonly enforceFsync: boolean;
  /** fdatasync once this many messages are unsynced (default 1024). */
  readonly messagesRequiredToSave: number;
  /** fdatasync once this many bytes are unsynced (default 1 MiB). */
  readonly sizeOfMessagesRequiredToSave: number;
  /** Reserve each new segment's bytes up front (default false). */
  readonly preallocateSegments: boolean;
}

export const TOPIC_STORAGE_DEFAULTS: TopicStorageOptions = Object.freeze({
  segmentSize: 1 << 30,
  enforceFsync: false,
  messagesRequiredToSave: 1024,
  sizeOfMessagesRequiredToSave: 1 << 20,
  preallocateSegments: false,
});

export interface AppendOutcome {
  readonly firstOffset: number;
  readonly nextOffset: number;
  readonly messages: number;
  readonly bytes: number;
  /** True when this append ended with the data fdatasynced. */
  readonly synced: boolean;
  /**
   * True when the unsynced window crossed its threshold and the caller deferred the fdatasync
   * (`append(…, true)`): it owes a `syncTicket()` job.
   */
  readonly syncDue: boolean;
  /** Segments sealed by this append. */
  readonly sealed: number;
}

/** Sealed segments whose index stays loaded at once (the active one's always is). */
const SEALED_INDEX_CACHE = 4;
/** Read fds kept open for sealed segments at once. */
const SEALED_FD_CACHE = 8;

/**
 * The active segment's unsynced window handed to a disk job (`syncTicket`): the files it must
 * fdatasync, and what the window held, released by `synced` once the job ran.
 */
export interface LogSyncTicket {
  readonly paths: readonly string[];
  readonly segmentStart: number;
  readonly messages: number;
  readonly bytes: number;
}

export class PartitionLog {
  readonly #disk: Disk;
  readonly dir: string;
  readonly options: TopicStorageOptions;
  readonly #segments: Segment[];
  #nextOffset: number;
  #unsyncedMessages = 0;
  #unsyncedBytes = 0;
  #sealedIndexes: Segment[] = [];
  #sealedFds: Segment[] = [];
  #closed = false;

  /** Takes ownership of recovered segments (the last one active, with open fds). */
  constructor(disk: Disk, dir: string, options: TopicStorageOptions, segments: Segment[]) {
    assert(segments.length > 0, 'partition log: needs at least the active segment');
    assert(Number.isSafeInteger(options.segmentSize) && options.segmentSize > BATCH_HEADER_SIZE, 'partition log: segmentSize');
    assert(options.messagesRequiredToSave > 0, 'partition log: messagesRequiredToSave must be > 0');
    this.#disk = disk;
    this.dir = dir;
    this.options = options;
    this.#segments = segments;
    for (let i = 1; i < segments.length; i++) {
      const previous = segments[i - 1] as Segment;
      assert((segments[i] as Segment).startOffset === previous.endOffset + 1, 'partition log: segments not contiguous');
    }
    const active = this.active;
    assert(!active.sealed && active.logFd !== null && active.indexFd !== null && active.index !== null, 'partition log: active segment not open');
    this.#nextOffset = active.endOffset + 1;
  }

  /**
   * Creates the files of an empty segment at `startOffset` (directory fsynced, optional
   * preallocation) and returns it open as the active segment. Throws DiskError.
   */
  static createSegment(disk: Disk, dir: string, startOffset: number, options: TopicStorageOptions): Segment {
    const segment = new Segment(dir, startOffset);
    segment.logFd = disk.open(segment.logPath, 'truncate');
    segment.indexFd = disk.open(segment.indexPath, 'truncate');
    segment.index = new SegmentIndex();
    if (options.preallocateSegments) {
      preallocateZeros(disk, segment.logFd, 0, options.segmentSize);
      disk.fdatasync(segment.logFd);
    }
    disk.fsyncDir(dir);
    return segment;
  }

  get disk(): Disk {
    return this.#disk;
  }

  get segments(): readonly Segment[] {
    return this.#segments;
  }

  get active(): Segment {
    return this.#segments[this.#segments.length - 1] as Segment;
  }

  /** Lowest offset still stored. */
  get startOffset(): number {
    return (this.#segments[0] as Segment).startOffset;
  }

  /** The offset the next appended batch must carry. */
  get nextOffset(): number {
    return this.#nextOffset;
  }

  get empty(): boolean {
    return this.#nextOffset === this.startOffset;
  }

  /** Logical bytes of every segment. */
  get sizeBytes(): number {
    let total = 0;
    for (const s of this.#segments) total += s.size;
    return total;
  }

  /** Logical bytes of the sealed segments (what size retention counts). */
  get sealedBytes(): number {
    let total = 0;
    for (const s of this.#segments) if (s.sealed) total += s.size;
    return total;
  }

  get unsyncedMessages(): number {
    return this.#unsyncedMessages;
  }

  get unsyncedBytes(): number {
    return this.#unsyncedBytes;
  }

  /**
   * Appends committed, stamped batches (one commit step), coalesced into one write per segment
   * touched. See the header for when it fdatasyncs.
   */
  append(batches: readonly Uint8Array[], deferSync = false): IoResult<AppendOutcome> {
    assert(!this.#closed, 'partition log: closed');
    const firstOffset = this.#nextOffset;
    let messages = 0;
    let bytes = 0;
    let sealed = 0;
    try {
      let run: Uint8Array[] = [];
      let runBytes = 0;
      let runEntries: number[] = [];
      const flushRun = (): void => {
        if (run.length === 0) return;
        this.#writeRun(run, runBytes, runEntries);
        run = [];
        runBytes = 0;
        runEntries = [];
      };
      let next = this.#nextOffset;
      for (const batch of batches) {
        const length = batchLength(batch);
        const count = batchMessageCount(batch);
        const base = batchBaseOffset(batch);
        assert(batch.length >= BATCH_HEADER_SIZE && length === batch.length, `append: batch_length ${length} != buffer ${batch.length}`);
        assert(count > 0, 'append: empty batch');
        assert(base === next, `append: base_offset ${base} != next offset ${next}`);
        const active = this.active;
        runEntries.push(base, batchBaseTimestamp(batch), active.size + runBytes);
        run.push(batch);
        runBytes += length;
        next += count;
        messages += count;
        bytes += length;
        if (active.size + runBytes >= this.options.segmentSize) {
          flushRun();
          this.#rotate(next);
          sealed++;
        }
      }
      flushRun();
      let synced = false;
      let syncDue = false;
      if (this.options.enforceFsync || (!deferSync && this.syncDue)) {
        this.#syncActive();
        synced = true;
      } else if (this.syncDue) {
        syncDue = true;
      }
      return { ok: true, value: { firstOffset, nextOffset: this.#nextOffset, messages, bytes, synced, syncDue, sealed } };
    } catch (error) {
      if (!(error instanceof DiskError)) throw error;
      return { ok: false, error: faultOf(error) };
    }
  }

  /** The unsynced window reached `messages_required_to_save` or its byte size. */
  get syncDue(): boolean {
    return this.#unsyncedMessages >= this.options.messagesRequiredToSave || this.#unsyncedBytes >= this.options.sizeOfMessagesRequiredToSave;
  }

  /** The active segment's files and unsynced window, for a disk job that fdatasyncs them. */
  syncTicket(): LogSyncTicket {
    const active = this.active;
    return { paths: [active.logPath, active.indexPath], segmentStart: active.startOffset, messages: this.#unsyncedMessages, bytes: this.#unsyncedBytes };
  }

  /**
   * A ticket's job ran: what its window held is durable. A window that rotated meanwhile was
   * sealed (fdatasynced) already; then nothing is released.
   */
  synced(ticket: LogSyncTicket): void {
    if (this.#closed || this.active.startOffset !== ticket.segmentStart) return;
    this.#unsyncedMessages = Math.max(0, this.#unsyncedMessages - ticket.messages);
    this.#unsyncedBytes = Math.max(0, this.#unsyncedBytes - ticket.bytes);
  }

  /** fdatasync the active segment's .log and .index (shutdown, state-transfer offer). */
  sync(): IoResult<void> {
    return attempt(() => this.#syncActive());
  }

  /** The loaded index of `segment` (read from disk for a sealed one). Throws DiskError. */
  indexOf(segment: Segment): SegmentIndex {
    if (segment.index !== null) return segment.index;
    const fd = this.#disk.open(segment.indexPath, 'read');
    let bytes: Uint8Array;
    try {
      bytes = readAll(this.#disk, fd, 0, segment.indexBytes);
    } finally {
      this.#disk.close(fd);
    }
    const decoded = decodeIndex(bytes, segment.startOffset);
    // The file was verified at boot and is immutable once sealed: a bad decode now is a fault at rest.
    if (decoded.kind !== 'ok' || decoded.tornBytes !== 0) {
      throw new DiskError('EIO', 'read(index)', segment.indexPath, decoded.kind === 'ok' ? 'torn' : decoded.reason);
    }
    segment.index = decoded.index;
    this.#sealedIndexes.push(segment);
    if (this.#sealedIndexes.length > SEALED_INDEX_CACHE) {
      const evicted = this.#sealedIndexes.shift() as Segment;
      if (evicted.sealed) evicted.index = null;
    }
    return decoded.index;
  }

  /** A read fd for `segment` (the active segment's own fd; cached for sealed ones). Throws DiskError. */
  readFdOf(segment: Segment): Fd {
    if (segment.logFd !== null) return segment.logFd;
    segment.logFd = this.#disk.open(segment.logPath, 'read');
    this.#sealedFds.push(segment);
    if (this.#sealedFds.length > SEALED_FD_CACHE) {
      const evicted = this.#sealedFds.shift() as Segment;
      if (evicted.sealed) evicted.closeFds(this.#disk);
    }
    return segment.logFd;
  }

  /** pread from `segment`'s .log. Throws DiskError. */
  readLog(segment: Segment, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return this.#disk.read(this.readFdOf(segment), buffer, offset, length, position);
  }

  /** Segment holding `offset`, or null when it is not stored. */
  segmentFor(offset: number): Segment | null {
    if (offset < this.startOffset || offset >= this.#nextOffset) return null;
    let lo = 0;
    let hi = this.#segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.#segments[mid] as Segment).startOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return this.#segments[lo] as Segment;
  }

  /**
   * Deletes up to `count` of the oldest SEALED segments (never the active one), one at a time,
   * each made durable (.log, then .index unlinked, then the directory fsynced) before the next,
   * so a crash can only leave a prefix deleted. Returns how many were deleted.
   */
  deleteOldestSealed(count: number): IoResult<number> {
    return attempt(() => {
      let deleted = 0;
      while (deleted < count && this.#segments.length > 1 && (this.#segments[0] as Segment).sealed) {
        const segment = this.#segments[0] as Segment;
        segment.closeFds(this.#disk);
        this.#disk.unlink(segment.logPath);
        if (this.#disk.stat(segment.indexPath) !== null) this.#disk.unlink(segment.indexPath);
        this.#disk.fsyncDir(this.dir);
        this.#segments.shift();
        this.#sealedIndexes = this.#sealedIndexes.filter((s) => s !== segment);
        this.#sealedFds = this.#sealedFds.filter((s) => s !== segment);
        deleted++;
      }
      return deleted;
    });
  }

  /**
   * Deletes every segment and starts over with one empty active segment at `startOffset`
   * (purge; install of an empty offer). Each unlink is durable before the new segment exists.
   * Throws DiskError.
   */
  resetTo(startOffset: number): void {
    for (const segment of this.#segments) {
      segment.closeFds(this.#disk);
      this.#disk.unlink(segment.logPath);
      if (this.#disk.stat(segment.indexPath) !== null) this.#disk.unlink(segment.indexPath);
    }
    this.#disk.fsyncDir(this.dir);
    this.#segments.length = 0;
    this.#sealedIndexes = [];
    this.#sealedFds = [];
    this.#segments.push(PartitionLog.createSegment(this.#disk, this.dir, startOffset, this.options));
    this.#nextOffset = startOffset;
    this.#unsyncedMessages = 0;
    this.#unsyncedBytes = 0;
  }

  close(): IoResult<void> {
    return attempt(() => {
      if (this.#closed) return;
      this.#syncActive();
      for (const segment of this.#segments) segment.closeFds(this.#disk);
      this.#closed = true;
    });
  }

  #writeRun(run: readonly Uint8Array[], runBytes: number, entries: readonly number[]): void {
    const segment = this.active;
    const logFd = segment.logFd as Fd;
    const indexFd = segment.indexFd as Fd;
    const index = segment.index as SegmentIndex;
    // 1. batch bytes (one gathered write)   2. their index entries (one write, AFTER the bytes)
    this.#disk.writev(logFd, run, segment.size);
    const count = entries.length / 3;
    const indexBytes = new Uint8Array(count * INDEX_ENTRY_SIZE);
    const view = new DataView(indexBytes.buffer);
    for (let i = 0; i < count; i++) {
      writeIndexEntry(view, i * INDEX_ENTRY_SIZE, entries[i * 3] as number, entries[i * 3 + 1] as number, entries[i * 3 + 2] as number);
    }
    this.#disk.write(indexFd, indexBytes, 0, indexBytes.length, segment.indexBytes);
    // Each record's digest while its bytes are the verified ones (one SIMD hash: ~40 µs per MiB),
    // so a poll re-verifies it with one hash instead of one per frame (record-digests.ts).
    for (let i = 0; i < count; i++) {
      segment.digests.set(index.length, xxh3_64(run[i] as Uint8Array));
      index.push(entries[i * 3] as number, entries[i * 3 + 1] as number, entries[i * 3 + 2] as number);
    }
    if (segment.empty) segment.firstTimestamp = entries[1] as number;
    segment.lastTimestamp = entries[(count - 1) * 3 + 1] as number;
    segment.size += runBytes;
    segment.indexBytes += indexBytes.length;
    let messages = 0;
    for (const batch of run) messages += batchMessageCount(batch);
    segment.endOffset += messages;
    this.#nextOffset = segment.endOffset + 1;
    this.#unsyncedMessages += messages;
    this.#unsyncedBytes += runBytes;
  }

  #rotate(nextOffset: number): void {
    const sealed = this.active;
    assert(sealed.endOffset + 1 === nextOffset, 'rotate: offsets drift');
    this.#disk.fdatasync(sealed.logFd as Fd);
    this.#disk.fdatasync(sealed.indexFd as Fd);
    if (this.#disk.size(sealed.logFd as Fd) > sealed.size) {
      this.#disk.truncate(sealed.logFd as Fd, sealed.size);
      this.#disk.fdatasync(sealed.logFd as Fd);
    }
    sealed.sealed = true;
    sealed.closeFds(this.#disk);
    sealed.index = null;
    this.#unsyncedMessages = 0;
    this.#unsyncedBytes = 0;
    this.#segments.push(PartitionLog.createSegment(this.#disk, this.dir, nextOffset, this.options));
  }

  #syncActive(): void {
    const active = this.active;
    if (this.#unsyncedMessages === 0 && this.#unsyncedBytes === 0) return;
    this.#disk.fdatasync(active.logFd as Fd);
    this.#disk.fdatasync(active.indexFd as Fd);
    this.#unsyncedMessages = 0;
    this.#unsyncedBytes = 0;
  }
}
