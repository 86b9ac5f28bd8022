/**
 * The few file idioms every storage module repeats, written once against the Disk port. All of
 * them throw `DiskError` (callers wrap with `attempt`).
 *
 * Atomic replace (pitfalls 10, §9.2/§9.3): `<name>.tmp` ← write ← fsync ← rename over `<name>` ←
 * fsync the directory. A crash at any point leaves the old file or the new one, never a torn one
 * under the real name; a torn `.tmp` is garbage that the owner sweeps.
 */
import { type Disk, type Fd, basename, dirname, joinPath } from './disk.js';

export const TMP_SUFFIX = '.tmp';

/** Whole file, or null when it does not exist. */
export function readWholeFile(disk: Disk, path: string): Uint8Array | null {
  const stat = disk.stat(path);
  if (stat === null || stat.kind !== 'file') return null;
  const fd = disk.open(path, 'read');
  try {
    return readAll(disk, fd, 0, disk.size(fd));
  } finally {
    disk.close(fd);
  }
}

/** Exactly `length` bytes at `position`, or fewer when the file ends first. */
export function readAll(disk: Disk, fd: Fd, position: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = disk.read(fd, out, done, length - done, position + done);
    if (n === 0) return out.subarray(0, done);
    done += n;
  }
  return out;
}

/** Atomic durable replace of `path` with `parts` concatenated. */
export function writeFileAtomic(disk: Disk, path: string, parts: readonly Uint8Array[]): void {
  const tmp = path + TMP_SUFFIX;
  const fd = disk.open(tmp, 'truncate');
  try {
    disk.writev(fd, parts, 0);
    disk.fsync(fd);
  } finally {
    disk.close(fd);
  }
  disk.rename(tmp, path);
  disk.fsyncDir(dirname(path));
}

/** mkdir -p, then makes every created entry durable (fsync of each created dir's parent). */
export function mkdirDurable(disk: Disk, path: string): void {
  const created = disk.mkdirp(path);
  for (const dir of created) disk.fsyncDir(dirname(dir));
}

/** rm -r and make the removal durable. */
export function removeTreeDurable(disk: Disk, path: string): void {
  if (disk.stat(path) === null) return;
  disk.removeTree(path);
  disk.fsyncDir(dirname(path));
}

/** Unlinks `path` when present (no fsyncDir: the caller batches it). Returns whether it existed. */
export function unlinkIfPresent(disk: Disk, path: string): boolean {
  if (disk.stat(path) === null) return false;
  disk.unlink(path);
  return true;
}

/** Deletes stray `<x>.tmp` files in `dir` (torn atomic replaces). Returns their names. */
export function sweepTmpFiles(disk: Disk, dir: string): string[] {
  if (disk.stat(dir)?.kind !== 'directory') return [];
  const swept: string[] = [];
  for (const name of disk.readdir(dir)) {
    if (!name.endsWith(TMP_SUFFIX)) continue;
    const path = joinPath(dir, name);
    if (disk.stat(path)?.kind === 'file') {
      disk.unlink(path);
      swept.push(basename(path));
    }
  }
  if (swept.length > 0) disk.fsyncDir(dir);
  return swept;
}

const ZERO_CHUNK = new Uint8Array(1 << 20);

/**
 * Reserves `length` bytes from `position` by writing zeros (what glibc's posix_fallocate does on
 * filesystems without fallocate; Node exposes neither). Used for `preallocate_segments`; readers
 * and boot recovery treat an all-zero tail after the last batch as free space.
 */
export function preallocateZeros(disk: Disk, fd: Fd, position: number, length: number): void {
  let at = position;
  const end = position + length;
  while (at < end) {
    const n = Math.min(ZERO_CHUNK.length, end - at);
    disk.write(fd, ZERO_CHUNK, 0, n, at);
    at += n;
  }
}
