/**
 * `PartitionDriver`: one partition group on its segment storage. Every prepare goes to the
 * partition journal file (`PartitionJournal`) before the core vouches for it; committed batches
 * go to the `PartitionLog`, consumer offsets to their files. At boot the journal's prepares above
 * the durable commit frontier come back to the core (uncommitted entries it re-commits), so an
 * acknowledged batch survives a kill of every node; the journal is compacted as the frontier
 * moves (docs/storage-partition-journal.md).
 *
 * THE COMMIT FRONTIER. The segments hold batches, not ops, so the op the durable log reflects is
 * recorded separately: the partition superblock's `checkpoint_op` (F) and `offset_frontier` (O)
 * say "the segments up to offset O are exactly the committed state after op F". It is rewritten
 * whenever an append ended with the segments fdatasynced, after an install or a purge, at close,
 * and with every superblock write the core asks for. At boot (`open`):
 *
 *   log end L == O   restore commit F
 *   L > O            unsynced batches above O survived the crash, with unknown ops: cut the log
 *                    back to O; the journal (or the peers) still hold those ops, which are
 *                    committed again and re-applied (a solo replica re-applies its journal at
 *                    once). Without a journal file (a directory from before it existed) a solo
 *                    replica adopts them, one op per batch.
 *   L < O            the disk lost synced data: mark the journal lost (it holds nothing at or
 *                    below O's op), wipe the partition, restore commit 0 with prior state
 *                    (ceded, journal incomplete: repair / state transfer refills it)
 */
import {
  type Completion, type ConsensusConfig, type DurableVsrState, type Effect, type FrameIngress, type RestoreRecord, Replica, makeConfig,
  partitionPlane,
} from '@shoal/consensus';
import {
  Command, ErrorCode, FRAME_HEADER_SIZE, type ManifestEntry, OFFSET_COMMAND, OFFSET_SIZE, Operation, PREPARE_LAYOUT, validateBatch,
} from '@shoal/protocol';
import {
  type ConsumerRef, decodeDeleteOffsetBody, decodeStoreOffsetBody, type MessageLog, offsetWriteBodyProblem, type MessageRead, type Outcome, type PartitionCounters, type PartitionIdentity, PartitionState,
  type PollReply, type PollRequest, pollPartition,
} from '@shoal/state';
import { assert } from '@shoal/stdx';
import {
  type Disk, INDEX_ENTRY_SIZE, PartitionInstaller, PartitionJournal, PartitionStorage, type PartitionStorageOptions, PARTITION_STORAGE_DEFAULTS,
  type RetentionPolicy, type StateOffer, type VsrState, applyRetention, buildPartitionOffer, deleteSegments, parseSegmentFileName,
  type IoResult, joinPath, pollParts, removePartitionDir, SuperblockStore, writePurgeRecord,
  type DiskJobResult, type DiskJobStep, type DiskQueue, type LogSyncTicket, type PreparedSuperblockWrite,
} from '@shoal/storage';
import { GroupDriver } from './group-driver.js';
import { hasJournalLostMarker, journalFilesAbsent, removeJournalLostMarker, writeJournalLostMarker } from './journal-lost-marker.js';
import { syncFile } from './metadata-driver.js';
import { PartitionAdapter, type StorageWork } from './partition-adapter.js';
import type { DriverOptions, FatalReason, OpenResult } from './ports.js';
import { TransferStaging } from './transfer-staging.js';
import { HandBackPolicy, preferredPrimary } from './leadership.js';

export interface PartitionDriverOptions extends DriverOptions {
  /** The partition directory (`DataDirLayout.partitionDir`). */
  readonly dir: string;
  /** The packed group key (stream << 32 | topic << 20 | partition). */
  readonly group: bigint;
  readonly identity: PartitionIdentity;
  /** The topic's storage options (segment size, fsync policy, read-ahead). */
  readonly storage?: Partial<PartitionStorageOptions>;
  /**
   * The partition's `created_revision` (metadata). A directory whose purge.gen records an older
   * one (an earlier incarnation of the same group: deleted, then re-created) is wiped first; one
   * recording none (0: created before hosts passed revisions) adopts it; a newer one is refused.
   * The revision is recorded in `purge.gen` for the next boot.
   */
  readonly createdRevision?: bigint;
  /**
   * The host's view of its link to a replica (the runtime: the status table's link owner). A
   * hand-back waits while the preferred replica's link is down: a killed process drops its link
   * at once, sooner than its acks go stale (consensus hand-back.ts). Absent: always linked.
   */
  readonly peerLinked?: (replica: number) => boolean;
  /**
   * Where the frontier's durability work runs (the segment and journal fdatasyncs and the
   * superblock write a commit frontier needs; docs/storage-async-frontier.md). Absent: inline,
   * on the calling thread, as the frontier was always written.
   */
  readonly diskQueue?: DiskQueue;
}

/** What the metadata plane committed about this partition (after each commit touching it). */
export interface PartitionObservation {
  readonly purgeGeneration: bigint;
  readonly createdRevision: bigint;
  readonly deletedUpToOffset: bigint;
}

interface Frontier {
  readonly op: number;
  readonly offset: number;
}

function fullConfig(input: DriverOptions['config']): ConsensusConfig {
  const c = input as ConsensusConfig;
  return c.ticks !== undefined && c.effectsCapacity !== undefined && Object.isFrozen(c) ? c : makeConfig(input);
}

function alwaysLinked(): boolean {
  return true;
}

/** How `openStorage` words an I/O error (anything else it returns is a refusal reason). */
const IO_PREFIX = 'io: ';
const KIND_TO_STORE = { consumer: 'consumer', consumer_group: 'group' } as const;

/** Poll read failures surface as a typed code, never as a crash. */
class ReadFailure extends Error {}

/** storage's PartitionReader as state's MessageLog (its views lent to the reply: no copy). */
class SegmentMessageLog implements MessageLog {
  readonly #driver: PartitionDriver;

  constructor(driver: PartitionDriver) {
    this.#driver = driver;
  }

  firstOffset(): bigint | null {
    const log = this.#driver.storage.log;
    return log.empty ? null : BigInt(log.startOffset);
  }

  lastOffset(): bigint | null {
    const log = this.#driver.storage.log;
    return log.empty ? null : BigInt(log.nextOffset - 1);
  }

  offsetAtTimestamp(timestamp: bigint): bigint | null {
    const poll = this.#driver.storage.reader.byTimestamp(Number(timestamp), 1);
    if (!poll.ok) throw new ReadFailure(poll.error.kind);
    return poll.value.messageCount === 0 ? null : BigInt(poll.value.firstOffset);
  }

  /** The reader lends its views (`lendViews`, set by the driver): parts go out as they were read. */
  read(from: bigint, count: number): MessageRead {
    const poll = this.#driver.storage.reader.byOffset(Number(from), count);
    if (!poll.ok) throw new ReadFailure(poll.error.kind);
    return { parts: pollParts(poll.value), messageCount: poll.value.messageCount, release: poll.value.release };
  }
}

export class PartitionDriver extends GroupDriver {
  readonly config: ConsensusConfig;
  readonly dir: string;
  readonly identity: PartitionIdentity;
  readonly messageLog: MessageLog;
  readonly #options: PartitionDriverOptions;
  readonly #storageOptions: PartitionStorageOptions;
  readonly #adapter: PartitionAdapter;
  #storage: PartitionStorage;
  #frontier: Frontier;
  /** The (view, log_view, commit_max) of the last superblock written (frontier writes repeat it). */
  #durable: DurableVsrState | null;
  readonly #offers = new Map<string, StateOffer>();
  readonly #staging: TransferStaging<PartitionInstaller>;
  readonly #journal: PartitionJournal;
  /** The journal-lost marker is on disk: removed once the core's journal is complete again. */
  #lostMarked = false;
  /** Gives the group back to its preferred replica after a failover (leadership.ts). */
  readonly #handBack: HandBackPolicy;
  readonly #peerLinked: (replica: number) => boolean;
  readonly #diskQueue: DiskQueue | null;
  /** A frontier job is queued or running (at most one: it owns the superblock's next slot). */
  #frontierInFlight = false;

  private constructor(
    options: PartitionDriverOptions, config: ConsensusConfig, replica: Replica, adapter: PartitionAdapter,
    storage: PartitionStorage, storageOptions: PartitionStorageOptions, frontier: Frontier, durable: DurableVsrState | null,
    journal: PartitionJournal,
  ) {
    super({ group: options.group, replica, options });
    this.#options = options;
    this.config = config;
    this.dir = options.dir;
    this.identity = options.identity;
    this.#adapter = adapter;
    this.#storage = storage;
    this.#storageOptions = storageOptions;
    this.#frontier = frontier;
    this.#durable = durable;
    this.#journal = journal;
    this.#handBack = new HandBackPolicy(preferredPrimary(options.group, config.replicaCount));
    this.#peerLinked = options.peerLinked ?? alwaysLinked;
    this.#diskQueue = options.diskQueue ?? null;
    this.messageLog = new SegmentMessageLog(this);
    this.#staging = new TransferStaging(config.messageSizeMax, (entries, commitOp) => {
      const installer = new PartitionInstaller(options.disk, options.dir, entries, BigInt(commitOp));
      const begun = installer.begin();
      return begun.ok ? { installer } : { reason: begun.error.kind === 'invalid' ? begun.error.reason : 'staging_io' };
    });
  }

  /** Opens (creating when missing) and recovers the partition in `options.dir`, then builds the core. */
  static open(options: PartitionDriverOptions): OpenResult<PartitionDriver> {
    const config = fullConfig(options.config);
    const storageOptions: PartitionStorageOptions = { ...PARTITION_STORAGE_DEFAULTS, ...options.storage, lendViews: true };
    let opened = openStorage(options.disk, options.dir, storageOptions);
    // An I/O error (EIO, ENOSPC) is the environment failing, not files that contradict each
    // other: a host wipes a refused partition to rebuild it, never one it merely could not write.
    if (typeof opened === 'string') return { ok: false, reason: opened.startsWith(IO_PREFIX) ? 'partition_io' : 'partition_recovery_refused', detail: opened };
    // `recreate` below destroys the directory: right only for a leftover of an OLDER incarnation
    // (the partition was deleted and re-created while this replica was away). A directory naming
    // a NEWER created revision is none: its purge.gen (which carries no checksum) was read
    // damaged, or the committed metadata is behind an incarnation this replica already hosted.
    // Either way it may hold ops this replica acknowledged and the view it promised; re-created,
    // the group booted brand new and voted with an empty log (seed 300962 of 3: a read flipped
    // bit 5 of byte 12, revision 1 read as 0x2000000001; another op 6 was committed in a view
    // without the one other holder of the committed op 6). Refused, the host's refusal path
    // applies (a wipe keeps the superblock: the promised view, the journal marked lost).
    if (options.createdRevision !== undefined && opened.purgeRecord.createdRevision > options.createdRevision) {
      const detail = `purge.gen names created revision ${opened.purgeRecord.createdRevision}, above ${options.createdRevision}`;
      const incarnationAhead = opened.purgeRecord.createdRevision;
      opened.close();
      return { ok: false, reason: 'partition_recovery_refused', detail, incarnationAhead };
    }
    if (options.createdRevision !== undefined && opened.purgeRecord.createdRevision !== options.createdRevision) {
      // Revision 0 names no incarnation (a directory created before the host passed revisions,
      // or one whose purge.gen is still being written): it takes the committed one and keeps
      // what it holds. Only a recorded OLDER revision marks another incarnation's leftover.
      const fresh = opened.purgeRecord.createdRevision === 0n
        ? adoptRevision(options.disk, opened, storageOptions, options.createdRevision)
        : recreate(options.disk, opened, storageOptions, options.createdRevision);
      if (typeof fresh === 'string') {
        return { ok: false, reason: fresh.startsWith(IO_PREFIX) || fresh.startsWith('recreate:') ? 'partition_io' : 'partition_recovery_refused', detail: fresh };
      }
      opened = fresh;
    }
    let storage = opened;
    const damaged = damagedOffsetFile(storage);
    if (damaged !== null && config.replicaCount > 1) return { ok: false, reason: 'partition_recovery_refused', detail: damaged };
    const sbRead = storage.superblock.read();
    if (!sbRead.ok) return { ok: false, reason: 'partition_io', detail: sbRead.error.message };
    if (sbRead.value.kind === 'refused') return { ok: false, reason: 'partition_recovery_refused', detail: sbRead.value.reason };
    const sb: VsrState | null = sbRead.value.kind === 'ok' ? sbRead.value.state : null;
    if (sb !== null && (sb.clusterId !== config.cluster || sb.replicaId !== config.replica || sb.replicaCount !== config.replicaCount)) {
      return { ok: false, reason: 'partition_recovery_refused', detail: 'superblock identity differs from the configuration' };
    }
    const priorState = options.rejoin === true || sb !== null || storage.log.nextOffset > 0;
    let frontier: Frontier = sb === null ? { op: 0, offset: 0 } : { op: Number(sb.checkpointOp), offset: Number(sb.offsetFrontier) };
    let rewrite = false;
    // A lost journal stays lost until the core caught up (journal-lost-marker.ts): marked before
    // the journal file that replaces it exists.
    let lostMarked = hasJournalLostMarker(options.disk, options.dir);
    if (priorState && !lostMarked && (options.rejoin === true || journalFilesAbsent(options.disk, options.dir))) {
      try {
        writeJournalLostMarker(options.disk, options.dir);
      } catch (error) {
        return { ok: false, reason: 'partition_io', detail: `journal-lost marker: ${(error as Error).message}` };
      }
      lostMarked = true;
    }
    // The journal holds every op above the durable frontier: recover it first (ops > F).
    // A journal whose damage leaves what was acknowledged unbounded counts as lost (as an absent
    // one): the marker is durable before the recovered files are replaced.
    const journalOpened = PartitionJournal.open(options.disk, options.dir, {
      enforceFsync: storageOptions.enforceFsync, frameBytesMax: config.messageSizeMax,
    }, frontier.op, (recovery) => {
      if (!priorState || !recovery.unbounded || lostMarked) return;
      writeJournalLostMarker(options.disk, options.dir);
      lostMarked = true;
    });
    if (!journalOpened.ok) return { ok: false, reason: 'partition_io', detail: `journal: ${journalOpened.error.message}` };
    const { journal, recovery } = journalOpened.value;
    if (storage.log.nextOffset > frontier.offset) {
      if (config.replicaCount === 1 && recovery.absent) {
        // No journal (a data directory from before it existed): the only record of these ops.
        for (const segment of storage.log.segments) {
          const problem = syncFile(options.disk, segment.logPath) ?? syncFile(options.disk, segment.indexPath);
          if (problem !== null) return { ok: false, reason: 'partition_io', detail: problem };
        }
        frontier = { op: frontier.op + batchesFrom(storage, frontier.offset), offset: storage.log.nextOffset };
      } else {
        const cut = cutLog(options.disk, storage, storageOptions, frontier.offset);
        if (typeof cut === 'string') return { ok: false, reason: 'partition_io', detail: cut };
        storage = cut;
      }
      rewrite = true;
    }
    // Below the frontier (also after a cut, should the reopen have found less): the disk lost
    // data it had made durable. Start over empty; peers refill it. The journal was opened above
    // that frontier, so it no longer holds the ops at or below it (compacted, or dropped by this
    // boot's consolidation), which this replica acknowledged: with commit 0 and no record of them
    // it would nack them in a view change (seed 1024031 of 5: a power loss on a faulty disk lost
    // the segments of ops 1..25 it had committed, and its DoViewChange nacked them). The journal
    // counts as lost (blind votes until caught up), marked before the wipe: until the frontier is
    // rewritten below, a crash finds the same shortfall and marks it again.
    if (storage.log.nextOffset !== frontier.offset) {
      if (!lostMarked) {
        try {
          writeJournalLostMarker(options.disk, options.dir);
        } catch (error) {
          return { ok: false, reason: 'partition_io', detail: `journal-lost marker: ${(error as Error).message}` };
        }
        lostMarked = true;
      }
      const wiped = wipe(options.disk, storage, storageOptions);
      if (typeof wiped === 'string') return { ok: false, reason: 'partition_io', detail: wiped };
      storage = wiped;
      frontier = { op: 0, offset: 0 };
      rewrite = true;
    }
    const state = new PartitionState(options.identity);
    const offsets = storage.offsets.snapshot(storage.purgeRecord.generation, BigInt(frontier.offset));
    state.install({
      purgeGeneration: offsets.purgeGeneration,
      nextOffset: offsets.nextOffset,
      consumers: offsets.consumers.map((e) => [e.id, e.offset] as const),
      groups: offsets.groups.map((e) => [e.id, e.offset] as const),
    }, BigInt(frontier.op));
    // A brand-new group starts in the view its preferred replica leads (leadership.ts), the same
    // on every replica; that view is written down before the core may speak in it.
    const initialView = priorState ? 0 : preferredPrimary(options.group, config.replicaCount);
    const durable: DurableVsrState | null = sb === null
      ? (initialView === 0 ? null : { view: initialView, logView: initialView, commitMax: 0, checkpointOp: 0, checkpointChecksum: 0n, logHead: 0 })
      : { view: sb.view, logView: sb.logView, commitMax: Number(sb.commitMax), checkpointOp: 0, checkpointChecksum: 0n, logHead: Number(sb.logHead) };
    if (sb === null && durable !== null) rewrite = true;
    const live: { on: boolean } = { on: false };
    const adapter = new PartitionAdapter(state, options.group, frontier.op, {
      applied: (op) => {
        if (live.on) options.hooks?.applied?.(op);
      },
    });
    if (recovery.damage !== null) options.hooks?.event?.('partition_journal_recovered', `${recovery.damage}: lost through op ${recovery.lostThrough}`);
    const record: RestoreRecord = {
      priorState, superblock: durable, checkpointOp: 0, checkpointChecksum: 0n, journal: recovery.entries, faultyOps: recovery.faultyOps,
      lostThrough: recovery.lostThrough,
      // With prior state and no journal at all (a --fresh rejoin, a wiped partition): nothing
      // bounds what this replica acknowledged.
      journalLost: priorState && (options.rejoin === true || recovery.absent || lostMarked),
      clientTable: null, commit: frontier.op,
    };
    const replica = new Replica({ config, plane: partitionPlane(options.group), stateMachine: adapter, time: options.time, prng: options.prng, restore: record });
    live.on = true;
    const driver = new PartitionDriver(options, config, replica, adapter, storage, storageOptions, frontier, durable, journal);
    driver.#lostMarked = lostMarked;
    if (rewrite && !driver.#writeFrontier(frontier)) return { ok: false, reason: 'partition_io', detail: 'frontier superblock write failed' };
    driver.drain();
    return { ok: true, driver };
  }

  // -------------------------------------------------------------------------------------------
  // Partition host duties.

  get state(): PartitionState {
    return this.#adapter.state;
  }

  get storage(): PartitionStorage {
    return this.#storage;
  }

  /** The durable commit frontier (op, offset). */
  get frontier(): Frontier {
    return this.#frontier;
  }

  /** PollMessages on this partition (auto-commit only when `primary`). */
  poll(request: PollRequest, primary: boolean): { ok: true; reply: PollReply } | { ok: false; code: number } {
    try {
      const result = pollPartition(this.#adapter.state, this.messageLog, request, primary);
      if (result.ok && primary && request.autoCommit && result.reply.lastOffset !== null) {
        this.#storeOffset(request.consumer, this.#adapter.state.offsets.get(request.consumer) ?? result.reply.lastOffset);
      }
      return result;
    } catch (error) {
      if (!(error instanceof ReadFailure)) throw error;
      this.hooks.event?.('poll_read_failed', error.message);
      return { ok: false, code: ErrorCode.CannotReadMessage };
    }
  }

  /** NoAck consumer-offset write on the partition primary: state + offset file, no consensus. */
  applyOffsetWriteLocally(operation: number, body: Uint8Array): Outcome {
    const outcome = this.#adapter.state.applyOffsetWriteLocally(operation, body);
    if (outcome.ok) this.#persistOffsetOp(operation, body);
    return outcome;
  }

  /** Poll auto-commit outside `poll` (keeps the maximum). */
  autoCommit(consumer: ConsumerRef, offset: bigint): void {
    if (this.halted) return;
    this.#adapter.state.autoCommit(consumer, offset);
    const stored = this.#adapter.state.offsets.get(consumer);
    if (stored !== undefined) this.#storeOffset(consumer, stored);
  }

  /**
   * The metadata plane committed something about this partition: a higher purge generation
   * resets it (storage purge, offsets restart at 0); a higher delete watermark deletes the
   * sealed segments wholly below it.
   */
  observePartition(observation: PartitionObservation): void {
    if (this.halted) return;
    const state = this.#adapter.state;
    if (observation.purgeGeneration > state.purgeGeneration) {
      this.drain();
      this.#settleDisk();
      if (this.halted) return;
      const purged = this.#storage.purge(observation.purgeGeneration, observation.createdRevision);
      if (!purged.ok) {
        this.stop('partition_io', `purge: ${purged.error.message}`);
        return;
      }
      state.observePurge(observation.purgeGeneration);
      this.#writeFrontier({ op: this.#adapter.lastApplied, offset: 0 });
    }
    if (observation.deletedUpToOffset > state.deletedUpToOffset) {
      state.observeDeleteWatermark(observation.deletedUpToOffset);
      const log = this.#storage.log;
      let count = 0;
      for (const segment of log.segments) {
        if (!segment.sealed || BigInt(segment.endOffset + 1) > observation.deletedUpToOffset) break;
        count++;
      }
      if (count > 0) {
        const deleted = deleteSegments(log, count);
        if (!deleted.ok) this.stop('partition_io', `delete segments: ${deleted.error.message}`);
      }
    }
  }

  /** One retention pass (expiry / size), from a host timer. */
  applyRetention(policy: RetentionPolicy, nowMicros: number): number {
    if (this.halted) return 0;
    const outcome = applyRetention(this.#storage.log, policy, nowMicros);
    if (!outcome.ok) {
      this.stop('partition_io', `retention: ${outcome.error.message}`);
      return 0;
    }
    return outcome.value.expired + outcome.value.oversize;
  }

  counters(): PartitionCounters {
    const log = this.#storage.log;
    return {
      currentOffset: this.#adapter.state.currentOffset,
      segmentsCount: log.segments.length,
      sizeBytes: BigInt(log.sizeBytes),
      messagesCount: BigInt(log.nextOffset - log.startOffset),
    };
  }

  /** After the last flush (`close`): sync the log, record the frontier, close files. */
  protected closeFiles(): void {
    this.#staging.abortAll();
    this.#settleDisk();
    if (this.fatal === null) this.#syncAndRecordFrontier();
    // The last frontier may have released journal files: their removal runs before the files
    // close, so a reopen of this directory never reads a file the disk thread is unlinking.
    this.#settleDisk();
    this.#storage.close();
    this.#journal.close();
  }

  /**
   * The partition was deleted: closed without a flush, files closed, its directory removed
   * (`removePartitionDir`: renamed to a tombstone, then `rm -r`). A disk error on the way does not
   * stop the replica: the deletion is committed, the files hold nothing the cluster needs, and
   * what is left is finished later (a re-creation of the same ids, or the boot sweep). It is
   * reported (`partition_delete_deferred`) and returned.
   */
  destroy(): IoResult<void> {
    this.shut();
    // A queued frontier job names files in this directory: it runs (and is ignored) first.
    this.#settleDisk();
    this.#staging.abortAll();
    this.#storage.close();
    this.#journal.close();
    const removed = removePartitionDir(this.#options.disk, this.dir);
    if (!removed.ok) this.hooks.event?.('partition_delete_deferred', removed.error.message);
    return removed;
  }

  // -------------------------------------------------------------------------------------------
  // Plane effects.

  /**
   * Partition prepare bodies carry no body seal on the wire (§2.4, §13.2: the identity covers the
   * header only), and the core journals REPAIRED prepares without the live path's `verify`. A bit
   * flipped in transit would then be committed as the canonical body. So a RepairPrepare is
   * admitted only when its body verifies: a SendMessages batch (every frame checksum and the batch
   * checksum), an offset write's own seal; live prepares get the same checks from the adapter.
   */
  /** Leadership hand-back after a failover, once the preferred replica is back and caught up. */
  protected override afterCoreTick(): void {
    // The core reports a hand-back itself (a `view_change` event and the hand_back_started mark).
    this.#handBack.tick(this.replica, this.#peerLinked);
  }

  protected override admitFrame(frame: Uint8Array, ingress: FrameIngress): string | null {
    if (frame.length > FRAME_HEADER_SIZE && frame[OFFSET_COMMAND] === Command.RepairPrepare) {
      const problem = repairBodyProblem(frame);
      if (problem !== null) return problem;
    }
    this.#staging.observe(frame, ingress.validated);
    return null;
  }

  /** Committed batches (one gathered write per run) and offset files, before any effect. */
  protected override beforeEffects(): void {
    if (this.#lostMarked && !this.replica.journalIncomplete) this.#clearLostMarker();
    if (!this.#adapter.hasWork) return;
    const work = this.#adapter.takeStorageWork();
    let run: Uint8Array[] = [];
    let synced = false;
    let syncDue = false;
    const deferSync = this.#diskQueue !== null;
    const flushRun = (): boolean => {
      if (run.length === 0) return true;
      const appended = this.#storage.log.append(run, deferSync);
      run = [];
      if (!appended.ok) {
        this.stop('partition_io', `append: ${appended.error.message}`);
        return false;
      }
      if (appended.value.synced || appended.value.sealed > 0) synced = true;
      if (appended.value.syncDue) syncDue = true;
      return true;
    };
    for (const w of work) {
      if (w.kind === 'batch') {
        run.push(w.bytes);
        continue;
      }
      if (!flushRun()) return;
      this.#performOffsetWork(w);
      if (this.fatal !== null) return;
    }
    if (!flushRun()) return;
    assert(
      BigInt(this.#storage.log.nextOffset) === this.#adapter.state.nextOffset,
      `partition log end ${this.#storage.log.nextOffset} != state next offset ${this.#adapter.state.nextOffset}`,
    );
    if (synced) this.#syncAndRecordFrontier();
    else if (syncDue) this.#submitFrontierJob();
  }

  /** A failed unlink keeps the marker (the next boot abstains needlessly, never unsafely) and retries. */
  #clearLostMarker(): void {
    try {
      removeJournalLostMarker(this.#options.disk, this.dir);
      this.#lostMarked = false;
    } catch (error) {
      this.hooks.event?.('journal_lost_marker_kept', (error as Error).message);
    }
  }

  /** The journal's group fdatasync (enforce_fsync: appends complete after it). */
  protected override syncJournal(): string | null {
    const synced = this.#journal.sync();
    return synced.ok ? null : synced.error.message;
  }

  protected performStorage(effect: Effect): Completion | null {
    switch (effect.kind) {
      case 'journal_append': {
        // In the OS before the core may vouch for it; with enforce_fsync after the group fdatasync.
        const appended = this.#journal.append(effect.frame);
        if (!appended.ok) {
          this.stop('partition_io', `journal append: ${appended.error.message}`);
          return null;
        }
        return this.#storageOptions.enforceFsync ? null : { kind: 'journal_written', op: effect.op, checksum: effect.checksum, ok: true };
      }
      case 'journal_truncate': {
        const cut = this.#journal.truncateFrom(effect.fromOp, effect.faultyThrough);
        if (!cut.ok) this.stop('partition_io', `journal truncate: ${cut.error.message}`);
        return null;
      }
      case 'superblock_write':
        this.#settleDisk();
        if (this.halted) return null;
        return { kind: 'superblock_written', state: effect.state, ok: this.#writeSuperblock(effect.state) };
      case 'transfer_offer':
        return this.#offer(effect);
      case 'transfer_read':
        return this.#read(effect);
      case 'transfer_offer_dropped':
        this.#offers.delete(offerKey(effect.requester, effect.nonce));
        return null;
      case 'transfer_stage':
        this.#staging.stage(effect.nonce, effect.artifact, effect.offset, effect.bytes);
        return null;
      case 'transfer_discard':
        this.#staging.discard(effect.nonce);
        return null;
      case 'transfer_install':
        // The install replaces the files a queued frontier job names.
        this.#settleDisk();
        if (this.halted) return null;
        return this.#install(effect.nonce, effect.manifest, effect.commitOp, effect.journalHead);
      default:
        assert(false, `partition driver: unexpected effect ${effect.kind}`);
    }
  }

  // -------------------------------------------------------------------------------------------

  #performOffsetWork(w: Exclude<StorageWork, { kind: 'batch' }>): void {
    if (w.kind === 'store_offset') this.#storeOffset(w.consumer, w.offset);
    else {
      const deleted = this.#storage.offsets.delete(KIND_TO_STORE[w.consumer.kind], w.consumer.key);
      if (!deleted.ok) this.stop('partition_io', `offset delete: ${deleted.error.message}`);
    }
  }

  #persistOffsetOp(operation: number, body: Uint8Array): void {
    const state = this.#adapter.state;
    const consumer = offsetConsumerOf(operation, body);
    if (consumer === null) return;
    // The state holds the outcome (set, or deleted): the file follows it.
    const value = state.offsets.get(consumer);
    if (value === undefined) {
      const deleted = this.#storage.offsets.delete(KIND_TO_STORE[consumer.kind], consumer.key);
      if (!deleted.ok) this.stop('partition_io', `offset delete: ${deleted.error.message}`);
    } else this.#storeOffset(consumer, value);
  }

  #storeOffset(consumer: ConsumerRef, offset: bigint): void {
    const stored = this.#storage.offsets.store(KIND_TO_STORE[consumer.kind], consumer.key, offset);
    if (!stored.ok) this.stop('partition_io', `offset store: ${stored.error.message}`);
  }

  #syncAndRecordFrontier(): void {
    // The inline path writes the superblock: a queued job holds its next slot, so it runs first.
    this.#settleDisk();
    if (this.fatal !== null) return;
    const synced = this.#storage.log.sync();
    if (!synced.ok) {
      this.stop('partition_io', `sync: ${synced.error.message}`);
      return;
    }
    const journalSynced = this.#journal.sync();
    if (!journalSynced.ok) {
      this.stop('partition_io', `journal sync: ${journalSynced.error.message}`);
      return;
    }
    // The frontier claims the offset ops at or below it as durable too.
    const offsetsSynced = this.#storage.offsets.sync();
    if (!offsetsSynced.ok) {
      this.stop('partition_io', `offsets sync: ${offsetsSynced.error.message}`);
      return;
    }
    const next: Frontier = { op: this.#adapter.lastApplied, offset: this.#storage.log.nextOffset };
    if (next.op === this.#frontier.op && next.offset === this.#frontier.offset) return;
    this.#writeFrontier(next);
  }

  /**
   * The asynchronous `#syncAndRecordFrontier` (a `diskQueue`): the offset files are synced here
   * (nothing to do unless a consumer committed), then one job fdatasyncs the active segment and
   * the journal and writes the superblock with the frontier captured NOW, from batches already in
   * the OS. The frontier moves, and the journal compacts, only when the job ran
   * (`#frontierDone`). One job at a time; a window that filled meanwhile is submitted after it.
   */
  #submitFrontierJob(): void {
    const queue = this.#diskQueue;
    assert(queue !== null, 'partition driver: frontier job without a disk queue');
    if (this.#frontierInFlight || this.halted) return;
    const offsetsSynced = this.#storage.offsets.sync();
    if (!offsetsSynced.ok) {
      this.stop('partition_io', `offsets sync: ${offsetsSynced.error.message}`);
      return;
    }
    const ticket = this.#storage.log.syncTicket();
    const next: Frontier = { op: this.#adapter.lastApplied, offset: this.#storage.log.nextOffset };
    const steps: { kind: 'sync_file'; path: string }[] = [...ticket.paths, this.#journal.activePath].map((path) => ({ kind: 'sync_file', path }));
    let prepared: PreparedSuperblockWrite | null = null;
    if (next.op !== this.#frontier.op || next.offset !== this.#frontier.offset) {
      const record = this.#prepareRecord(this.#durableRecordState(), next);
      if (record === null) return;
      prepared = record;
    }
    this.#frontierInFlight = true;
    const writes = prepared === null ? [] : [{ kind: 'write_atomic' as const, path: prepared.path, bytes: prepared.record }];
    queue.submit({ steps: [...steps, ...writes] }, (result) => this.#frontierDone(result, steps.length, ticket, prepared, next));
  }

  /** A frontier job ran (on the submitting thread, in submission order). */
  #frontierDone(result: DiskJobResult, syncSteps: number, ticket: LogSyncTicket, prepared: PreparedSuperblockWrite | null, next: Frontier): void {
    this.#frontierInFlight = false;
    // Stopped meanwhile: nothing more is written. (Closing settles its jobs before it closes the
    // files, so a job done while closing still records what it made durable.)
    if (this.fatal !== null) return;
    if (result.ok || result.step >= syncSteps) this.#storage.log.synced(ticket);
    if (!result.ok) {
      // No frontier. Not retried from here (a disk that keeps failing would loop): the next
      // commit step that finds the window due submits again, as the inline path retries.
      if (result.step >= syncSteps) {
        this.hooks.event?.('superblock_write_failed', result.error.message);
      } else if (result.error.code === 'ENOENT' && result.error.syscall.startsWith('open')) {
        // A segment retention removed after the job was built: nothing was claimed.
        this.hooks.event?.('frontier_job_abandoned', result.error.message);
      } else {
        this.stop('partition_io', `frontier sync: ${result.error.message}`);
      }
      return;
    }
    if (prepared !== null) {
      this.#storage.superblock.confirm(prepared);
      this.#advanceFrontier(next);
    }
    // A window that filled while the job ran (each job releases the window it covered, so this ends).
    if (!this.halted && this.#storage.log.syncDue) this.#submitFrontierJob();
  }

  /** Every queued frontier job has run and been accounted for (before anything else touches the superblock or the files). */
  #settleDisk(): void {
    if (this.#diskQueue !== null && this.#diskQueue.pending > 0) this.#diskQueue.barrier();
  }

  /** Writes the superblock with the last durable view and a new frontier. */
  #writeFrontier(frontier: Frontier): boolean {
    const ok = this.#writeRecord(this.#durableRecordState(), frontier);
    if (ok) this.#advanceFrontier(frontier);
    return ok;
  }

  /** The last durable (view, log_view, commit_max, log_head): a frontier write repeats it. */
  #durableRecordState(): DurableVsrState {
    const d = this.#durable;
    return { view: d?.view ?? 0, logView: d?.logView ?? 0, commitMax: d?.commitMax ?? 0, checkpointOp: 0, checkpointChecksum: 0n, logHead: d?.logHead ?? 0 };
  }

  /**
   * The durable frontier moved: the journal forgets what the segments now hold. With a disk queue
   * the files it let go are unlinked by a job behind the one that moved the frontier, off this
   * thread; a removal that fails or never runs (a crash) leaves a file the next boot drops.
   */
  #advanceFrontier(frontier: Frontier): void {
    this.#frontier = frontier;
    const queue = this.#diskQueue;
    if (queue === null) {
      const compacted = this.#journal.compact(frontier.op);
      if (!compacted.ok) this.stop('partition_io', `journal compaction: ${compacted.error.message}`);
      return;
    }
    const released = this.#journal.release(frontier.op);
    if (!released.ok) {
      this.stop('partition_io', `journal compaction: ${released.error.message}`);
      return;
    }
    if (released.value.length === 0) return;
    const steps: DiskJobStep[] = released.value.map((path) => ({ kind: 'remove_file', path }));
    steps.push({ kind: 'sync_dir', path: this.#journal.dir });
    queue.submit({ steps }, (result) => {
      if (!result.ok) this.hooks.event?.('journal_compaction_failed', result.error.message);
    });
  }

  /** A superblock write the core asked for: it also records the current frontier. */
  #writeSuperblock(state: DurableVsrState): boolean {
    const offsetsSynced = this.#storage.offsets.sync();
    const synced = offsetsSynced.ok ? this.#storage.log.sync() : offsetsSynced;
    const frontier: Frontier = synced.ok ? { op: this.#adapter.lastApplied, offset: this.#storage.log.nextOffset } : this.#frontier;
    const ok = this.#writeRecord(state, frontier);
    if (ok) {
      this.#durable = state;
      this.#advanceFrontier(frontier);
    }
    return ok;
  }

  #writeRecord(state: DurableVsrState, frontier: Frontier): boolean {
    assert(!this.#frontierInFlight, 'partition driver: a superblock write while a frontier job holds its next slot');
    const written = this.#storage.superblock.write(this.#vsrRecord(state, frontier));
    if (!written.ok) this.hooks.event?.('superblock_write_failed', written.error.message);
    return written.ok;
  }

  /** `#writeRecord` for a disk job: the record and its slot, or null (a read failed: no frontier). */
  #prepareRecord(state: DurableVsrState, frontier: Frontier): PreparedSuperblockWrite | null {
    const prepared = this.#storage.superblock.prepare(this.#vsrRecord(state, frontier));
    if (!prepared.ok) {
      this.hooks.event?.('superblock_write_failed', prepared.error.message);
      return null;
    }
    return prepared.value;
  }

  #vsrRecord(state: DurableVsrState, frontier: Frontier): VsrState {
    return {
      clusterId: this.config.cluster,
      replicaId: this.config.replica,
      replicaCount: this.config.replicaCount,
      view: state.view,
      logView: state.logView,
      commitMax: BigInt(state.commitMax),
      checkpointOp: BigInt(frontier.op),
      checkpointChecksum: 0n,
      offsetFrontier: BigInt(frontier.offset),
      logHead: BigInt(state.logHead),
    };
  }

  #offer(effect: Extract<Effect, { kind: 'transfer_offer' }>): Completion {
    const refused = (transient: boolean): Completion =>
      ({ kind: 'offer_built', requester: effect.requester, nonce: effect.nonce, entries: null, transient });
    const log = this.#storage.log;
    const state = this.#adapter.state;
    // The offer must be the state at commitOp exactly: the log end is the applied state's.
    if (this.#adapter.lastApplied !== effect.commitOp || BigInt(log.nextOffset) !== state.nextOffset) return refused(true);
    const built = buildPartitionOffer(log, this.#storage.offsets, state.purgeGeneration, BigInt(effect.commitOp));
    if (!built.ok) {
      this.hooks.event?.('transfer_offer_refused', built.error.kind);
      return refused(true);
    }
    this.#offers.set(offerKey(effect.requester, effect.nonce), built.value);
    return { kind: 'offer_built', requester: effect.requester, nonce: effect.nonce, entries: built.value.entries, transient: false };
  }

  #read(effect: Extract<Effect, { kind: 'transfer_read' }>): Completion {
    const offer = this.#offers.get(offerKey(effect.requester, effect.nonce));
    const base = { kind: 'chunk_read', requester: effect.requester, nonce: effect.nonce, artifact: effect.artifact, offset: effect.offset } as const;
    if (offer === undefined) return { ...base, bytes: null };
    const chunk = offer.chunk(effect.artifact, effect.offset, effect.len, this.config.stateChunkMax);
    return { ...base, bytes: chunk.ok ? chunk.value.slice() : null };
  }

  #install(nonce: bigint, manifest: readonly ManifestEntry[], commitOp: number, journalHead: number): Completion {
    const taken = this.#staging.take(nonce, manifest, commitOp);
    if ('reason' in taken) return { kind: 'install_done', nonce, ok: false, failure: 'verify', reason: taken.reason };
    const installer = taken.installer;
    if (commitOp <= this.#adapter.lastApplied) {
      // Not ahead: the local state is a superset; keep it (the core keeps its own too).
      installer.abort();
      return { kind: 'install_done', nonce, ok: true, snapshotOp: commitOp, checkpointChecksum: 0n, clientTable: null, tableFrontier: 0 };
    }
    const verified = installer.verify();
    if (!verified.ok) {
      installer.abort();
      const e = verified.error;
      return e.kind === 'invalid'
        ? { kind: 'install_done', nonce, ok: false, failure: 'verify', reason: e.reason }
        : { kind: 'install_done', nonce, ok: false, failure: 'install', reason: e.fault.message };
    }
    const summary = verified.value;
    this.#offers.clear();
    this.#storage.close();
    const committed = installer.commit(this.#storageOptions);
    if (!committed.ok) {
      const e = committed.error;
      if (e.kind === 'not_applied') return this.#installNotApplied(nonce, e.reason);
      this.stop('transfer_io', e.kind === 'invalid' ? e.reason : e.fault.message);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    const reopened = openStorage(this.#options.disk, this.dir, this.#storageOptions);
    if (typeof reopened === 'string') {
      this.stop('transfer_io', `reopen after install: ${reopened}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    this.#storage = reopened;
    const refused = superblockRefusal(reopened);
    if (refused !== null) {
      this.stop(refused.reason, `reopen after install: ${refused.detail}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    this.#adapter.state.install({
      purgeGeneration: summary.offsets.purgeGeneration,
      nextOffset: BigInt(summary.nextOffset),
      consumers: summary.offsets.consumers.map((e) => [e.id, e.offset] as const),
      groups: summary.offsets.groups.map((e) => [e.id, e.offset] as const),
    }, BigInt(commitOp));
    this.#adapter.resetTo(commitOp);
    // The journal above the installed state is dropped; what it held may have been acknowledged.
    const reset = this.#journal.reset(commitOp, journalHead);
    if (!reset.ok) {
      this.stop('transfer_io', `journal reset after install: ${reset.error.message}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    if (!this.#writeFrontier({ op: commitOp, offset: summary.nextOffset })) {
      this.stop('transfer_io', 'frontier write after install failed');
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    this.hooks.installed?.({ group: this.group, snapshotOp: commitOp, commitOp, snapshotPayload: null });
    return { kind: 'install_done', nonce, ok: true, snapshotOp: commitOp, checkpointChecksum: 0n, clientTable: null, tableFrontier: 0 };
  }

  /**
   * An install that stopped before it touched the partition directory: the old storage is
   * reopened as it was and the core abandons the transfer to repair (a later offer may be taken).
   */
  #installNotApplied(nonce: bigint, reason: string): Completion {
    const reopened = openStorage(this.#options.disk, this.dir, this.#storageOptions);
    if (typeof reopened === 'string') {
      this.stop('transfer_io', `reopen after an install not applied (${reason}): ${reopened}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    this.#storage = reopened;
    const refused = superblockRefusal(reopened);
    if (refused !== null) {
      this.stop(refused.reason, `reopen after an install not applied (${reason}): ${refused.detail}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    // The reopen ran boot recovery: on the faulty disk that failed the marker it may have cut a
    // tail it could not read back. Memory must not run ahead of the log it serves.
    if (BigInt(reopened.log.nextOffset) !== this.#adapter.state.nextOffset) {
      this.stop('transfer_io', `reopen after an install not applied (${reason}): log ends at ${reopened.log.nextOffset}, state at ${this.#adapter.state.nextOffset}`);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    return { kind: 'install_done', nonce, ok: false, failure: 'install', reason };
  }
}

/**
 * The superblock of partition storage (re)opened under a driver, read before anything writes it.
 * A slot that no longer verifies (a misdirected or torn write on a faulty disk, seen only now
 * because the store that wrote it never re-read it) is what boot refuses: the same verdict here,
 * `partition_recovery_refused` (the partition is rebuilt from peers), and never a write over it
 * (`SuperblockStore.write` asserts after a refused read: simulator seed 1011870 of 3 crashed
 * there after a state transfer's install).
 */
function superblockRefusal(storage: PartitionStorage): { readonly reason: FatalReason; readonly detail: string } | null {
  const read = storage.superblock.read();
  if (!read.ok) return { reason: 'partition_io', detail: `superblock: ${read.error.message}` };
  if (read.value.kind === 'refused') return { reason: 'partition_recovery_refused', detail: read.value.reason };
  return null;
}

/** Why a RepairPrepare's body cannot be what its primary journaled (null: it can). */
function repairBodyProblem(frame: Uint8Array): string | null {
  const size = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint32(OFFSET_SIZE, true);
  if (size > frame.length || size <= FRAME_HEADER_SIZE) return null; // the core's header validation judges it
  const operation = frame[PREPARE_LAYOUT.operation.offset];
  const body = frame.subarray(FRAME_HEADER_SIZE, size);
  if (operation !== Operation.SendMessages) {
    const problem = offsetWriteBodyProblem(operation as number, body);
    return problem === null ? null : `repair_body_${problem}`;
  }
  const verdict = validateBatch(body);
  if (!verdict.ok) return `repair_batch_${verdict.reason}`;
  return verdict.value.messageCount === 0 ? 'repair_batch_empty' : null;
}

/**
 * A consumer-offset file that does not verify (bit rot, a misdirected or torn write), or null.
 * Its value may be one the durable frontier vouches for, and no later op need rewrite it: a
 * replica that went on without it would differ from its peers for good. In a cluster the
 * partition is refused (the host wipes it and a peer rebuilds it, offsets included); a single
 * replica has no peer and serves without the offset (docs/storage-recovery.md).
 */
function damagedOffsetFile(storage: PartitionStorage): string | null {
  const fault = storage.report.offsetFaults.find((f) => f.reason.startsWith('offset_file_'));
  return fault === undefined ? null : `offset file ${fault.kind}/${fault.name}: ${fault.reason}`;
}

function offerKey(requester: number, nonce: bigint): string {
  return `${requester}:${nonce}`;
}

function offsetConsumerOf(operation: number, body: Uint8Array): ConsumerRef | null {
  if (operation === Operation.StoreConsumerOffset) {
    const req = decodeStoreOffsetBody(body);
    return req.ok ? req.value.consumer : null;
  }
  if (operation === Operation.DeleteConsumerOffset) {
    const req = decodeDeleteOffsetBody(body);
    return req.ok ? req.value : null;
  }
  return null;
}

function openStorage(disk: Disk, dir: string, options: PartitionStorageOptions): PartitionStorage | string {
  const opened = PartitionStorage.open(disk, dir, options);
  if (opened.ok) return opened.value;
  return opened.error.kind === 'io' ? `${IO_PREFIX}${opened.error.fault.message}` : opened.error.reason;
}

/** Batches at or above `offset` in the log (one index entry per batch). */
function batchesFrom(storage: PartitionStorage, offset: number): number {
  let count = 0;
  for (const segment of storage.log.segments) {
    if (segment.endOffset < offset) continue;
    const index = storage.log.indexOf(segment);
    for (let i = 0; i < index.length; i++) if (index.offsetAt(i) >= offset) count++;
  }
  return count;
}

/**
 * Cuts the log back so it ends at `offset` (a batch boundary: a recorded frontier): segments
 * starting above it are deleted, the one holding it is truncated at that batch (its index too),
 * then the partition is reopened (the last segment becomes the active one).
 */
function cutLog(disk: Disk, storage: PartitionStorage, options: PartitionStorageOptions, offset: number): PartitionStorage | string {
  const log = storage.log;
  let cut: { logPath: string; indexPath: string; position: number; entries: number } | null = null;
  const remove: string[] = [];
  for (const segment of log.segments) {
    // Above the frontier: gone. Starting AT it: gone too, unless nothing lies below (then it is
    // emptied and stays, so the log keeps starting at the frontier).
    const first = segment === log.segments[0];
    if (segment.startOffset > offset || (segment.startOffset === offset && !first)) {
      remove.push(segment.logPath, segment.indexPath);
      continue;
    }
    if (segment.endOffset < offset) continue;
    const index = log.indexOf(segment);
    let k = 0;
    while (k < index.length && index.offsetAt(k) < offset) k++;
    if (k < index.length && index.offsetAt(k) !== offset) return `frontier ${offset} is not a batch boundary`;
    cut = { logPath: segment.logPath, indexPath: segment.indexPath, position: k < index.length ? index.positionAt(k) : segment.size, entries: k };
  }
  storage.close();
  try {
    for (const path of remove) if (disk.stat(path) !== null) disk.unlink(path);
    if (cut !== null) {
      for (const [path, length] of [[cut.logPath, cut.position], [cut.indexPath, cut.entries * INDEX_ENTRY_SIZE]] as const) {
        const fd = disk.open(path, 'readwrite');
        try {
          if (disk.size(fd) > length) disk.truncate(fd, length);
          disk.fdatasync(fd);
        } finally {
          disk.close(fd);
        }
      }
    }
    disk.fsyncDir(storage.dir);
  } catch (error) {
    return `cut to ${offset}: ${(error as Error).message}`;
  }
  return openStorage(disk, storage.dir, options);
}

/** A directory that names no incarnation yet: the committed revision is recorded, nothing removed. */
function adoptRevision(disk: Disk, storage: PartitionStorage, options: PartitionStorageOptions, createdRevision: bigint): PartitionStorage | string {
  const generation = storage.purgeRecord.generation;
  storage.close();
  try {
    writePurgeRecord(disk, storage.dir, { generation, createdRevision });
  } catch (error) {
    return `recreate: ${(error as Error).message}`;
  }
  return openStorage(disk, storage.dir, options);
}

/**
 * A directory of an older incarnation of this group (its purge.gen records an older created
 * revision: deleted and re-created while this replica was away, or killed between the metadata
 * commit and the host's removal): everything is removed, the revision recorded, and the
 * partition reopened empty.
 */
function recreate(disk: Disk, storage: PartitionStorage, options: PartitionStorageOptions, createdRevision: bigint): PartitionStorage | string {
  storage.close();
  // As a deletion does (partition-removal.ts): never half-removed under the live name.
  const removed = removePartitionDir(disk, storage.dir);
  if (!removed.ok) return `recreate: ${removed.error.message}`;
  const reopened = openStorage(disk, storage.dir, options);
  if (typeof reopened === 'string') return reopened;
  try {
    writePurgeRecord(disk, storage.dir, { generation: reopened.purgeRecord.generation, createdRevision });
  } catch (error) {
    return `recreate: ${(error as Error).message}`;
  }
  reopened.close();
  return openStorage(disk, storage.dir, options);
}

/**
 * Wipes a partition whose files refused to open so it can be rebuilt from peers (repair / state
 * transfer), keeping what it must not forget: its superblock (the view it promised, so it boots
 * ceded and with its journal marked incomplete) and its identity (`purge.gen`, rewritten with the
 * committed purge generation and created revision). Reopen it with `PartitionDriver.open`.
 *
 * The superblock's frontier goes: it vouches for files that are about to be removed. An empty log
 * matches a frontier at offset 0, so a frontier vouching only for offset writes (or for writes
 * after a purge) would otherwise reopen at its op with an empty offset table and never apply
 * those ops again (simulator seed 1028171 of 5). It is reset first: a crash part-way leaves a
 * frontier that claims less than the files hold, never more.
 */
export function wipePartition(disk: Disk, dir: string, record: { readonly generation: bigint; readonly createdRevision: bigint }): string | null {
  try {
    const forgotten = forgetFrontier(new SuperblockStore(disk, dir));
    if (forgotten !== null) return `wipe ${dir}: ${forgotten}`;
    for (const name of disk.readdir(dir)) {
      if (name === 'superblock.a' || name === 'superblock.b') continue;
      const path = joinPath(dir, name);
      if (disk.stat(path)?.kind === 'directory') disk.removeTree(path);
      else disk.unlink(path);
    }
    disk.fsyncDir(dir);
    writePurgeRecord(disk, dir, record);
    return null;
  } catch (error) {
    return `wipe ${dir}: ${(error as Error).message}`;
  }
}

/** Rewrites the superblock with frontier (0, 0), the rest kept. A refused superblock stays (the reopen refuses again). */
function forgetFrontier(superblock: SuperblockStore): string | null {
  const read = superblock.read();
  if (!read.ok) return read.error.message;
  if (read.value.kind !== 'ok') return null;
  const state = read.value.state;
  if (state.checkpointOp === 0n && state.offsetFrontier === 0n) return null;
  const written = superblock.write({ ...state, checkpointOp: 0n, offsetFrontier: 0n });
  return written.ok ? null : written.error.message;
}

/**
 * Removes every segment and offset file, then reopens empty. The superblock (the view it promised)
 * and `purge.gen` (its identity: created revision, purge generation) stay.
 */
function wipe(disk: Disk, storage: PartitionStorage, options: PartitionStorageOptions): PartitionStorage | string {
  storage.close();
  try {
    for (const name of disk.readdir(storage.dir)) {
      if (parseSegmentFileName(name) === null && name !== 'offsets') continue;
      const path = joinPath(storage.dir, name);
      if (disk.stat(path)?.kind === 'directory') disk.removeTree(path);
      else disk.unlink(path);
    }
    disk.fsyncDir(storage.dir);
  } catch (error) {
    return `wipe: ${(error as Error).message}`;
  }
  return openStorage(disk, storage.dir, options);
}
