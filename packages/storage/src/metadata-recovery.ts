/**
 * Metadata recovery at boot, storage part (replication-semantics.md §9.4):
 *
 *   1. roll a decided state-transfer install forward / drop an undecided one (install.ts)
 *   2. load and verify snapshot.bin                  corrupt ─▶ refuse
 *   3. read and classify the superblock pair          refused ─▶ refuse
 *   4. identity: cluster id, replica id, replica count as configured, else refuse
 *   5. checkpoint pairing: superblock checkpoint_op > snapshot op ─▶ refuse; equal ops with
 *      different checksums ─▶ refuse; a checkpoint op below the snapshot's is accepted
 *   6. open the WAL with the snapshot op as watermark and scan it (torn tail truncated;
 *      interior corruption refuses, or is reported in `repair` mode)
 *   7. provable commit watermark = max(snapshot op, `commit` of journaled entries above it);
 *      a solo cluster: the max journaled op
 *   8. replay = journaled ops above the snapshot, in op order, up to the watermark, stopping at
 *      the first op that does not connect to its predecessor (gap or parent-chain break); unlike
 *      upstream's `truncate_from`, nothing is truncated there (the entries above stay journaled,
 *      untrusted). Connected entries above the watermark stay journaled, unapplied.
 *
 * Restoring the state machine from the payload, the client table, and consensus (5.10) are the
 * driver's: this returns the bytes and the open stores. The snapshot's sequence number lives in
 * the opaque payload, so the caller passes `snapshotOpOf` (the state machine's peek).
 */
import { readU128LE } from '@shoal/stdx';
import { PREPARE_LAYOUT } from '@shoal/protocol';
import { type Disk, DiskError, type DiskFault, joinPath } from './disk.js';
import { mkdirDurable } from './durable-file.js';
import { ClientTableFile, type ClientTableRead } from './client-table-file.js';
import { finishMetadataStaging, resolveMetadataStaging } from './install.js';
import { type JournalEntry, type JournalFault, MetadataJournal, type MetadataJournalOptions } from './metadata-journal.js';
import { SnapshotFile } from './snapshot-file.js';
import { type SuperblockIdentity, SuperblockStore, checkSuperblockIdentity } from './superblock.js';
import type { VsrState } from './vsr-state.js';

export interface MetadataRecoveryOptions {
  readonly expected: SuperblockIdentity;
  /** The snapshot's sequence number (checkpoint op) from its payload, or null if undecodable. */
  readonly snapshotOpOf: (payload: Uint8Array) => number | null;
  readonly journal?: MetadataJournalOptions;
}

export type MetadataRecoveryErrorKind =
  | 'io'
  | 'snapshot_corrupt'
  | 'snapshot_undecodable'
  | 'superblock_refused'
  | 'identity_mismatch'
  | 'checkpoint_ahead_of_snapshot'
  | 'checkpoint_checksum_mismatch'
  | 'client_table_corrupt'
  | 'journal_refused';

export interface MetadataRecoveryError {
  readonly kind: MetadataRecoveryErrorKind;
  readonly reason: string;
  readonly fault?: DiskFault;
}

export interface RecoveredSnapshot {
  readonly payload: Uint8Array;
  /** widen(XXH3(payload)). */
  readonly checksum: bigint;
  readonly op: number;
  readonly sealed: boolean;
}

export interface MetadataRestore {
  readonly snapshot: RecoveredSnapshot | null;
  readonly superblock: { readonly state: VsrState; readonly sequence: bigint } | null;
  readonly clientTable: ClientTableRead;
  /** Entries to apply in order: (snapshot op, commitWatermark], connected. */
  readonly replay: readonly JournalEntry[];
  /** Connected entries above the watermark: journaled, not applied. */
  readonly unapplied: readonly JournalEntry[];
  /** The provable commit watermark (step 7); may exceed what the journal can replay. */
  readonly commitWatermark: number;
  /** Last op in `replay` (the snapshot op when nothing replays): the restored commit_min. */
  readonly replayedThrough: number;
  readonly headOp: number;
  readonly lastHeader: Uint8Array | null;
  readonly faulty: readonly JournalFault[];
  /**
   * Ops above the snapshot that a truncation dropped (recorded in journal.faulty) and the journal
   * does not hold: this replica may have acked them.
   */
  readonly recordedFaulty: readonly number[];
  readonly stagingResolution: 'none' | 'rolled_back' | 'rolled_forward';
  readonly superblockStore: SuperblockStore;
  readonly snapshotFile: SnapshotFile;
  readonly clientTableFile: ClientTableFile;
  readonly journal: MetadataJournal;
}

export type MetadataRecoveryResult =
  | { readonly ok: true; readonly value: MetadataRestore }
  | { readonly ok: false; readonly error: MetadataRecoveryError };

const COMMIT_AT = PREPARE_LAYOUT.commit.offset;
const PARENT_AT = PREPARE_LAYOUT.parent.offset;

function refuse(kind: MetadataRecoveryErrorKind, reason: string, fault?: DiskFault): MetadataRecoveryResult {
  return { ok: false, error: fault === undefined ? { kind, reason } : { kind, reason, fault } };
}

function commitOf(frame: Uint8Array): number {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  return Number(view.getBigUint64(COMMIT_AT, true));
}

export function recoverMetadata(disk: Disk, metadataDir: string, options: MetadataRecoveryOptions): MetadataRecoveryResult {
  try {
    return recover(disk, metadataDir, options);
  } catch (error) {
    if (!(error instanceof DiskError)) throw error;
    return refuse('io', error.message, { code: error.code, syscall: error.syscall, path: error.path, message: error.message });
  }
}

function recover(disk: Disk, dir: string, options: MetadataRecoveryOptions): MetadataRecoveryResult {
  mkdirDurable(disk, dir);
  const staging = resolveMetadataStaging(disk, dir);

  const snapshotFile = new SnapshotFile(disk, dir);
  const snapshotRead = snapshotFile.read();
  if (!snapshotRead.ok) return refuse('io', snapshotRead.error.message, snapshotRead.error);
  const s = snapshotRead.value;
  if (s.kind === 'corrupt') return refuse('snapshot_corrupt', s.reason);
  let snapshot: RecoveredSnapshot | null = null;
  if (s.kind !== 'missing') {
    const op = options.snapshotOpOf(s.payload);
    if (op === null) return refuse('snapshot_undecodable', 'the state machine could not read the snapshot sequence number');
    snapshot = { payload: s.payload, checksum: s.checksum, op, sealed: s.kind === 'sealed' };
  }

  const superblockStore = new SuperblockStore(disk, dir);
  const sbRead = superblockStore.read();
  if (!sbRead.ok) return refuse('io', sbRead.error.message, sbRead.error);
  const sb = sbRead.value;
  if (sb.kind === 'refused') return refuse('superblock_refused', sb.reason);
  const superblock = sb.kind === 'ok' ? { state: sb.state, sequence: sb.sequence } : null;
  if (superblock !== null) {
    const mismatch = checkSuperblockIdentity(superblock.state, options.expected);
    if (mismatch !== null) return refuse('identity_mismatch', mismatch);
    const checkpointOp = superblock.state.checkpointOp;
    const snapshotOp = BigInt(snapshot?.op ?? 0);
    if (checkpointOp > snapshotOp) {
      return refuse('checkpoint_ahead_of_snapshot', `superblock checkpoint_op ${checkpointOp} > snapshot op on disk ${snapshotOp}`);
    }
    if (snapshot !== null && checkpointOp === snapshotOp && checkpointOp > 0n && superblock.state.checkpointChecksum !== snapshot.checksum) {
      return refuse(
        'checkpoint_checksum_mismatch',
        `snapshot op ${snapshotOp}: superblock checksum 0x${superblock.state.checkpointChecksum.toString(16)} != snapshot 0x${snapshot.checksum.toString(16)}`,
      );
    }
  }

  const clientTableFile = new ClientTableFile(disk, dir);
  const tableRead = clientTableFile.read();
  if (!tableRead.ok) return refuse('io', tableRead.error.message, tableRead.error);
  if (tableRead.value.kind === 'corrupt') return refuse('client_table_corrupt', tableRead.value.reason);

  const opened = MetadataJournal.open(disk, dir, options.journal ?? {});
  if (!opened.ok) return refuse('io', opened.error.message, opened.error);
  const journal = opened.value;
  const snapshotOp = snapshot?.op ?? 0;
  const scanned = journal.recover(snapshotOp);
  if (!scanned.ok) return refuse('io', scanned.error.message);
  const scan = scanned.value;
  if (scan.kind === 'refused') return refuse('journal_refused', `interior corruption at byte ${scan.offset}: ${scan.reason}`);
  let entries = scan.entries;

  // A rolled-forward install still owes its WAL truncation.
  if (staging.kind === 'rolled_forward') {
    if (staging.truncateWalFrom !== null && entries.some((e) => e.op >= (staging.truncateWalFrom as number))) {
      const cut = journal.truncateFrom(staging.truncateWalFrom);
      if (!cut.ok) return refuse('io', cut.error.message);
      entries = entries.filter((e) => e.op < (staging.truncateWalFrom as number));
    }
    finishMetadataStaging(disk, dir);
  }

  const byOp = new Map<number, JournalEntry>();
  for (const e of entries) byOp.set(e.op, e);
  const above = entries.filter((e) => e.op > snapshotOp);
  let watermark = snapshotOp;
  if (options.expected.replicaCount === 1) {
    for (const e of above) watermark = Math.max(watermark, e.op);
  } else {
    for (const e of above) watermark = Math.max(watermark, commitOf(e.frame));
  }

  // The connected run above the snapshot: what replay may apply. A gap or chain break stops it but
  // truncates nothing (deviation from upstream's `truncate_from`, replication-semantics.md §9.4):
  // every entry the scan returned verified, and the journal held it before the restart exactly as
  // it does now (live prepares above a gap, repaired ops above an older view's stale entries).
  // Which side of a break is canonical is the core's to find out (trust.ts, from an anchor); cut
  // here, the held ops above became faulty and were lost to the cluster (seed 1068468 of 3: a
  // process kill cut canonical ops 10..30 above stale op 9, and their only other copy was dead).
  const connected: JournalEntry[] = [];
  let previous = byOp.get(snapshotOp) ?? null;
  for (let op = snapshotOp + 1; op <= journal.headOp; op++) {
    const entry = byOp.get(op);
    if (entry === undefined) break;
    if (previous !== null) {
      const previousChecksum = readU128LE(previous.frame, 0);
      if (previousChecksum !== 0n && readU128LE(entry.frame, PARENT_AT) !== previousChecksum) break;
    }
    connected.push(entry);
    previous = entry;
  }
  const replay = connected.filter((e) => e.op <= watermark);
  const unapplied = connected.filter((e) => e.op > watermark);
  const last = journal.headOp === 0 ? null : (byOp.get(journal.headOp) ?? null);
  return {
    ok: true,
    value: {
      snapshot,
      superblock,
      clientTable: tableRead.value,
      replay,
      unapplied,
      commitWatermark: watermark,
      replayedThrough: replay.length === 0 ? snapshotOp : (replay[replay.length - 1] as JournalEntry).op,
      headOp: journal.headOp,
      lastHeader: last === null ? null : last.frame.slice(0, 256),
      faulty: scan.faulty,
      recordedFaulty: journal.recordedFaultyOps(snapshotOp),
      stagingResolution: staging.kind,
      superblockStore,
      snapshotFile,
      clientTableFile,
      journal,
    },
  };
}

/** Path helpers for callers that only know the data root. */
export function metadataDirOf(root: string): string {
  return joinPath(root, 'metadata');
}
