/**
 * The Disk port: the only way storage touches files. SYNCHRONOUS and POSIX-shaped (the
 * `fs.*Sync` family): a shard thread calls it inline, no promise, no libuv pool hop.
 *
 * Two implementations: `RealDisk` (node:fs) and `SimDisk` (in memory, seeded, with a durable and
 * a volatile image per file and injected faults).
 *
 * Semantics every implementation keeps (and storage relies on):
 * - `write`/`writev` are positional (pwrite) and write every byte or throw;
 * - written bytes are VOLATILE until `fsync`/`fdatasync` of that file;
 * - a directory entry (create, rename, unlink, mkdir) is volatile until `fsyncDir` of its parent;
 * - `rename` atomically replaces the target;
 * - environment failures throw `DiskError` with a POSIX-like code. Storage modules catch only
 *   `DiskError` (see `attempt`) and hand it back as a typed value; anything else is a bug and
 *   propagates.
 */

/** A file descriptor of one Disk instance. */
export type Fd = number & { readonly __brand: 'Fd' };

/**
 * - `read`: existing file, read-only;
 * - `readwrite`: existing file, read/write;
 * - `create`: read/write, created when missing (never truncated);
 * - `createExclusive`: read/write, must not exist;
 * - `truncate`: read/write, created when missing, truncated to 0.
 */
export type OpenMode = 'read' | 'readwrite' | 'create' | 'createExclusive' | 'truncate';

export type DiskErrorCode =
  | 'ENOENT'
  | 'EEXIST'
  | 'ENOTDIR'
  | 'EISDIR'
  | 'ENOTEMPTY'
  | 'ENOSPC'
  | 'EIO'
  | 'EBADF'
  | 'EACCES'
  | 'EROFS'
  | 'EMFILE'
  | 'EOTHER';

/** An environment failure of one disk call. */
export class DiskError extends Error {
  override readonly name = 'DiskError';
  readonly code: DiskErrorCode;
  readonly syscall: string;
  readonly path: string;

  constructor(code: DiskErrorCode, syscall: string, path: string, detail?: string) {
    super(`${code}: ${syscall} ${path}${detail === undefined ? '' : ` (${detail})`}`);
    this.code = code;
    this.syscall = syscall;
    this.path = path;
  }
}

export interface DiskStat {
  readonly kind: 'file' | 'directory';
  readonly size: number;
}

export interface Disk {
  open(path: string, mode: OpenMode): Fd;
  close(fd: Fd): void;
  /** pread: reads up to `length` bytes at `position` into `buffer[offset..]`; returns the count (short at EOF). */
  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** pwrite of `buffer[offset, offset + length)` at `position`, all bytes or throw. */
  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): void;
  /** Gathered pwrite of `buffers` back to back at `position`, all bytes or throw. */
  writev(fd: Fd, buffers: readonly Uint8Array[], position: number): void;
  /** Current (volatile) length of the file. */
  size(fd: Fd): number;
  truncate(fd: Fd, length: number): void;
  fsync(fd: Fd): void;
  fdatasync(fd: Fd): void;
  /** Makes the directory's entries (creates, renames, unlinks, mkdirs inside it) durable. */
  fsyncDir(path: string): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  /** mkdir -p; returns the directories it created, outermost first (their parents need fsyncDir). */
  mkdirp(path: string): string[];
  /** rmdir of an empty directory. */
  rmdir(path: string): void;
  /** rm -r (missing path is not an error). */
  removeTree(path: string): void;
  /** Entry names of a directory, sorted. */
  readdir(path: string): string[];
  /** null when the path does not exist. */
  stat(path: string): DiskStat | null;
  /**
   * An id of the machine's current boot ('' when unknown). The page cache survives a process
   * kill but not a power loss or a reboot, so a journal written under the same boot id as now
   * still holds every write it returned from, synced or not (partition-journal.ts).
   */
  bootId(): string;
}

// ---------------------------------------------------------------------------------------------
// Results: environment failures as values.

export interface DiskFault {
  readonly code: DiskErrorCode;
  readonly syscall: string;
  readonly path: string;
  readonly message: string;
}

export type IoResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: DiskFault };

export function faultOf(error: DiskError): DiskFault {
  return { code: error.code, syscall: error.syscall, path: error.path, message: error.message };
}

export function ioOk<T>(value: T): IoResult<T> {
  return { ok: true, value };
}

/**
 * Runs `body`; a `DiskError` becomes `{ ok: false, error }`, anything else (assertions, simulated
 * crashes) propagates untouched.
 */
export function attempt<T>(body: () => T): IoResult<T> {
  try {
    return { ok: true, value: body() };
  } catch (error) {
    if (error instanceof DiskError) return { ok: false, error: faultOf(error) };
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Paths (POSIX, no node:path so both disks and the browser-free simulator share them).

export function joinPath(...parts: string[]): string {
  return normalizePath(parts.filter((p) => p.length > 0).join('/'));
}

/** An absolute path with no empty, `.` or `..` component and no trailing slash: already normal. */
const NORMAL_ABSOLUTE = /^(\/[^/]+)+$/;
const DOT_COMPONENT = /\/\.\.?(\/|$)/;

export function normalizePath(path: string): string {
  // Fast path (the simulated disk normalizes every path it is handed).
  if (NORMAL_ABSOLUTE.test(path) && !DOT_COMPONENT.test(path)) return path;
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  if (absolute) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

export function dirname(path: string): string {
  const normal = normalizePath(path);
  const at = normal.lastIndexOf('/');
  if (at < 0) return '.';
  if (at === 0) return '/';
  return normal.slice(0, at);
}

export function basename(path: string): string {
  const normal = normalizePath(path);
  return normal.slice(normal.lastIndexOf('/') + 1);
}
