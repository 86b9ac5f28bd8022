/**
 * The partition's "journal lost" marker (`<partition>/journal-lost`, empty): a replica that booted
 * with prior state and no journal (docs/storage-partition-journal.md) keeps `journalLost` across
 * later boots until its core has caught up (`Replica.journalIncomplete` cleared). Without it the
 * first lost boot writes a new, empty journal file, and a crash before catching up made the next
 * boot look whole: that replica then voted with an empty log, and its nacks truncated an op the
 * cluster had committed (seed 46 of 3, docs/storage-partition-journal.md).
 */
import {
  type Disk, joinPath, PARTITION_JOURNAL_DIR, PARTITION_JOURNAL_SUFFIX, writeFileAtomic,
} from '@shoal/storage';

export const JOURNAL_LOST_MARKER = 'journal-lost';

export function journalLostMarkerPath(partitionDir: string): string {
  return joinPath(partitionDir, JOURNAL_LOST_MARKER);
}

export function hasJournalLostMarker(disk: Disk, partitionDir: string): boolean {
  return disk.stat(journalLostMarkerPath(partitionDir))?.kind === 'file';
}

/** No journal file exists yet (checked before `PartitionJournal.open` creates one). */
export function journalFilesAbsent(disk: Disk, partitionDir: string): boolean {
  const dir = joinPath(partitionDir, PARTITION_JOURNAL_DIR);
  if (disk.stat(dir)?.kind !== 'directory') return true;
  return !disk.readdir(dir).some((name) => name.endsWith(PARTITION_JOURNAL_SUFFIX));
}

/** Durable before the new journal file exists: a crash in between still boots as lost. */
export function writeJournalLostMarker(disk: Disk, partitionDir: string): void {
  writeFileAtomic(disk, journalLostMarkerPath(partitionDir), []);
}

export function removeJournalLostMarker(disk: Disk, partitionDir: string): void {
  disk.unlink(journalLostMarkerPath(partitionDir));
  disk.fsyncDir(partitionDir);
}
