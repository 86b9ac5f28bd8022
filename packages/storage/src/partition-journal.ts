/**
 * The partition journal: every prepare a partition replica journals, handed to the OS before the
 * replica acknowledges it (a PrepareOk, or the primary's own ack), so that an acknowledged batch
 * survives `kill -9` of every node; recovered at boot above the durable commit frontier.
 * Format: docs/storage-partition-journal.md.
 *
 *   <partition>/journal/NNNNNNNNNNNNNNNNNNNN.pj    (20-digit file sequence, increasing)
 *
 * Each file is a run of records: an OPEN record first (the boot id of the process that wrote the
 * file, the reservation, the faulty ranges carried over), then PREPARE, TRUNCATE and RESERVE
 * records, each self-checking (XXH3). Appends go to the newest file; a boot consolidates what
 * survives into a new file and deletes the older ones; `compact` deletes files whose every
 * prepare is at or below the durable commit frontier (`release` hands their paths to the caller
 * instead); a file past `fileBytesMax` is rotated.
 *
 * What a restart knows:
 * - a process kill (same boot id): every record whose write returned is there (the page cache
 *   survives), synced or not: the journal is whole;
 * - a power loss or reboot (another boot id), or a record that does not verify before the end of
 *   its file: the unsynced tail may be gone. Every op above what survives, through the durable
 *   RESERVATION, may have been acknowledged: `lostThrough`. The reservation is the persisted
 *   floor: an op is acknowledged only once a reservation at or above it is fdatasynced (one
 *   fdatasync per `reserveOps / 2` appends, ahead of need);
 * - TRUNCATE records name the ops a suffix truncation dropped that the replica may have
 *   acknowledged (fdatasynced before the truncation takes effect): faulty until journaled again.
 *
 * `enforce_fsync`: the caller holds the append's completion until `sync()` (group fdatasync).
 * Otherwise the completion follows the write; fdatasync happens with the reservations, at
 * rotation, on `sync()` (the driver calls it with every segment fdatasync).
 */
import { assert } from '@shoal/stdx';
import { Command, HEADER_SIZE, OFFSET_COMMAND, OFFSET_SIZE, PREPARE_LAYOUT, xxh3_64 } from '@shoal/protocol';
import { type Disk, DiskError, type Fd, type IoResult, attempt, joinPath } from './disk.js';
import { mkdirDurable, readAll } from './durable-file.js';

export const PARTITION_JOURNAL_DIR = 'journal';
export const PARTITION_JOURNAL_SUFFIX = '.pj';
/** "PJRN" on disk. */
export const PARTITION_JOURNAL_MAGIC = 0x4e524a50;
export const PARTITION_JOURNAL_RECORD_HEADER = 40;

/** Record kinds (byte 4). */
export const JournalRecordKind = Object.freeze({ Open: 1, Prepare: 2, Truncate: 3, Reserve: 4 } as const);
export type JournalRecordKind = (typeof JournalRecordKind)[keyof typeof JournalRecordKind];

/** Record header offsets (40 bytes; the payload follows). */
export const JOURNAL_RECORD_LAYOUT = Object.freeze({
  magic: 0, // u32
  kind: 4, // u8, then 3 zero bytes
  payloadLength: 8, // u32, then 4 zero bytes
  a: 16, // u64: Open = reservation, Prepare = op, Truncate = fromOp, Reserve = reservation
  b: 24, // u64: Truncate = faultyThrough, else 0
  checksum: 32, // u64: XXH3 of (bytes 0..32 ‖ u64 XXH3 of the payload)
});

export interface PartitionJournalOptions {
  /** `enforce_fsync`: appends complete only after `sync()` (the caller groups them). */
  readonly enforceFsync: boolean;
  /** Ops reserved ahead of the head by each durable RESERVE record (default 1024). */
  readonly reserveOps: number;
  /** Rotate the active file beyond this many bytes (default 16 MiB). */
  readonly fileBytesMax: number;
  /** Largest prepare frame accepted at recovery (the cluster's message_size_max). */
  readonly frameBytesMax: number;
}

export const PARTITION_JOURNAL_DEFAULTS: PartitionJournalOptions = Object.freeze({
  enforceFsync: false,
  reserveOps: 1024,
  fileBytesMax: 16 << 20,
  frameBytesMax: 64 << 20,
});

/** What a boot recovered. */
export interface PartitionJournalRecovery {
  /** Prepare frames (command 6) above `keepAbove`, op ascending, one per op. */
  readonly entries: readonly Uint8Array[];
  /** Ops a truncation dropped that the replica may have acknowledged, not journaled again. */
  readonly faultyOps: readonly number[];
  /** The journal's tail may be lost: ops above the held ones through this may have been acknowledged (0: none). */
  readonly lostThrough: number;
  /** Why the tail may be lost ('power_loss', 'corrupt_record …'), or null. */
  readonly damage: string | null;
  /**
   * Nothing bounds what was acknowledged: a record of the newest file did not verify where no
   * crash can have cut its writes (after a process kill the page cache kept every one; or the
   * file's OPEN record itself is damaged), so the bytes were damaged after they were written and
   * what followed them, a durable RESERVE among it, is unknown: `lostThrough` is no bound. The
   * caller must treat the journal as lost (the partition driver's journal-lost marker).
   */
  readonly unbounded: boolean;
  /** No journal file existed (a new partition, or a journal that is gone). */
  readonly absent: boolean;
  /** Records read, and a torn last record dropped (a write cut short by the crash). */
  readonly records: number;
  readonly tornTail: boolean;
}

interface FileInfo {
  readonly seq: number;
  readonly path: string;
  /** Highest op of a prepare record in the file (0: none). */
  maxOp: number;
}

interface Range {
  from: number;
  to: number;
}

function fileName(seq: number): string {
  return `${String(seq).padStart(20, '0')}${PARTITION_JOURNAL_SUFFIX}`;
}

function parseFileName(name: string): number | null {
  if (!name.endsWith(PARTITION_JOURNAL_SUFFIX)) return null;
  const digits = name.slice(0, -PARTITION_JOURNAL_SUFFIX.length);
  if (!/^\d{20}$/.test(digits)) return null;
  const seq = Number(digits);
  return Number.isSafeInteger(seq) ? seq : null;
}

// ---------------------------------------------------------------------------------------------
// Records.

const L = JOURNAL_RECORD_LAYOUT;
const OP_AT = PREPARE_LAYOUT.op.offset;

function u64(view: DataView, at: number): number {
  const value = view.getBigUint64(at, true);
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(value);
}

/** XXH3 of (header bytes 0..32 ‖ u64 XXH3 of the payload): no copy of a large payload. */
function checksumOf(header: Uint8Array, payload: Uint8Array): bigint {
  const input = new Uint8Array(L.checksum + 8);
  input.set(header.subarray(0, L.checksum), 0);
  new DataView(input.buffer).setBigUint64(L.checksum, xxh3_64(payload), true);
  return xxh3_64(input);
}

/** One record: its 40-byte header (checksum sealed) and the payload, to write back to back. */
export function encodeRecord(kind: JournalRecordKind, a: number, b: number, payload: Uint8Array): [Uint8Array, Uint8Array] {
  assert(Number.isSafeInteger(a) && a >= 0 && Number.isSafeInteger(b) && b >= 0, 'journal record: fields');
  const header = new Uint8Array(PARTITION_JOURNAL_RECORD_HEADER);
  const view = new DataView(header.buffer);
  view.setUint32(L.magic, PARTITION_JOURNAL_MAGIC, true);
  header[L.kind] = kind;
  view.setUint32(L.payloadLength, payload.length, true);
  view.setBigUint64(L.a, BigInt(a), true);
  view.setBigUint64(L.b, BigInt(b), true);
  view.setBigUint64(L.checksum, checksumOf(header, payload), true);
  return [header, payload];
}

export interface DecodedRecord {
  readonly kind: JournalRecordKind;
  readonly a: number;
  readonly b: number;
  readonly payload: Uint8Array;
  readonly size: number;
}

/** The record at `at`, or why not ('short' when the bytes end inside it). */
export function decodeRecord(bytes: Uint8Array, at: number, frameBytesMax: number): DecodedRecord | 'short' | string {
  if (bytes.length - at < PARTITION_JOURNAL_RECORD_HEADER) return 'short';
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, PARTITION_JOURNAL_RECORD_HEADER);
  if (view.getUint32(L.magic, true) !== PARTITION_JOURNAL_MAGIC) return 'bad_magic';
  const kind = bytes[at + L.kind] as number;
  if (kind < JournalRecordKind.Open || kind > JournalRecordKind.Reserve) return 'bad_kind';
  for (const i of [5, 6, 7, 12, 13, 14, 15]) if (bytes[at + i] !== 0) return 'reserved_nonzero';
  const length = view.getUint32(L.payloadLength, true);
  if (length > frameBytesMax + 4096) return 'payload_too_large';
  if (bytes.length - at - PARTITION_JOURNAL_RECORD_HEADER < length) return 'short';
  const header = bytes.subarray(at, at + PARTITION_JOURNAL_RECORD_HEADER);
  const payload = bytes.subarray(at + PARTITION_JOURNAL_RECORD_HEADER, at + PARTITION_JOURNAL_RECORD_HEADER + length);
  if (view.getBigUint64(L.checksum, true) !== checksumOf(header, payload)) return 'checksum_mismatch';
  const a = u64(view, L.a);
  const b = u64(view, L.b);
  if (a < 0 || b < 0) return 'field_not_safe';
  if (kind === JournalRecordKind.Prepare) {
    if (payload.length < HEADER_SIZE || payload[OFFSET_COMMAND] !== Command.Prepare) return 'not_a_prepare';
    const frame = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    if (frame.getUint32(OFFSET_SIZE, true) !== payload.length) return 'prepare_size_mismatch';
    if (u64(frame, OP_AT) !== a || a === 0) return 'prepare_op_mismatch';
  }
  return { kind: kind as JournalRecordKind, a, b, payload, size: PARTITION_JOURNAL_RECORD_HEADER + length };
}

const utf8 = new TextEncoder();
const unutf8 = new TextDecoder();

/** OPEN payload: boot id (u16 length + UTF-8), then u32 count + (from, to) u64 pairs of faulty ranges. */
function encodeOpen(bootId: string, faulty: readonly Range[]): Uint8Array {
  const id = utf8.encode(bootId);
  const out = new Uint8Array(2 + id.length + 4 + 16 * faulty.length);
  const view = new DataView(out.buffer);
  view.setUint16(0, id.length, true);
  out.set(id, 2);
  view.setUint32(2 + id.length, faulty.length, true);
  faulty.forEach((r, i) => {
    view.setBigUint64(6 + id.length + 16 * i, BigInt(r.from), true);
    view.setBigUint64(14 + id.length + 16 * i, BigInt(r.to), true);
  });
  return out;
}

function decodeOpen(payload: Uint8Array): { bootId: string; faulty: Range[] } | null {
  if (payload.length < 6) return null;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const idLength = view.getUint16(0, true);
  if (payload.length < 6 + idLength) return null;
  const count = view.getUint32(2 + idLength, true);
  if (payload.length !== 6 + idLength + 16 * count) return null;
  const faulty: Range[] = [];
  for (let i = 0; i < count; i++) {
    const from = u64(view, 6 + idLength + 16 * i);
    const to = u64(view, 14 + idLength + 16 * i);
    if (from < 1 || to < from) return null;
    faulty.push({ from, to });
  }
  return { bootId: unutf8.decode(payload.subarray(2, 2 + idLength)), faulty };
}

/** Ranges of a set of ops (ascending, merged). */
function rangesOf(ops: Iterable<number>): Range[] {
  const sorted = [...ops].sort((x, y) => x - y);
  const out: Range[] = [];
  for (const op of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && op <= last.to + 1) last.to = Math.max(last.to, op);
    else out.push({ from: op, to: op });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Recovery.

interface Replay {
  readonly entries: Map<number, Uint8Array>;
  readonly faulty: Set<number>;
  reservation: number;
  lastBootId: string | null;
  damage: string | null;
  /** A record of the newest file did not verify (not a torn last record). */
  damageInLast: boolean;
  /** The newest file's OPEN record verified. */
  lastOpenRead: boolean;
  tornTail: boolean;
  records: number;
  readonly files: FileInfo[];
}

/** Reads of the journal files at boot before a short record or damage in them is believed. */
const REPLAY_READS = 3;

/**
 * Replays every file; when the replay ends at a short record or at damage, reads and replays them
 * all again, up to `REPLAY_READS` times: a clean replay wins at once, two replays that end alike
 * are believed, and replays that never agree are damage in the newest file (unbounded: the
 * journal counts as lost). A read fault that enlarged the last record's length field made an
 * acknowledged prepare look cut short by a crash; dropped as a torn write, nothing was marked
 * lost and the op was nacked (helper-51). (A record that every read shows short is taken as torn,
 * as before: a process killed in the middle of a large write leaves one too.)
 */
function replayWithRereads(disk: Disk, files: FileInfo[], options: PartitionJournalOptions): Replay {
  const replays: Replay[] = [];
  for (let read = 0; read < REPLAY_READS; read++) {
    const r: Replay = {
      entries: new Map(), faulty: new Set(), reservation: 0, lastBootId: null, damage: null, damageInLast: false, lastOpenRead: false,
      tornTail: false, records: 0, files,
    };
    files.forEach((file, i) => {
      file.maxOp = 0;
      const fd = disk.open(file.path, 'read');
      try {
        replayFile(readAll(disk, fd, 0, disk.size(fd)), file, i === files.length - 1, options, r);
      } finally {
        disk.close(fd);
      }
    });
    if ((r.damage === null && !r.tornTail) || replays.some((p) => sameEnding(p, r))) return r;
    replays.push(r);
  }
  const r = replays[replays.length - 1] as Replay;
  r.damage ??= `reads_disagree: ${REPLAY_READS} replays of the journal ended differently`;
  r.damageInLast = true;
  return r;
}

/** Two replays of the same files ended at the same record in the same way. */
function sameEnding(a: Replay, b: Replay): boolean {
  return a.damage === b.damage && a.tornTail === b.tornTail && a.records === b.records && a.damageInLast === b.damageInLast;
}

function replayFile(bytes: Uint8Array, file: FileInfo, last: boolean, options: PartitionJournalOptions, r: Replay): void {
  let at = 0;
  let first = true;
  while (at < bytes.length) {
    const record = decodeRecord(bytes, at, options.frameBytesMax);
    if (typeof record === 'string') {
      // The record a crash cut short, at the very end of the newest file, was never returned
      // from (never acknowledged). Anything else is damage: what followed it is unknown.
      if (last && record === 'short') r.tornTail = true;
      else {
        r.damage ??= `${record} in ${file.path} at ${at}`;
        if (last) r.damageInLast = true;
      }
      return;
    }
    r.records++;
    if (first && record.kind !== JournalRecordKind.Open) {
      r.damage ??= `no open record in ${file.path}`;
      if (last) r.damageInLast = true;
      return;
    }
    first = false;
    switch (record.kind) {
      case JournalRecordKind.Open: {
        const open = decodeOpen(record.payload);
        if (open === null) {
          r.damage ??= `bad open record in ${file.path}`;
          if (last) r.damageInLast = true;
          return;
        }
        if (last) r.lastOpenRead = true;
        r.lastBootId = open.bootId;
        for (const range of open.faulty) for (let op = range.from; op <= range.to; op++) if (!r.entries.has(op)) r.faulty.add(op);
        r.reservation = Math.max(r.reservation, record.a);
        break;
      }
      case JournalRecordKind.Prepare:
        r.entries.set(record.a, record.payload);
        r.faulty.delete(record.a);
        if (record.a > file.maxOp) file.maxOp = record.a;
        break;
      case JournalRecordKind.Truncate:
        for (const op of [...r.entries.keys()]) if (op >= record.a) r.entries.delete(op);
        for (const op of [...r.faulty]) if (op >= record.a) r.faulty.delete(op);
        for (let op = record.a; op <= record.b; op++) r.faulty.add(op);
        break;
      case JournalRecordKind.Reserve:
        r.reservation = Math.max(r.reservation, record.a);
        break;
    }
    at += record.size;
  }
}

// ---------------------------------------------------------------------------------------------

export class PartitionJournal {
  readonly disk: Disk;
  readonly dir: string;
  readonly options: PartitionJournalOptions;
  readonly #files: FileInfo[];
  #fd: Fd;
  #end: number;
  /** The durable reservation: no op above it was ever acknowledged. */
  #reserved: number;
  /** Ops a truncation dropped that may have been acknowledged (carried into each new file). */
  readonly #faulty: Set<number>;
  #unsynced = false;
  #closed = false;

  private constructor(disk: Disk, dir: string, options: PartitionJournalOptions, files: FileInfo[], fd: Fd, end: number, reserved: number, faulty: Set<number>) {
    this.disk = disk;
    this.dir = dir;
    this.options = options;
    this.#files = files;
    this.#fd = fd;
    this.#end = end;
    this.#reserved = reserved;
    this.#faulty = faulty;
  }

  /**
   * Recovers the journal of the partition in `partitionDir` (ops above `keepAbove`, the durable
   * commit frontier, matter) and opens it for appends: what survived is consolidated into a new
   * file (OPEN record with this boot's id, the reservation and the faulty ranges, then the
   * surviving prepares), fdatasynced, and the older files deleted.
   */
  static open(
    disk: Disk, partitionDir: string, options: Partial<PartitionJournalOptions>, keepAbove: number,
    beforeReplace?: (recovery: PartitionJournalRecovery) => void,
  ): IoResult<{ journal: PartitionJournal; recovery: PartitionJournalRecovery }> {
    const full: PartitionJournalOptions = { ...PARTITION_JOURNAL_DEFAULTS, ...options };
    assert(full.reserveOps >= 2, 'partition journal: reserveOps must be at least 2');
    const dir = joinPath(partitionDir, PARTITION_JOURNAL_DIR);
    return attempt(() => {
      mkdirDurable(disk, dir);
      const names = disk.readdir(dir);
      const files: FileInfo[] = [];
      for (const name of names) {
        const seq = parseFileName(name);
        if (seq !== null) files.push({ seq, path: joinPath(dir, name), maxOp: 0 });
      }
      files.sort((x, y) => x.seq - y.seq);
      const r = replayWithRereads(disk, files, full);
      const absent = files.length === 0;
      const bootId = disk.bootId();
      const powerLoss = !absent && (r.lastBootId === null || r.lastBootId === '' || r.lastBootId !== bootId);
      const damage = r.damage ?? (powerLoss ? 'power_loss' : null);
      // After a power loss, a record of the newest file that does not verify may be its unsynced
      // tail (torn, or persisted out of order): nothing after it was synced, so no RESERVE after it
      // was durable and the one before bounds what was acked. After a process kill nothing was
      // cut: damage there is corruption (a bad read, a misdirected write), and a durable RESERVE may
      // lie beyond it (seed 500232 of 3: a read flipped the first PREPARE's magic after a kill, the
      // boot reported nothing lost, and the replica nacked its acked op 1 in a view that committed
      // another op 1). (Corruption of synced bytes after a power loss looks like a torn tail: not
      // told apart here.)
      const unbounded = r.damageInLast && (!r.lastOpenRead || r.lastBootId === bootId);
      const held = [...r.entries.keys()].filter((op) => op > keepAbove).sort((x, y) => x - y);
      const head = Math.max(keepAbove, held[held.length - 1] ?? 0);
      const lostThrough = damage === null ? 0 : Math.max(r.reservation, head);
      // What a later boot must still know: faulty ops, and the lost tail (now faulty too).
      const faulty = new Set<number>();
      for (const op of r.faulty) if (op > keepAbove && !r.entries.has(op)) faulty.add(op);
      if (lostThrough > head) for (let op = head + 1; op <= Math.min(lostThrough, head + full.reserveOps); op++) faulty.add(op);
      for (let op = keepAbove + 1; op <= head && lostThrough > 0; op++) if (!r.entries.has(op)) faulty.add(op);
      const recovery: PartitionJournalRecovery = {
        entries: held.map((op) => (r.entries.get(op) as Uint8Array).slice()),
        faultyOps: [...faulty].sort((x, y) => x - y),
        lostThrough,
        damage,
        unbounded,
        absent,
        records: r.records,
        tornTail: r.tornTail,
      };
      // After a clean stop (the page cache kept every write) nothing above the head was ever
      // acknowledged: the new reservation starts at the head (the first append makes one durable).
      // Reserving a window ahead at every boot made a later power loss mark 1024 ops faulty in a
      // group that never wrote one (simulator seeds 204 and 209 of 3: an empty group's lost tail
      // nobody could disprove). After a loss the old reservation still bounds what was acked.
      const reserved = damage === null ? head : Math.max(r.reservation, head);
      // The caller records what must survive this boot (a lost journal) before the files that
      // tell it are replaced.
      beforeReplace?.(recovery);
      const seq = (files[files.length - 1]?.seq ?? 0) + 1;
      const journal = PartitionJournal.#start(disk, dir, full, seq, reserved, faulty, recovery.entries, bootId);
      for (const file of files) disk.unlink(file.path);
      if (files.length > 0) disk.fsyncDir(dir);
      return { journal, recovery };
    });
  }

  /** Writes a new file: OPEN, then `entries` as PREPARE records; fdatasync; directory fsync. */
  static #start(
    disk: Disk, dir: string, options: PartitionJournalOptions, seq: number, reserved: number, faulty: Set<number>,
    entries: readonly Uint8Array[], bootId: string,
  ): PartitionJournal {
    const path = joinPath(dir, fileName(seq));
    const fd = disk.open(path, 'createExclusive');
    const parts: Uint8Array[] = [...encodeRecord(JournalRecordKind.Open, reserved, 0, encodeOpen(bootId, rangesOf(faulty)))];
    let maxOp = 0;
    for (const frame of entries) {
      const op = u64(new DataView(frame.buffer, frame.byteOffset, frame.byteLength), OP_AT);
      parts.push(...encodeRecord(JournalRecordKind.Prepare, op, 0, frame));
      maxOp = Math.max(maxOp, op);
    }
    let end = 0;
    for (const part of parts) end += part.length;
    disk.writev(fd, parts, 0);
    disk.fdatasync(fd);
    disk.fsyncDir(dir);
    return new PartitionJournal(disk, dir, options, [{ seq, path, maxOp }], fd, end, reserved, faulty);
  }

  /** The durable reservation (the persisted floor). */
  get reserved(): number {
    return this.#reserved;
  }

  /** The file appends go to (a disk job fdatasyncs it by path). */
  get activePath(): string {
    return (this.#files[this.#files.length - 1] as FileInfo).path;
  }

  /** Journal files on disk (tests, metrics). */
  get fileCount(): number {
    return this.#files.length;
  }

  /**
   * Appends a prepare frame (command 6). The bytes are in the OS when this returns; with
   * `enforceFsync` the caller completes the append only after `sync()`. Crossing half of the
   * reservation first makes a new one durable (one fdatasync, which also syncs the appends).
   */
  append(frame: Uint8Array): IoResult<void> {
    assert(!this.#closed, 'partition journal: closed');
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    assert(frame.length >= HEADER_SIZE && frame[OFFSET_COMMAND] === Command.Prepare, 'partition journal: not a prepare');
    assert(view.getUint32(OFFSET_SIZE, true) === frame.length, 'partition journal: frame length != header size');
    const op = u64(view, OP_AT);
    assert(op > 0, 'partition journal: op');
    return attempt(() => {
      this.#write(encodeRecord(JournalRecordKind.Prepare, op, 0, frame));
      this.#faulty.delete(op);
      const active = this.#files[this.#files.length - 1] as FileInfo;
      if (op > active.maxOp) active.maxOp = op;
      if (this.#end > this.options.fileBytesMax) this.#rotate();
      if (op > this.#reserved - Math.floor(this.options.reserveOps / 2)) {
        const reserved = op + this.options.reserveOps;
        this.#write(encodeRecord(JournalRecordKind.Reserve, reserved, 0, new Uint8Array(0)));
        this.#syncNow();
        this.#reserved = reserved;
      }
      assert(op <= this.#reserved, 'partition journal: an op above the durable reservation');
    });
  }

  /**
   * Voids every prepare with op >= fromOp; the faulty ops at or above fromOp become exactly
   * [fromOp, faultyThrough] (ops that may have been acknowledged: faulty until journaled again).
   * Durable (fdatasync) before it returns.
   */
  truncateFrom(fromOp: number, faultyThrough: number): IoResult<void> {
    assert(!this.#closed, 'partition journal: closed');
    assert(fromOp >= 1, 'partition journal: truncate from op 0');
    return attempt(() => {
      this.#write(encodeRecord(JournalRecordKind.Truncate, fromOp, Math.max(faultyThrough, fromOp - 1), new Uint8Array(0)));
      for (const op of [...this.#faulty]) if (op >= fromOp) this.#faulty.delete(op);
      for (let op = fromOp; op <= faultyThrough; op++) this.#faulty.add(op);
      this.#syncNow();
    });
  }

  /** fdatasync of the active file (group commit; also called with every segment fdatasync). */
  sync(): IoResult<void> {
    assert(!this.#closed, 'partition journal: closed');
    return attempt(() => this.#syncNow());
  }

  /**
   * The durable commit frontier reached `throughOp`: files whose every prepare is at or below it
   * (never the active one) are deleted, and faulty marks at or below it forgotten. The active file
   * is rotated first when it outgrew `fileBytesMax`.
   */
  compact(throughOp: number): IoResult<number> {
    const released = this.release(throughOp);
    if (!released.ok) return released;
    const paths = released.value;
    return attempt(() => {
      for (const path of paths) this.disk.unlink(path);
      if (paths.length > 0) this.disk.fsyncDir(this.dir);
      return paths.length;
    });
  }

  /**
   * `compact` without the deletions: the files it would delete leave the journal (never read or
   * written again) and their paths are returned for the caller to remove, e.g. on a disk thread
   * (unlinking a 16 MiB file took ~40 ms on the shard thread). A file not removed yet (a crash
   * first) holds only prepares at or below the durable frontier: the next boot's consolidation
   * drops them with the rest, as after a crash between the frontier write and `compact`.
   */
  release(throughOp: number): IoResult<readonly string[]> {
    assert(!this.#closed, 'partition journal: closed');
    return attempt(() => {
      for (const op of [...this.#faulty]) if (op <= throughOp) this.#faulty.delete(op);
      if (this.#end > this.options.fileBytesMax) this.#rotate();
      const paths: string[] = [];
      while (this.#files.length > 1 && (this.#files[0] as FileInfo).maxOp <= throughOp) paths.push((this.#files.shift() as FileInfo).path);
      return paths;
    });
  }

  /**
   * A state-transfer install replaced the state at `snapshotOp`: the journal restarts empty, and
   * the ops (snapshotOp, faultyThrough] it dropped may have been acknowledged (faulty).
   */
  reset(snapshotOp: number, faultyThrough: number): IoResult<void> {
    assert(!this.#closed, 'partition journal: closed');
    return attempt(() => {
      for (const op of [...this.#faulty]) if (op <= snapshotOp) this.#faulty.delete(op);
      for (let op = snapshotOp + 1; op <= faultyThrough; op++) this.#faulty.add(op);
      const old = this.#files.splice(0);
      this.disk.close(this.#fd);
      this.#reserved = Math.max(this.#reserved, faultyThrough + this.options.reserveOps);
      const next = PartitionJournal.#start(this.disk, this.dir, this.options, (old[old.length - 1]?.seq ?? 0) + 1, this.#reserved, this.#faulty, [], this.disk.bootId());
      this.#adopt(next);
      for (const file of old) this.disk.unlink(file.path);
      this.disk.fsyncDir(this.dir);
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#unsynced) this.disk.fdatasync(this.#fd);
    } catch (error) {
      if (!(error instanceof DiskError)) throw error;
    } finally {
      this.disk.close(this.#fd);
    }
  }

  // -------------------------------------------------------------------------------------------

  #write(parts: readonly Uint8Array[]): void {
    this.disk.writev(this.#fd, parts, this.#end);
    for (const part of parts) this.#end += part.length;
    this.#unsynced = true;
  }

  #syncNow(): void {
    if (!this.#unsynced) return;
    this.disk.fdatasync(this.#fd);
    this.#unsynced = false;
  }

  /** A new active file (OPEN with the reservation and faulty ranges carried over); the old ones stay until compacted. */
  #rotate(): void {
    this.#syncNow();
    this.disk.close(this.#fd);
    const seq = (this.#files[this.#files.length - 1] as FileInfo).seq + 1;
    const next = PartitionJournal.#start(this.disk, this.dir, this.options, seq, this.#reserved, this.#faulty, [], this.disk.bootId());
    const kept = this.#files.splice(0);
    this.#adopt(next);
    this.#files.unshift(...kept);
  }

  #adopt(next: PartitionJournal): void {
    this.#files.push(...next.#files);
    this.#fd = next.#fd;
    this.#end = next.#end;
    this.#unsynced = false;
  }
}
