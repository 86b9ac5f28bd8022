/**
 * Boot-time recovery of ONE segment (storage-engine.mdx "Boot-time segment recovery"), Shoal's
 * variant for a one-entry-per-batch index:
 *
 *  1. Decode the .index. Missing, non-monotonic or not starting at the segment start → rebuild
 *     from a full walk of the .log. A trailing partial entry (torn index write) is dropped.
 *  2. An entry pointing at or past the end of the .log file → REFUSE the partition
 *     (`index_past_end_of_log`): the log lost bytes the index vouches for.
 *  3. Otherwise verify the tail: from the last entry backwards, find the last entry whose batch
 *     verifies (header, checksum, base_offset = entry offset); walk forward from it verifying
 *     every batch (continuity of base_offset) to the first failure or the end of the file.
 *     Index entries past the walk's end are dropped; walked batches without an entry get one.
 *  4. After the last good batch: an all-zero run is preallocated free space (kept); anything else
 *     is a torn tail → truncate the .log there and fdatasync (active segment only; a SEALED
 *     segment with a torn tail would leave an offset gap → REFUSE `sealed_segment_torn`).
 *  5. No whole batch at all → the segment is empty (logical size 0).
 *
 * Entries before the verified one are trusted as the reference trusts its index (reads still
 * verify every batch they serve, and fail closed).
 */
import { assert } from '@shoal/stdx';
import { type Disk, joinPath } from './disk.js';
import { readAll } from './durable-file.js';
import { INDEX_ENTRY_SIZE, SegmentIndex, decodeIndex } from './segment-index.js';
import { Segment, walkBatches } from './segment.js';

export type SegmentRecovery =
  | {
      readonly kind: 'ok';
      readonly segment: Segment;
      /** Bytes of torn .log tail dropped (0 when none). */
      readonly truncatedBytes: number;
      readonly truncateReason: string | null;
      /** The index was rebuilt or repaired (entries dropped or added). */
      readonly indexRepaired: boolean;
      readonly indexRepairReason: string | null;
    }
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Recovers the segment starting at `startOffset` in `dir`. `isLast` = the active segment (torn
 * tails are truncated). Leaves the segment's log and index fds OPEN (read/write) for the active
 * segment, closed otherwise. Throws DiskError on I/O failure only.
 */
export function recoverSegment(disk: Disk, dir: string, startOffset: number, isLast: boolean): SegmentRecovery {
  const segment = new Segment(dir, startOffset);
  const logFd = disk.open(segment.logPath, 'readwrite');
  const indexExisted = disk.stat(segment.indexPath) !== null;
  const indexFd = disk.open(segment.indexPath, 'create');
  if (!indexExisted) disk.fsyncDir(dir);
  const closeAll = (): void => {
    disk.close(logFd);
    disk.close(indexFd);
  };
  try {
    const fileSize = disk.size(logFd);
    const indexFileBytes = readAll(disk, indexFd, 0, disk.size(indexFd));
    const decoded = decodeIndex(indexFileBytes, startOffset);
    let index: SegmentIndex;
    let repairReason: string | null = null;
    if (!indexExisted) {
      index = new SegmentIndex();
      repairReason = 'index_missing';
    } else if (decoded.kind === 'invalid') {
      index = new SegmentIndex();
      repairReason = decoded.reason;
    } else {
      index = decoded.index;
      if (decoded.tornBytes > 0) repairReason = 'index_torn';
    }
    for (let i = 0; i < index.length; i++) {
      if (index.positionAt(i) >= fileSize) {
        closeAll();
        return { kind: 'refused', reason: `index_past_end_of_log: entry ${i} at position ${index.positionAt(i)}, log is ${fileSize} bytes` };
      }
    }

    // 3. The walk start: the last entry whose batch verifies (or the segment start). ONE walk per
    // candidate, and the walk that verified is the one the segment is built from: a second read of
    // the same bytes may differ (a read fault), and a probe that verified followed by a walk that
    // did not would keep the entry while cutting the log under it (an index entry at an offset
    // the segment no longer holds: the next append repeats it).
    const originalEntries = index.length;
    let startEntry = index.length - 1;
    let added = 0;
    let lastTimestamp = 0;
    let lastBase = -1;
    let walk: ReturnType<typeof walkBatches>;
    for (;;) {
      // Entries past a candidate are dropped whether it verifies or not (the search only moves down).
      index.truncate(startEntry + 1);
      const from = startEntry >= 0 ? index.positionAt(startEntry) : 0;
      const expected = startEntry >= 0 ? index.offsetAt(startEntry) : startOffset;
      walk = walkBatches(disk, logFd, from, fileSize, expected, true, (batch) => {
        if (batch.position > from || index.length === 0) {
          index.push(batch.baseOffset, batch.baseTimestamp, batch.position);
          added++;
        }
        lastTimestamp = batch.baseTimestamp;
        lastBase = batch.baseOffset;
      });
      if (walk.batches > 0 || startEntry < 0) break;
      startEntry--;
    }
    if (index.length - added < originalEntries) repairReason ??= 'index_entries_past_verified_log';
    if (added > 0) repairReason ??= 'index_entries_missing';

    // 4. What follows the last good batch.
    let truncatedBytes = 0;
    let truncateReason: string | null = null;
    const end = walk.end;
    if (walk.stop !== null && walk.stop.reason !== 'zero_fill') {
      const tail = readAll(disk, logFd, end, Math.min(4096, fileSize - end));
      const zeroTail = tail.every((b) => b === 0);
      if (!zeroTail) {
        if (!isLast) {
          closeAll();
          return { kind: 'refused', reason: `sealed_segment_torn: ${walk.stop.reason} at position ${end} of ${segment.logPath}` };
        }
        truncatedBytes = fileSize - end;
        truncateReason = walk.stop.reason;
        disk.truncate(logFd, end);
        disk.fdatasync(logFd);
      }
    }

    // Rewrite the index when it changed.
    const wantIndexBytes = index.length * INDEX_ENTRY_SIZE;
    if (repairReason !== null || indexFileBytes.length !== wantIndexBytes) {
      disk.truncate(indexFd, 0);
      if (wantIndexBytes > 0) {
        const bytes = index.encode();
        disk.write(indexFd, bytes, 0, bytes.length, 0);
      }
      disk.fdatasync(indexFd);
      repairReason ??= 'index_length_mismatch';
    }

    segment.size = end;
    segment.indexBytes = wantIndexBytes;
    segment.index = index;
    if (index.length > 0) {
      segment.firstTimestamp = index.timestampAt(0);
      segment.lastTimestamp = lastBase >= 0 ? lastTimestamp : index.timestampAt(index.length - 1);
      segment.endOffset = walk.nextOffset - 1;
    }
    if (!isLast && segment.empty) {
      closeAll();
      return { kind: 'refused', reason: `sealed_segment_empty: ${segment.logPath}` };
    }
    assert(
      index.length === 0
        ? segment.empty && end === 0
        : index.offsetAt(index.length - 1) <= segment.endOffset && index.positionAt(index.length - 1) < end,
      `recover: index of ${segment.logPath} (${index.length} entries) disagrees with its verified log (${end} bytes)`,
    );
    segment.sealed = !isLast;
    if (isLast) {
      segment.logFd = logFd;
      segment.indexFd = indexFd;
    } else {
      closeAll();
      segment.index = null;
    }
    return {
      kind: 'ok',
      segment,
      truncatedBytes,
      truncateReason,
      indexRepaired: repairReason !== null,
      indexRepairReason: repairReason,
    };
  } catch (error) {
    try {
      closeAll();
    } catch {
      // the original error wins
    }
    throw error;
  }
}

/** Path of the staging directory inside a partition directory. */
export function stagingDirOf(partitionDir: string): string {
  return joinPath(partitionDir, '.staging');
}
