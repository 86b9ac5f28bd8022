/**
 * Stored consumer offsets of one partition (§9.5): `offsets/consumers/<consumer_id>` and
 * `offsets/groups/<group_id>`, each 16 bytes LE:
 *
 *   [offset u64][XXH3-64 of the offset's 8 bytes u64]
 *
 * An 8-byte legacy file (offset only) is accepted. Rewritten on each committed offset op by a
 * 16-byte pwrite at 0 (then ftruncate to 16 when it was a legacy file): the file never passes
 * through an empty state, and a torn write is caught by the checksum. fdatasync (and, for a new
 * file, the directory fsync) at once when the topic's `enforce_fsync` is true (§9.6), otherwise
 * at `sync()`, which the driver calls before it records a commit frontier. Deleted on
 * delete-offset. A file that does not verify (twice: a read error may pass) is reported
 * (`faulty`) and not loaded, never guessed; the partition driver then refuses the partition
 * in a cluster, so it is rebuilt from a peer (state transfer carries ICO1).
 *
 * Except a file shorter than the legacy 8 bytes: only a creation whose data never reached the
 * disk leaves one (ext4's delayed allocation commits the new directory entry before the data, so
 * a power loss leaves it empty). A synced file never shrinks (every rewrite is 16 bytes at 0), and
 * `sync()` runs before a frontier vouches for the op, so the op that created it is above the
 * durable frontier: the file is removed (`unsynced_creation`) and the key is absent, its state
 * before that op; the op is applied again if it committed.
 */
import { assert } from '@shoal/stdx';
import { type ConsumerOffsetEntry, type ConsumerOffsets, xxh3_64 } from '@shoal/protocol';
import { type Disk, type IoResult, attempt, joinPath } from './disk.js';
import { mkdirDurable, readWholeFile, unlinkIfPresent } from './durable-file.js';

export type ConsumerKind = 'consumer' | 'group';
export const OFFSETS_DIR_NAME = 'offsets';
const KIND_DIR: Readonly<Record<ConsumerKind, string>> = { consumer: 'consumers', group: 'groups' };
export const OFFSET_FILE_SIZE = 16;
export const OFFSET_FILE_LEGACY_SIZE = 8;
/** The fault reason of a removed short file (see the header); not damage. */
export const UNSYNCED_CREATION = 'unsynced_creation';

export interface OffsetFileFault {
  readonly kind: ConsumerKind;
  readonly name: string;
  readonly reason: string;
}

export function encodeOffsetFile(offset: bigint): Uint8Array {
  assert(offset >= 0n && offset < 1n << 64n, 'offset file: not a u64');
  const out = new Uint8Array(OFFSET_FILE_SIZE);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, offset, true);
  view.setBigUint64(8, xxh3_64(out.subarray(0, 8)), true);
  return out;
}

export function decodeOffsetFile(bytes: Uint8Array): { ok: true; value: bigint; legacy: boolean } | { ok: false; reason: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length === OFFSET_FILE_LEGACY_SIZE) return { ok: true, value: view.getBigUint64(0, true), legacy: true };
  if (bytes.length !== OFFSET_FILE_SIZE) return { ok: false, reason: `offset_file_length_${bytes.length}` };
  if (view.getBigUint64(8, true) !== xxh3_64(bytes.subarray(0, 8))) return { ok: false, reason: 'offset_file_checksum_mismatch' };
  return { ok: true, value: view.getBigUint64(0, true), legacy: false };
}

export interface ConsumerOffsetsLoad {
  readonly consumers: ReadonlyMap<number, bigint>;
  readonly groups: ReadonlyMap<number, bigint>;
  readonly faulty: readonly OffsetFileFault[];
}

export class ConsumerOffsetStore {
  readonly #disk: Disk;
  readonly dir: string;
  enforceFsync: boolean;
  readonly #consumers = new Map<number, bigint>();
  readonly #groups = new Map<number, bigint>();
  /** Files written and directories changed since the last `sync` (without `enforce_fsync`). */
  readonly #dirtyFiles = new Set<string>();
  readonly #dirtyDirs = new Set<string>();

  constructor(disk: Disk, partitionDir: string, enforceFsync: boolean) {
    this.#disk = disk;
    this.dir = joinPath(partitionDir, OFFSETS_DIR_NAME);
    this.enforceFsync = enforceFsync;
  }

  kindDir(kind: ConsumerKind): string {
    return joinPath(this.dir, KIND_DIR[kind]);
  }

  pathOf(kind: ConsumerKind, id: number): string {
    return joinPath(this.kindDir(kind), String(id));
  }

  get(kind: ConsumerKind, id: number): bigint | undefined {
    return this.#map(kind).get(id);
  }

  /**
   * Reads every offset file (creating the directories when missing). What it reads may be only in
   * the page cache: a process crash keeps writes and unlinks that were never synced, and a later
   * `store` of the same id (the op re-applied) finds the file present and would sync the file but
   * not the directory entry that makes it exist (a `delete` finds nothing and syncs nothing). So
   * every file read and both directories count as dirty: the next `sync`, before the driver
   * records a frontier, makes the loaded state durable (one fdatasync per file, once per boot).
   */
  load(): IoResult<ConsumerOffsetsLoad> {
    return attempt(() => {
      const faulty: OffsetFileFault[] = [];
      this.#consumers.clear();
      this.#groups.clear();
      for (const kind of ['consumer', 'group'] as const) {
        const dir = this.kindDir(kind);
        mkdirDurable(this.#disk, dir);
        this.#dirtyDirs.add(dir);
        for (const name of this.#disk.readdir(dir)) {
          const id = Number(name);
          if (!/^\d+$/.test(name) || !Number.isSafeInteger(id) || id > 0xffff_ffff) {
            faulty.push({ kind, name, reason: name.endsWith('.tmp') ? 'stray_tmp' : 'not_an_offset_file' });
            continue;
          }
          const path = joinPath(dir, name);
          if ((this.#disk.stat(path)?.size ?? 0) < OFFSET_FILE_LEGACY_SIZE) {
            this.#disk.unlink(path); // made durable with the directory at the next sync()
            faulty.push({ kind, name, reason: UNSYNCED_CREATION });
            continue;
          }
          const decoded = this.#readOffsetFile(path);
          if (!decoded.ok) {
            faulty.push({ kind, name, reason: decoded.reason });
            continue;
          }
          this.#map(kind).set(id, decoded.value);
          this.#dirtyFiles.add(joinPath(dir, name));
        }
      }
      return { consumers: new Map(this.#consumers), groups: new Map(this.#groups), faulty };
    });
  }

  /** One offset file, read a second time when the first read does not verify (a read error may pass). */
  #readOffsetFile(path: string): ReturnType<typeof decodeOffsetFile> {
    const first = decodeOffsetFile(readWholeFile(this.#disk, path) ?? new Uint8Array(0));
    return first.ok ? first : decodeOffsetFile(readWholeFile(this.#disk, path) ?? new Uint8Array(0));
  }

  /** Stores a committed offset (see the header for the durability rule). */
  store(kind: ConsumerKind, id: number, offset: bigint): IoResult<void> {
    assert(Number.isInteger(id) && id >= 0 && id <= 0xffff_ffff, 'consumer offsets: id not a u32');
    const bytes = encodeOffsetFile(offset);
    return attempt(() => {
      const path = this.pathOf(kind, id);
      const existing = this.#disk.stat(path);
      if (existing === null) mkdirDurable(this.#disk, this.kindDir(kind));
      const fd = this.#disk.open(path, 'create');
      try {
        this.#disk.write(fd, bytes, 0, bytes.length, 0);
        if (existing !== null && existing.size !== OFFSET_FILE_SIZE) this.#disk.truncate(fd, OFFSET_FILE_SIZE);
        if (this.enforceFsync) this.#disk.fdatasync(fd);
        else this.#dirtyFiles.add(path);
      } finally {
        this.#disk.close(fd);
      }
      if (existing === null) {
        if (this.enforceFsync) this.#disk.fsyncDir(this.kindDir(kind));
        else this.#dirtyDirs.add(this.kindDir(kind));
      }
      this.#map(kind).set(id, offset);
    });
  }

  delete(kind: ConsumerKind, id: number): IoResult<boolean> {
    return attempt(() => {
      const path = this.pathOf(kind, id);
      const existed = unlinkIfPresent(this.#disk, path);
      this.#dirtyFiles.delete(path);
      if (existed && this.enforceFsync) this.#disk.fsyncDir(this.kindDir(kind));
      else if (existed) this.#dirtyDirs.add(this.kindDir(kind));
      this.#map(kind).delete(id);
      return existed;
    });
  }

  /**
   * Makes every offset write and delete since the last call durable (fdatasync of each file
   * written, fsync of each directory changed). The partition driver calls it before it records a
   * commit frontier: the frontier claims the offset ops at or below it are on disk, so after a
   * power loss they must be (issue 12: the files were synced only with `enforce_fsync`).
   */
  sync(): IoResult<number> {
    return attempt(() => {
      let synced = 0;
      for (const path of this.#dirtyFiles) {
        if (this.#disk.stat(path) === null) continue;
        const fd = this.#disk.open(path, 'readwrite');
        try {
          this.#disk.fdatasync(fd);
        } finally {
          this.#disk.close(fd);
        }
        synced++;
      }
      this.#dirtyFiles.clear();
      for (const dir of this.#dirtyDirs) if (this.#disk.stat(dir) !== null) this.#disk.fsyncDir(dir);
      this.#dirtyDirs.clear();
      return synced;
    });
  }

  /** Removes every offset file durably (purge). */
  clear(): IoResult<void> {
    return attempt(() => {
      for (const kind of ['consumer', 'group'] as const) {
        const dir = this.kindDir(kind);
        if (this.#disk.stat(dir) === null) continue;
        for (const name of this.#disk.readdir(dir)) this.#disk.unlink(joinPath(dir, name));
        this.#disk.fsyncDir(dir);
      }
      this.#consumers.clear();
      this.#groups.clear();
    });
  }

  /**
   * Replaces every offset with `consumers`/`groups`, durably (state-transfer install): writes each
   * file, fdatasyncs it, removes the ids not in the new set, fsyncs both directories. Idempotent.
   */
  replaceAll(consumers: readonly ConsumerOffsetEntry[], groups: readonly ConsumerOffsetEntry[]): IoResult<void> {
    return attempt(() => {
      for (const [kind, entries] of [['consumer', consumers], ['group', groups]] as const) {
        const dir = this.kindDir(kind);
        mkdirDurable(this.#disk, dir);
        const keep = new Set(entries.map((e) => String(e.id)));
        for (const name of this.#disk.readdir(dir)) {
          if (!keep.has(name)) this.#disk.unlink(joinPath(dir, name));
        }
        for (const entry of entries) {
          const bytes = encodeOffsetFile(entry.offset);
          const fd = this.#disk.open(this.pathOf(kind, entry.id), 'truncate');
          try {
            this.#disk.write(fd, bytes, 0, bytes.length, 0);
            this.#disk.fdatasync(fd);
          } finally {
            this.#disk.close(fd);
          }
        }
        this.#disk.fsyncDir(dir);
        const map = this.#map(kind);
        map.clear();
        for (const entry of entries) map.set(entry.id, entry.offset);
      }
    });
  }

  /** Sorted entries for the ICO1 artifact. */
  snapshot(purgeGeneration: bigint, nextOffset: bigint): ConsumerOffsets {
    const sorted = (map: Map<number, bigint>): ConsumerOffsetEntry[] =>
      [...map.entries()].sort((a, b) => a[0] - b[0]).map(([id, offset]) => ({ id, offset }));
    return { purgeGeneration, nextOffset, consumers: sorted(this.#consumers), groups: sorted(this.#groups) };
  }

  #map(kind: ConsumerKind): Map<number, bigint> {
    return kind === 'consumer' ? this.#consumers : this.#groups;
  }
}
