/**
 * @shoal/storage: everything Shoal keeps on disk, behind one synchronous Disk port.
 * Layout and formats: docs/storage-layout.md; boot recovery: docs/storage-recovery.md;
 * state-transfer artifacts and install: docs/storage-artifacts.md.
 */
export {
  type Disk, type Fd, type OpenMode, type DiskErrorCode, type DiskStat, type DiskFault, type IoResult,
  DiskError, attempt, faultOf, ioOk, joinPath, normalizePath, dirname, basename,
} from './disk.js';
export { RealDisk } from './real-disk.js';
export {
  SimDisk, SimulatedCrash, NO_FAULTS, type SimDiskFaults, type SimDiskOptions, type SimFaultKind, type SimFaultRecord,
} from './sim-disk.js';
export {
  TMP_SUFFIX, readWholeFile, readAll, writeFileAtomic, mkdirDurable, removeTreeDurable, unlinkIfPresent, sweepTmpFiles,
  preallocateZeros,
} from './durable-file.js';
export { DELETED_SUFFIX, removePartitionDir, sweepDeletedPartitions, tombstoneOf } from './partition-removal.js';
export { xxh3OfFileRange, xxh3OfParts, FILE_HASH_CHUNK } from './file-hash.js';
export {
  type VsrState, VSR_STATE_SIZE, VSR_STATE_NO_LOG_HEAD_SIZE, VSR_STATE_LEGACY_SIZE, VSR_STATE_LAYOUT, encodeVsrState, decodeVsrState,
} from './vsr-state.js';
export {
  SuperblockStore, type PreparedSuperblockWrite, type SuperblockSlot, type SlotClass, type SuperblockRead, type SuperblockIdentity,
  SUPERBLOCK_MAGIC, SUPERBLOCK_VERSION, SUPERBLOCK_HEADER_SIZE, SUPERBLOCK_PAYLOAD_MAX, SUPERBLOCK_FILE_MAX,
  encodeSuperblockRecord, classifySuperblockRecord, chooseSuperblock, checkSuperblockIdentity,
} from './superblock.js';
export {
  SnapshotFile, type SnapshotRead, SNAPSHOT_FILE_NAME, SNAPSHOT_MAGIC, SNAPSHOT_TRAILER_SIZE, snapshotTrailer,
  classifySnapshot,
} from './snapshot-file.js';
export { ClientTableFile, type ClientTableRead, CLIENT_TABLE_FILE_NAME, classifyClientTable } from './client-table-file.js';
export {
  JOURNAL_ENTRY_SIZE_MAX, type JournalScanMode, type JournalScan, type ScannedEntry, type ScanCorruption,
  scanJournal, structuralProblem,
} from './journal-scan.js';
export {
  MetadataJournal, type MetadataJournalOptions, type JournalEntry, type JournalFault, type JournalFaultKind,
  type JournalRecovery, type JournalError, type JournalResult, JOURNAL_FILE_NAME, JOURNAL_SLOTS_DEFAULT, opOf,
} from './metadata-journal.js';
export {
  recoverMetadata, metadataDirOf, type MetadataRecoveryOptions, type MetadataRecoveryError,
  type MetadataRecoveryErrorKind, type MetadataRecoveryResult, type MetadataRestore, type RecoveredSnapshot,
} from './metadata-recovery.js';
export {
  DataDirLayout, type DataDirIdentity, type DataDirError, type DataDirResult, openDataDir, wipeDataDir, identityFor,
  encodeIdentity, decodeIdentity, IDENTITY_FILE_NAME, METADATA_DIR_NAME, STREAMS_DIR_NAME, OWNED_ROOT_ENTRIES,
} from './data-dir.js';
export { SegmentIndex, INDEX_ENTRY_SIZE, decodeIndex, type IndexDecode } from './segment-index.js';
export {
  Segment, segmentBaseName, parseSegmentFileName, walkBatches, type WalkedBatch, type WalkOutcome, LOG_EXTENSION,
  INDEX_EXTENSION,
} from './segment.js';
export { recoverSegment, type SegmentRecovery } from './segment-recovery.js';
export {
  PartitionLog, type TopicStorageOptions, TOPIC_STORAGE_DEFAULTS, type AppendOutcome, type LogSyncTicket,
} from './partition-log.js';
export {
  PartitionReader, detachPoll, pollParts, type ReaderOptions, type PolledBatch, type Poll, type PollResult, type ReadError,
} from './partition-reader.js';
export {
  PartitionStorage, type PartitionStorageOptions, PARTITION_STORAGE_DEFAULTS, type PartitionRecoveryReport,
  type PartitionOpenError, type PartitionOpenResult, type SegmentRecoveryNote,
} from './partition-storage.js';
export {
  ConsumerOffsetStore, type ConsumerKind, type ConsumerOffsetsLoad, type OffsetFileFault, encodeOffsetFile,
  decodeOffsetFile, OFFSETS_DIR_NAME, OFFSET_FILE_SIZE, UNSYNCED_CREATION,
} from './consumer-offsets.js';
export {
  type PurgeRecord, PURGE_RECORD_NONE, PURGE_GENERATION_FILE_NAME, PURGE_INTENT_FILE_NAME, encodePurgeRecord,
  classifyPurgeRecord, readPurgeRecord, writePurgeRecord,
} from './purge-generation.js';
export {
  expiredSegmentCount, oversizeSegmentCount, partitionShareOfTopicSize, applyRetention, deleteSegments,
  RETENTION_NEVER, type RetentionPolicy, type RetentionOutcome,
} from './retention.js';
export {
  StateOffer, buildMetadataOffer, buildPartitionOffer, STATE_CHUNK_MAX, type ArtifactError, type ArtifactResult,
} from './artifacts.js';
export {
  PartitionInstaller, MetadataInstaller, resolvePartitionStaging, resolveMetadataStaging, finishMetadataStaging,
  STAGING_DIR_NAME, INSTALL_MARKER_NAME, INSTALL_LIMITS_DEFAULT, type InstallLimits, type InstallError,
  type InstallResult, type ChunkVerdict, type StagingResolution, type PartitionInstallSummary,
  type MetadataStagingResolution,
} from './install.js';
export {
  PartitionJournal, type PartitionJournalOptions, type PartitionJournalRecovery, PARTITION_JOURNAL_DEFAULTS, PARTITION_JOURNAL_DIR,
  PARTITION_JOURNAL_SUFFIX, PARTITION_JOURNAL_MAGIC, PARTITION_JOURNAL_RECORD_HEADER, JournalRecordKind, JOURNAL_RECORD_LAYOUT,
  encodeRecord as encodePartitionJournalRecord, decodeRecord as decodePartitionJournalRecord,
} from './partition-journal.js';
export {
  type DiskJob, type DiskJobDone, type DiskJobResult, type DiskJobStep, type DiskQueue,
  DeferredDiskQueue, InlineDiskQueue, runDiskJob,
} from './disk-job.js';
