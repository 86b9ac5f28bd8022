/**
 * Removing a deleted partition's directory (partition / topic / stream deletion), so that a disk
 * error on the way never crashes the replica and never leaves a half-removed directory under the
 * partition's live name.
 *
 *   <dir>  ──rename──▶  <dir>.deleted  ──fsync parent──▶  rm -r <dir>.deleted  ──fsync parent
 *
 * The rename is atomic: after it, `<dir>` is free, and a partition re-created with the same ids
 * opens an empty directory (the tombstone is another name). A disk error (EIO, ENOSPC, ...) at any
 * step is returned, never thrown: the deletion is committed metadata, the files hold nothing the
 * cluster still needs, so a failed removal only leaks disk space until it is finished later:
 *
 * - the rename failed: `<dir>` is still there under its old created revision, which the next
 *   `PartitionDriver.open` of those ids treats as another incarnation and removes (`recreate`);
 *   otherwise the next removal of the same path, or the boot sweep once renamed, finishes it;
 * - the rename held but `rm -r` failed (or a crash cut it short, possibly half-way): the tombstone
 *   is removed by `sweepDeletedPartitions` at the next boot (`openDataDir`, the simulator's node
 *   boot), or by the next removal of the same partition path.
 *
 * Nothing reads a `*.deleted` entry: partitions are opened by path from the committed metadata.
 */
import { type Disk, type IoResult, attempt, dirname, joinPath } from './disk.js';
import { PARTITIONS_DIR_NAME, STREAMS_DIR_NAME, TOPICS_DIR_NAME } from './data-dir.js';

export const DELETED_SUFFIX = '.deleted';

/** The tombstone a partition directory is renamed to before it is removed. */
export function tombstoneOf(dir: string): string {
  return dir + DELETED_SUFFIX;
}

/**
 * Removes a deleted partition's directory durably (above). Ok when nothing is left (or nothing
 * was there); an error leaves `dir` whole under its name, or a tombstone for a later sweep.
 */
export function removePartitionDir(disk: Disk, dir: string): IoResult<void> {
  const tombstone = tombstoneOf(dir);
  const parent = dirname(dir);
  return attempt(() => {
    // An earlier removal of this path that did not finish: its tombstone goes first (a rename
    // onto a non-empty directory fails).
    if (disk.stat(tombstone) !== null) {
      disk.removeTree(tombstone);
      disk.fsyncDir(parent);
    }
    if (disk.stat(dir) === null) return;
    disk.rename(dir, tombstone);
    disk.fsyncDir(parent);
    disk.removeTree(tombstone);
    disk.fsyncDir(parent);
  });
}

/**
 * Boot sweep: removes every partition tombstone (`streams/<s>/topics/<t>/partitions/<p>.deleted`)
 * left by a removal that failed or was cut short. Returns the tombstones removed; an error stops
 * the sweep (what is left stays for the next boot).
 */
export function sweepDeletedPartitions(disk: Disk, root: string): IoResult<string[]> {
  return attempt(() => {
    const swept: string[] = [];
    const streams = joinPath(root, STREAMS_DIR_NAME);
    for (const stream of subdirs(disk, streams)) {
      const topics = joinPath(streams, stream, TOPICS_DIR_NAME);
      for (const topic of subdirs(disk, topics)) {
        const partitions = joinPath(topics, topic, PARTITIONS_DIR_NAME);
        let removed = false;
        for (const name of subdirs(disk, partitions)) {
          if (!name.endsWith(DELETED_SUFFIX)) continue;
          const path = joinPath(partitions, name);
          disk.removeTree(path);
          swept.push(path);
          removed = true;
        }
        if (removed) disk.fsyncDir(partitions);
      }
    }
    return swept;
  });
}

function subdirs(disk: Disk, dir: string): string[] {
  if (disk.stat(dir)?.kind !== 'directory') return [];
  return disk.readdir(dir).filter((name) => disk.stat(joinPath(dir, name))?.kind === 'directory');
}
