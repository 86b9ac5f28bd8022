/**
 * The Disk port on real files: `node:fs` synchronous calls, nothing buffered in between (a
 * returned `write` is in the kernel's page cache, so a SIGKILL right after it loses nothing).
 *
 * Error mapping: every Node errno error becomes a `DiskError` with its code (unknown codes →
 * `EOTHER`); anything that is not an errno error (a TypeError from a bad argument) is our bug and
 * propagates as is.
 */
import * as fs from 'node:fs';
import { type Disk, DiskError, type DiskErrorCode, type DiskStat, type Fd, type OpenMode, dirname, normalizePath } from './disk.js';

const FLAGS: Readonly<Record<OpenMode, string>> = {
  read: 'r',
  readwrite: 'r+',
  create: 'r+', // not used: opened with O_RDWR | O_CREAT below ('a+' would force O_APPEND)
  createExclusive: 'wx+',
  truncate: 'w+',
};

const KNOWN_CODES = new Set<string>([
  'ENOENT', 'EEXIST', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY', 'ENOSPC', 'EIO', 'EBADF', 'EACCES', 'EROFS', 'EMFILE',
]);

function mapError(error: unknown, syscall: string, path: string): never {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const mapped = (KNOWN_CODES.has(code) ? code : 'EOTHER') as DiskErrorCode;
    throw new DiskError(mapped, syscall, path, code === mapped ? undefined : code);
  }
  throw error;
}

/** Linux's per-boot random id; another OS (or a sandbox without /proc) gives '' (unknown). */
const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';
let bootIdCache: string | null = null;

export class RealDisk implements Disk {
  /** fd → path, for error messages. */
  readonly #paths = new Map<number, string>();

  bootId(): string {
    if (bootIdCache === null) {
      try {
        bootIdCache = fs.readFileSync(BOOT_ID_PATH, 'utf8').trim();
      } catch {
        bootIdCache = '';
      }
    }
    return bootIdCache;
  }

  open(path: string, mode: OpenMode): Fd {
    try {
      let fd: number;
      if (mode === 'create') {
        // O_RDWR | O_CREAT without O_APPEND or O_TRUNC.
        fd = fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
      } else {
        fd = fs.openSync(path, FLAGS[mode], 0o644);
      }
      this.#paths.set(fd, path);
      return fd as Fd;
    } catch (error) {
      return mapError(error, `open(${mode})`, path);
    }
  }

  close(fd: Fd): void {
    const path = this.#pathOf(fd);
    this.#paths.delete(fd);
    try {
      fs.closeSync(fd);
    } catch (error) {
      mapError(error, 'close', path);
    }
  }

  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    try {
      return fs.readSync(fd, buffer, offset, length, position);
    } catch (error) {
      return mapError(error, 'pread', this.#pathOf(fd));
    }
  }

  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): void {
    try {
      let done = 0;
      while (done < length) {
        done += fs.writeSync(fd, buffer, offset + done, length - done, position + done);
      }
    } catch (error) {
      mapError(error, 'pwrite', this.#pathOf(fd));
    }
  }

  writev(fd: Fd, buffers: readonly Uint8Array[], position: number): void {
    if (buffers.length === 1) {
      const only = buffers[0] as Uint8Array;
      this.write(fd, only, 0, only.length, position);
      return;
    }
    let total = 0;
    for (const b of buffers) total += b.length;
    try {
      // writevSync takes at most IOV_MAX (1024) buffers per call; finish short writes by hand.
      let index = 0;
      let at = position;
      while (index < buffers.length) {
        const group = buffers.slice(index, index + 1024) as Uint8Array[];
        let groupBytes = 0;
        for (const b of group) groupBytes += b.length;
        const written = fs.writevSync(fd, group, at);
        if (written < groupBytes) this.#finishShortWritev(fd, group, written, at);
        at += groupBytes;
        index += group.length;
      }
      if (at - position !== total) throw new Error('RealDisk.writev: byte count drift');
    } catch (error) {
      mapError(error, 'pwritev', this.#pathOf(fd));
    }
  }

  #finishShortWritev(fd: number, group: readonly Uint8Array[], written: number, at: number): void {
    let skip = written;
    let position = at + written;
    for (const b of group) {
      if (skip >= b.length) {
        skip -= b.length;
        continue;
      }
      let done = skip;
      skip = 0;
      while (done < b.length) {
        const n = fs.writeSync(fd, b, done, b.length - done, position);
        done += n;
        position += n;
      }
    }
  }

  size(fd: Fd): number {
    try {
      return fs.fstatSync(fd).size;
    } catch (error) {
      return mapError(error, 'fstat', this.#pathOf(fd));
    }
  }

  truncate(fd: Fd, length: number): void {
    try {
      fs.ftruncateSync(fd, length);
    } catch (error) {
      mapError(error, 'ftruncate', this.#pathOf(fd));
    }
  }

  fsync(fd: Fd): void {
    try {
      fs.fsyncSync(fd);
    } catch (error) {
      mapError(error, 'fsync', this.#pathOf(fd));
    }
  }

  fdatasync(fd: Fd): void {
    try {
      fs.fdatasyncSync(fd);
    } catch (error) {
      mapError(error, 'fdatasync', this.#pathOf(fd));
    }
  }

  fsyncDir(path: string): void {
    let fd: number | null = null;
    try {
      fd = fs.openSync(path, 'r');
      fs.fsyncSync(fd);
    } catch (error) {
      mapError(error, 'fsync(dir)', path);
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
  }

  rename(from: string, to: string): void {
    try {
      fs.renameSync(from, to);
    } catch (error) {
      mapError(error, 'rename', `${from} -> ${to}`);
    }
  }

  unlink(path: string): void {
    try {
      fs.unlinkSync(path);
    } catch (error) {
      mapError(error, 'unlink', path);
    }
  }

  mkdirp(path: string): string[] {
    const missing: string[] = [];
    let at = normalizePath(path);
    while (!fs.existsSync(at)) {
      missing.unshift(at);
      const parent = dirname(at);
      if (parent === at) break;
      at = parent;
    }
    const created: string[] = [];
    for (const dir of missing) {
      try {
        fs.mkdirSync(dir);
        created.push(dir);
      } catch (error) {
        // Another thread of the process (two shards opening sibling partitions) made it between
        // the existence check and the mkdir: it exists, which is all mkdirp promises.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true) continue;
        mapError(error, 'mkdir', path);
      }
    }
    return created;
  }

  rmdir(path: string): void {
    try {
      fs.rmdirSync(path);
    } catch (error) {
      mapError(error, 'rmdir', path);
    }
  }

  removeTree(path: string): void {
    try {
      fs.rmSync(path, { recursive: true, force: true });
    } catch (error) {
      mapError(error, 'rm -r', path);
    }
  }

  readdir(path: string): string[] {
    try {
      return fs.readdirSync(path).sort();
    } catch (error) {
      return mapError(error, 'readdir', path);
    }
  }

  stat(path: string): DiskStat | null {
    try {
      const s = fs.statSync(path, { throwIfNoEntry: false });
      if (s === undefined) return null;
      return { kind: s.isDirectory() ? 'directory' : 'file', size: s.size };
    } catch (error) {
      return mapError(error, 'stat', path);
    }
  }

  #pathOf(fd: Fd): string {
    return this.#paths.get(fd) ?? `fd ${fd}`;
  }
}
