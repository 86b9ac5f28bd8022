/**
 * SimDisk: the Disk port in memory, deterministic from a seed, for the simulator and the tests.
 *
 * Model (per file a durable and a volatile image; per directory a durable and a volatile list):
 *
 *   write/writev/truncate ──▶ volatile image + pending list ──fsync/fdatasync──▶ durable image
 *   create/rename/unlink/mkdir/rm ──▶ volatile namespace ──fsyncDir(parent)──▶ durable namespace
 *
 *   crash(): volatile := durable for every file and directory; every fd is closed. Baseline: all
 *   unsynced writes and unsynced directory entries are lost. With faults allowed, a crash may
 *   also persist some unsynced writes out of order, or a prefix of the last one (a torn write).
 *
 * Injected faults (each with a probability, each recorded in `faultLog`, each charged to the
 * fault budget; none happens while `faultsAllowed` is false):
 *   - torn write on crash      the last unsynced write of a file persists as a seeded prefix;
 *   - unsynced writes persisted on crash, each independently (so out of order);
 *   - bit flip on read         one bit of the bytes handed to the caller (the stored bytes stay);
 *   - misdirected write        the bytes land at another position (± k × 512) of the same file.
 * Plus deterministic hooks for tests: `crashAfter(n)` (the n-th next mutating call throws
 * `SimulatedCrash` and the disk halts until `crash()`), `failNext(code, count, after)` (environment errors),
 * `capacityBytes` (ENOSPC), `corruptAtRest` (bit rot of durable bytes), `flipOnRead(path, position)`
 * (one read fault at a chosen read).
 *
 * The fault budget lets the simulator keep at most f replicas corrupted: it gives each replica's
 * disk `setFaultsAllowed(false)` once enough others hold faults, or a finite `allowFaults(n)`.
 * Latency is not modelled here: the driver delays completions if it wants to.
 */
import { Prng, assert } from '@shoal/stdx';
import { type Disk, DiskError, type DiskErrorCode, type DiskStat, type Fd, type OpenMode, normalizePath } from './disk.js';
import { SimNamespace, parentOf } from './sim-namespace.js';

export interface SimDiskFaults {
  /** On crash: probability that a file's last unsynced write persists as a torn prefix. */
  readonly tornWriteProbability: number;
  /** On crash: probability that each unsynced write of a file persists anyway (out of order). */
  readonly unsyncedPersistProbability: number;
  /** Per read call: probability that one bit of the returned bytes is flipped. */
  readonly readBitFlipProbability: number;
  /** Per write call: probability that the write lands at a wrong position. */
  readonly misdirectedWriteProbability: number;
}

export const NO_FAULTS: SimDiskFaults = Object.freeze({
  tornWriteProbability: 0,
  unsyncedPersistProbability: 0,
  readBitFlipProbability: 0,
  misdirectedWriteProbability: 0,
});

export interface SimDiskOptions {
  readonly seed: number | bigint;
  readonly faults?: Partial<SimDiskFaults>;
  /** Total file bytes the disk holds before writes fail with ENOSPC. */
  readonly capacityBytes?: number;
}

export type SimFaultKind = 'torn_write' | 'unsynced_persisted' | 'read_bit_flip' | 'misdirected_write' | 'bit_rot';

export interface SimFaultRecord {
  readonly seq: number;
  readonly kind: SimFaultKind;
  readonly path: string;
  /** Byte position the fault touched (the wrong position for a misdirected write). */
  readonly position: number;
  readonly length: number;
  readonly detail: string;
}

/** Thrown by the op that `crashAfter` armed; not a DiskError, so storage never swallows it. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

type Pending =
  | { readonly kind: 'write'; readonly position: number; readonly bytes: Uint8Array }
  | { readonly kind: 'truncate'; readonly length: number };

class Inode {
  data = new Uint8Array(0);
  length = 0;
  pending: Pending[] = [];
  /** The durable image: `#durableBuf[0, #durableLength)`, grown like `data`. */
  #durableBuf = new Uint8Array(0);
  #durableLength = 0;
  /** Lowest byte position that may differ between the volatile and the durable image. */
  #dirtyFrom = 0;

  get durable(): Uint8Array {
    return this.#durableBuf.subarray(0, this.#durableLength);
  }

  set durable(image: Uint8Array) {
    this.#durableBuf = image.slice();
    this.#durableLength = image.length;
  }

  bytes(): Uint8Array {
    return this.data.subarray(0, this.length);
  }

  ensure(capacity: number): void {
    if (capacity <= this.data.length) return;
    const next = new Uint8Array(Math.max(capacity, this.data.length * 2, 4096));
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }

  writeAt(position: number, bytes: Uint8Array): void {
    this.ensure(position + bytes.length);
    if (position > this.length) this.data.fill(0, this.length, position);
    this.data.set(bytes, position);
    this.#dirtyFrom = Math.min(this.#dirtyFrom, Math.min(position, this.length));
    this.length = Math.max(this.length, position + bytes.length);
  }

  truncateTo(length: number): void {
    if (length > this.length) {
      this.ensure(length);
      this.data.fill(0, this.length, length);
    }
    this.#dirtyFrom = Math.min(this.#dirtyFrom, Math.min(length, this.length));
    this.length = length;
  }

  /**
   * fsync: the durable image becomes the volatile one. Only the bytes from the lowest position
   * written or truncated since the last sync are copied (a sync costs what changed, not the file).
   */
  sync(): void {
    const from = Math.min(this.#dirtyFrom, this.length, this.#durableLength);
    if (this.#durableBuf.length < this.length) {
      const next = new Uint8Array(Math.max(this.length, this.#durableBuf.length * 2, 4096));
      next.set(this.#durableBuf.subarray(0, from));
      this.#durableBuf = next;
    }
    this.#durableBuf.set(this.data.subarray(from, this.length), from);
    this.#durableLength = this.length;
    this.#dirtyFrom = this.length;
    this.pending = [];
  }

  resetTo(image: Uint8Array): void {
    this.data = image.slice();
    this.length = image.length;
    this.durable = image;
    this.#dirtyFrom = image.length;
    this.pending = [];
  }

  /** Bit rot at rest (both images). */
  flip(position: number, mask: number): void {
    this.data[position] = (this.data[position] as number) ^ mask;
    if (position < this.#durableLength) this.#durableBuf[position] = (this.#durableBuf[position] as number) ^ mask;
  }
}

type Entry = { readonly kind: 'file'; readonly inode: Inode } | { readonly kind: 'directory' };

interface OpenFile {
  readonly inode: Inode;
  readonly path: string;
  readonly writable: boolean;
}

const ROOT = '/';

export class SimDisk implements Disk {
  readonly #prng: Prng;
  #faults: SimDiskFaults;
  readonly #capacity: number;
  #entries = new SimNamespace<Entry>();
  #durableEntries = new SimNamespace<Entry>();
  #fds = new Map<number, OpenFile>();
  #nextFd = 3;
  #faultLog: SimFaultRecord[] = [];
  #faultsAllowed = true;
  #faultBudget = Number.POSITIVE_INFINITY;
  #mutatingOps = 0;
  #crashCountdown: number | null = null;
  #halted = false;
  #failures: { code: DiskErrorCode; count: number; after: number } | null = null;
  #readFlip: { path: string; position: number; mask: number; skip: number } | null = null;
  #crashes = 0;

  constructor(options: SimDiskOptions) {
    this.#prng = new Prng(options.seed);
    this.#faults = { ...NO_FAULTS, ...options.faults };
    this.#capacity = options.capacityBytes ?? Number.POSITIVE_INFINITY;
    this.#entries.set(ROOT, { kind: 'directory' });
    this.#durableEntries.set(ROOT, { kind: 'directory' });
  }

  // -------------------------------------------------------------------------------------------
  // Fault control (the simulator's side).

  get faultsAllowed(): boolean {
    return this.#faultsAllowed && this.#faultBudget > 0;
  }

  /** Enables or disables every probabilistic fault (the budget is kept). */
  setFaultsAllowed(allowed: boolean): void {
    this.#faultsAllowed = allowed;
  }

  /** Allows faults, at most `budget` more of them (default: unbounded). */
  allowFaults(budget = Number.POSITIVE_INFINITY): void {
    assert(budget >= 0, 'SimDisk.allowFaults: negative budget');
    this.#faultsAllowed = true;
    this.#faultBudget = budget;
  }

  get faultBudget(): number {
    return this.#faultBudget;
  }

  setFaults(faults: Partial<SimDiskFaults>): void {
    this.#faults = { ...this.#faults, ...faults };
  }

  get faults(): SimDiskFaults {
    return this.#faults;
  }

  /** Every fault injected so far, in order. */
  get faultLog(): readonly SimFaultRecord[] {
    return this.#faultLog;
  }

  /** Mutating calls performed so far (for enumerating crash points). */
  get mutatingOps(): number {
    return this.#mutatingOps;
  }

  get crashes(): number {
    return this.#crashes;
  }

  /** The `n`-th next mutating call (1 = the very next) throws SimulatedCrash instead of running. */
  crashAfter(n: number): void {
    assert(Number.isInteger(n) && n >= 1, 'SimDisk.crashAfter: n must be >= 1');
    this.#crashCountdown = n;
  }

  /** The next `count` mutating calls (after the next `after`, which run) throw DiskError(code) without effect. */
  failNext(code: DiskErrorCode, count = 1, after = 0): void {
    assert(Number.isInteger(after) && after >= 0, 'SimDisk.failNext: after must be >= 0');
    this.#failures = { code, count, after };
  }

  /**
   * A read fault on demand: the read of `path` covering byte `position`, after the next `skip`
   * such reads (which run clean), hands that byte back xor `mask` (the stored bytes stay). Fires
   * once, recorded as a `read_bit_flip`; cleared by a crash.
   */
  flipOnRead(path: string, position: number, mask = 0x01, skip = 0): void {
    assert(Number.isInteger(skip) && skip >= 0, 'SimDisk.flipOnRead: skip must be >= 0');
    assert(mask > 0 && mask <= 0xff, 'SimDisk.flipOnRead: mask must be one byte');
    this.#readFlip = { path: normalizePath(path), position, mask, skip };
  }

  /**
   * Power loss: every file and directory falls back to its durable state, every fd is closed.
   * With faults allowed, unsynced writes may persist out of order or torn (see the header).
   */
  /** A power loss (`crash`) is a new boot; a process kill keeps the page cache and the boot. */
  bootId(): string {
    return `sim-boot-${this.#crashes}`;
  }

  crash(): void {
    this.#crashes++;
    const inodes = new Set<Inode>();
    for (const entry of this.#durableEntries.values()) if (entry.kind === 'file') inodes.add(entry.inode);
    const pathOf = new Map<Inode, string>();
    for (const [path, entry] of this.#durableEntries) if (entry.kind === 'file') pathOf.set(entry.inode, path);
    for (const inode of inodes) this.#settleOnCrash(inode, pathOf.get(inode) ?? '?');
    this.#entries = new SimNamespace(this.#durableEntries);
    this.#dropOrphans();
    this.#durableEntries = new SimNamespace(this.#entries);
    this.#fds.clear();
    this.#halted = false;
    this.#crashCountdown = null;
    this.#failures = null;
    this.#readFlip = null;
  }

  /** Flips bits of stored bytes (durable and volatile): bit rot at rest. Recorded as a fault. */
  corruptAtRest(path: string, position: number, mask = 0x01): void {
    const inode = this.#fileInode(normalizePath(path), 'corrupt');
    assert(position >= 0 && position < inode.length, 'SimDisk.corruptAtRest: position out of range');
    inode.flip(position, mask);
    this.#record('bit_rot', path, position, 1, `xor 0x${mask.toString(16)}`, false);
  }

  /** The durable bytes of a file (what a crash now would leave), or null. */
  durableImage(path: string): Uint8Array | null {
    const entry = this.#durableEntries.get(normalizePath(path));
    return entry?.kind === 'file' ? entry.inode.durable.slice() : null;
  }

  /** Paths of every file in the volatile namespace, sorted. */
  listFiles(): string[] {
    return [...this.#entries].filter(([, e]) => e.kind === 'file').map(([p]) => p).sort();
  }

  // -------------------------------------------------------------------------------------------
  // The Disk port.

  open(path: string, mode: OpenMode): Fd {
    const p = normalizePath(path);
    const mutating = mode !== 'read' && mode !== 'readwrite';
    if (mutating) this.#mutation('open', p);
    else this.#check('open', p);
    let entry = this.#entries.get(p);
    if (entry?.kind === 'directory') {
      if (mode !== 'read') throw new DiskError('EISDIR', 'open', p);
    }
    if (entry === undefined) {
      if (mode === 'read' || mode === 'readwrite') throw new DiskError('ENOENT', 'open', p);
      this.#requireParentDir(p, 'open');
      entry = { kind: 'file', inode: new Inode() };
      this.#entries.set(p, entry);
    } else if (mode === 'createExclusive') {
      throw new DiskError('EEXIST', 'open', p);
    }
    if (entry.kind === 'directory') {
      // Read-only handle on a directory (for symmetry with open(dir, 'r')): no file ops allowed.
      throw new DiskError('EISDIR', 'open', p);
    }
    if (mode === 'truncate' && entry.inode.length > 0) this.#truncateInode(entry.inode, 0);
    const fd = this.#nextFd++;
    this.#fds.set(fd, { inode: entry.inode, path: p, writable: mode !== 'read' });
    return fd as Fd;
  }

  close(fd: Fd): void {
    this.#check('close', String(fd));
    if (!this.#fds.delete(fd)) throw new DiskError('EBADF', 'close', `fd ${fd}`);
  }

  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.#file(fd, 'pread');
    assert(offset >= 0 && length >= 0 && offset + length <= buffer.length, 'SimDisk.read: buffer range');
    assert(position >= 0 && Number.isSafeInteger(position), 'SimDisk.read: bad position');
    const inode = file.inode;
    const n = Math.max(0, Math.min(length, inode.length - position));
    if (n === 0) return 0;
    buffer.set(inode.data.subarray(position, position + n), offset);
    if (this.#roll(this.#faults.readBitFlipProbability)) {
      const at = this.#prng.below(n);
      const bit = this.#prng.below(8);
      buffer[offset + at] = (buffer[offset + at] as number) ^ (1 << bit);
      this.#record('read_bit_flip', file.path, position + at, 1, `bit ${bit}`, true);
    }
    const flip = this.#readFlip;
    if (flip !== null && flip.path === file.path && flip.position >= position && flip.position < position + n) {
      if (flip.skip > 0) {
        flip.skip--;
      } else {
        this.#readFlip = null;
        const at = offset + flip.position - position;
        buffer[at] = (buffer[at] as number) ^ flip.mask;
        this.#record('read_bit_flip', file.path, flip.position, 1, `xor 0x${flip.mask.toString(16)} (armed)`, false);
      }
    }
    return n;
  }

  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): void {
    const file = this.#writable(fd, 'pwrite');
    assert(offset >= 0 && length >= 0 && offset + length <= buffer.length, 'SimDisk.write: buffer range');
    this.#writeBytes(file, buffer.slice(offset, offset + length), position);
  }

  writev(fd: Fd, buffers: readonly Uint8Array[], position: number): void {
    const file = this.#writable(fd, 'pwritev');
    let total = 0;
    for (const b of buffers) total += b.length;
    const joined = new Uint8Array(total);
    let at = 0;
    for (const b of buffers) {
      joined.set(b, at);
      at += b.length;
    }
    this.#writeBytes(file, joined, position);
  }

  size(fd: Fd): number {
    return this.#file(fd, 'fstat').inode.length;
  }

  truncate(fd: Fd, length: number): void {
    const file = this.#writable(fd, 'ftruncate');
    assert(length >= 0 && Number.isSafeInteger(length), 'SimDisk.truncate: bad length');
    if (length > file.inode.length) this.#charge(length - file.inode.length, file.path);
    this.#truncateInode(file.inode, length);
  }

  fsync(fd: Fd): void {
    this.#fileForMutation(fd, 'fsync').inode.sync();
  }

  fdatasync(fd: Fd): void {
    this.#fileForMutation(fd, 'fdatasync').inode.sync();
  }

  fsyncDir(path: string): void {
    const p = normalizePath(path);
    this.#mutation('fsync(dir)', p);
    if (this.#entries.get(p)?.kind !== 'directory') throw new DiskError('ENOENT', 'fsync(dir)', p);
    // The volatile children first, then the durable ones gone since (the order the disk has
    // always applied them in: it decides the durable namespace's order, hence a crash's PRNG use).
    const children = new Set<string>(this.#entries.childrenOf(p));
    for (const key of this.#durableEntries.childrenOf(p)) children.add(key);
    for (const child of children) {
      const entry = this.#entries.get(child);
      if (entry === undefined) this.#durableEntries.delete(child);
      else this.#durableEntries.set(child, entry);
    }
  }

  rename(from: string, to: string): void {
    const a = normalizePath(from);
    const b = normalizePath(to);
    this.#mutation('rename', `${a} -> ${b}`);
    const entry = this.#entries.get(a);
    if (entry === undefined) throw new DiskError('ENOENT', 'rename', a);
    this.#requireParentDir(b, 'rename');
    const target = this.#entries.get(b);
    if (entry.kind === 'directory') {
      if (target !== undefined && (target.kind !== 'directory' || this.#entries.hasChildren(b))) {
        throw new DiskError('ENOTEMPTY', 'rename', b);
      }
      const moved: [string, Entry][] = [];
      for (const [key, value] of this.#entries) {
        if (key === a || key.startsWith(`${a}/`)) moved.push([key, value]);
      }
      for (const [key] of moved) this.#entries.delete(key);
      for (const [key, value] of moved) this.#entries.set(b + key.slice(a.length), value);
      return;
    }
    if (target?.kind === 'directory') throw new DiskError('EISDIR', 'rename', b);
    this.#entries.delete(a);
    this.#entries.set(b, entry);
  }

  unlink(path: string): void {
    const p = normalizePath(path);
    this.#mutation('unlink', p);
    const entry = this.#entries.get(p);
    if (entry === undefined) throw new DiskError('ENOENT', 'unlink', p);
    if (entry.kind === 'directory') throw new DiskError('EISDIR', 'unlink', p);
    this.#entries.delete(p);
  }

  mkdirp(path: string): string[] {
    const p = normalizePath(path);
    this.#mutation('mkdir', p);
    const missing: string[] = [];
    let at = p;
    while (!this.#entries.has(at)) {
      missing.unshift(at);
      at = parentOf(at);
    }
    if (this.#entries.get(at)?.kind !== 'directory') throw new DiskError('ENOTDIR', 'mkdir', at);
    for (const dir of missing) this.#entries.set(dir, { kind: 'directory' });
    return missing;
  }

  rmdir(path: string): void {
    const p = normalizePath(path);
    this.#mutation('rmdir', p);
    const entry = this.#entries.get(p);
    if (entry === undefined) throw new DiskError('ENOENT', 'rmdir', p);
    if (entry.kind !== 'directory') throw new DiskError('ENOTDIR', 'rmdir', p);
    if (this.#entries.hasChildren(p)) throw new DiskError('ENOTEMPTY', 'rmdir', p);
    this.#entries.delete(p);
  }

  removeTree(path: string): void {
    const p = normalizePath(path);
    this.#mutation('rm -r', p);
    assert(p !== ROOT, 'SimDisk.removeTree: refusing to remove /');
    for (const key of [...this.#entries.keys()]) {
      if (key === p || key.startsWith(`${p}/`)) this.#entries.delete(key);
    }
  }

  readdir(path: string): string[] {
    const p = normalizePath(path);
    this.#check('readdir', p);
    const entry = this.#entries.get(p);
    if (entry === undefined) throw new DiskError('ENOENT', 'readdir', p);
    if (entry.kind !== 'directory') throw new DiskError('ENOTDIR', 'readdir', p);
    return this.#entries
      .childrenOf(p)
      .map((child) => child.slice(p === ROOT ? 1 : p.length + 1))
      .sort();
  }

  stat(path: string): DiskStat | null {
    const p = normalizePath(path);
    this.#check('stat', p);
    const entry = this.#entries.get(p);
    if (entry === undefined) return null;
    return entry.kind === 'directory' ? { kind: 'directory', size: 0 } : { kind: 'file', size: entry.inode.length };
  }

  // -------------------------------------------------------------------------------------------
  // Internals.

  #writeBytes(file: OpenFile, bytes: Uint8Array, position: number): void {
    assert(position >= 0 && Number.isSafeInteger(position), 'SimDisk.write: bad position');
    const inode = file.inode;
    let at = position;
    if (bytes.length > 0 && this.#roll(this.#faults.misdirectedWriteProbability)) {
      const sectors = this.#prng.range(1, 8);
      const shift = (this.#prng.bool() ? 1 : -1) * sectors * 512;
      at = Math.max(0, position + shift);
      if (at === position) at = position + 512;
      this.#record('misdirected_write', file.path, at, bytes.length, `intended ${position}`, true);
    }
    const grows = Math.max(0, at + bytes.length - inode.length);
    this.#charge(grows, file.path);
    inode.writeAt(at, bytes);
    inode.pending.push({ kind: 'write', position: at, bytes });
  }

  #truncateInode(inode: Inode, length: number): void {
    inode.truncateTo(length);
    inode.pending.push({ kind: 'truncate', length });
  }

  /** Decides what of an inode's unsynced writes survives a crash. */
  #settleOnCrash(inode: Inode, path: string): void {
    let image = inode.durable;
    const pending = inode.pending;
    if (pending.length > 0 && this.faultsAllowed) {
      const apply = (p: Pending, prefix?: number): void => {
        if (p.kind === 'truncate') {
          const next = new Uint8Array(p.length);
          next.set(image.subarray(0, Math.min(image.length, p.length)));
          image = next;
          return;
        }
        const bytes = prefix === undefined ? p.bytes : p.bytes.subarray(0, prefix);
        const end = Math.max(image.length, p.position + bytes.length);
        const next = new Uint8Array(end);
        next.set(image);
        next.set(bytes, p.position);
        image = next;
      };
      const lastIndex = pending.length - 1;
      for (let i = 0; i < pending.length; i++) {
        const p = pending[i] as Pending;
        if (i === lastIndex && p.kind === 'write' && p.bytes.length > 1 && this.#roll(this.#faults.tornWriteProbability)) {
          const prefix = this.#prng.range(1, p.bytes.length - 1);
          apply(p, prefix);
          this.#record('torn_write', path, p.position, prefix, `${prefix} of ${p.bytes.length} bytes persisted`, true);
          continue;
        }
        if (this.#roll(this.#faults.unsyncedPersistProbability)) {
          apply(p);
          const position = p.kind === 'write' ? p.position : p.length;
          const length = p.kind === 'write' ? p.bytes.length : 0;
          this.#record('unsynced_persisted', path, position, length, `${p.kind} #${i} of ${pending.length}`, true);
        }
      }
    }
    inode.resetTo(image);
  }

  #dropOrphans(): void {
    let dropped = true;
    while (dropped) {
      dropped = false;
      for (const key of [...this.#entries.keys()]) {
        if (key === ROOT) continue;
        if (this.#entries.get(parentOf(key))?.kind !== 'directory') {
          this.#entries.delete(key);
          dropped = true;
        }
      }
    }
  }

  #requireParentDir(path: string, syscall: string): void {
    const parent = this.#entries.get(parentOf(path));
    if (parent === undefined) throw new DiskError('ENOENT', syscall, path);
    if (parent.kind !== 'directory') throw new DiskError('ENOTDIR', syscall, path);
  }

  #fileInode(path: string, syscall: string): Inode {
    const entry = this.#entries.get(path);
    if (entry === undefined) throw new DiskError('ENOENT', syscall, path);
    if (entry.kind !== 'file') throw new DiskError('EISDIR', syscall, path);
    return entry.inode;
  }

  #file(fd: Fd, syscall: string): OpenFile {
    this.#check(syscall, `fd ${fd}`);
    const file = this.#fds.get(fd);
    if (file === undefined) throw new DiskError('EBADF', syscall, `fd ${fd}`);
    return file;
  }

  #fileForMutation(fd: Fd, syscall: string): OpenFile {
    const file = this.#fds.get(fd);
    this.#mutation(syscall, file?.path ?? `fd ${fd}`);
    if (file === undefined) throw new DiskError('EBADF', syscall, `fd ${fd}`);
    return file;
  }

  #writable(fd: Fd, syscall: string): OpenFile {
    const file = this.#fileForMutation(fd, syscall);
    if (!file.writable) throw new DiskError('EBADF', syscall, file.path, 'read-only fd');
    return file;
  }

  #charge(bytes: number, path: string): void {
    if (bytes <= 0 || this.#capacity === Number.POSITIVE_INFINITY) return;
    let used = 0;
    const seen = new Set<Inode>();
    for (const entry of this.#entries.values()) {
      if (entry.kind === 'file' && !seen.has(entry.inode)) {
        seen.add(entry.inode);
        used += entry.inode.length;
      }
    }
    if (used + bytes > this.#capacity) throw new DiskError('ENOSPC', 'write', path);
  }

  /** Every call goes through here: a halted disk (armed crash fired) refuses everything. */
  #check(syscall: string, path: string): void {
    if (this.#halted) throw new SimulatedCrash(`disk halted (crashed before ${syscall} ${path})`);
  }

  #mutation(syscall: string, path: string): void {
    this.#check(syscall, path);
    if (this.#crashCountdown !== null) {
      this.#crashCountdown--;
      if (this.#crashCountdown === 0) {
        this.#crashCountdown = null;
        this.#halted = true;
        throw new SimulatedCrash(`crash point before ${syscall} ${path}`);
      }
    }
    if (this.#failures !== null && this.#failures.after > 0) {
      this.#failures.after--;
    } else if (this.#failures !== null) {
      const failure = this.#failures;
      failure.count--;
      if (failure.count <= 0) this.#failures = null;
      throw new DiskError(failure.code, syscall, path, 'injected');
    }
    this.#mutatingOps++;
  }

  #roll(probability: number): boolean {
    if (probability <= 0 || !this.faultsAllowed) return false;
    return this.#prng.float() < probability;
  }

  #record(kind: SimFaultKind, path: string, position: number, length: number, detail: string, charged: boolean): void {
    if (charged && this.#faultBudget !== Number.POSITIVE_INFINITY) this.#faultBudget--;
    this.#faultLog.push({ seq: this.#faultLog.length, kind, path, position, length, detail });
  }
}
