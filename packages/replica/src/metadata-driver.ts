/**
 * `MetadataDriver`: the metadata group (`1 << 63`) on its durable storage: WAL (`journal.wal`),
 * superblock pair, `snapshot.bin`; the `MetadataState` behind the core's StateMachine port.
 *
 * Boot (`open`, §9.4 + §5.10): recoverMetadata → state machine from snapshot.bin (or empty) →
 * RestoreRecord → `new Replica({restore})`, which replays the committed, hash-chained journal
 * through the adapter. WAL interior corruption: `repair` mode when n > 1 (faulty slots reported to
 * the core, repaired from peers), `refuse` when n = 1 (nobody could repair it).
 */
import {
  type ClientRequest, type Completion, type ConsensusConfig, type DurableVsrState, type Effect, type FrameIngress, type RestoreRecord,
  type RequestCheckKind, type SessionRequest, Replica, makeConfig, metadataPlane, METADATA_GROUP_ID,
} from '@shoal/consensus';
import { PREPARE_LAYOUT, PrepareHeaderView, decodeClientTable, type ManifestEntry, validateHeader } from '@shoal/protocol';
import { MetadataState, type MetadataStateOptions, encodeSnapshot, restoreSnapshot } from '@shoal/state';
import { assert } from '@shoal/stdx';
import {
  type Disk, type MetadataJournal, MetadataInstaller, type MetadataRestore, type SnapshotFile, type StateOffer, type SuperblockStore,
  buildMetadataOffer, recoverMetadata, snapshotTrailer,
} from '@shoal/storage';
import { decodeClientTableSnapshot, encodeClientTableSnapshot } from './client-table-snapshot.js';
import { GroupDriver } from './group-driver.js';
import { MetadataAdapter } from './metadata-adapter.js';
import type { AppliedOp, DriverOptions, OpenResult } from './ports.js';
import { TransferStaging } from './transfer-staging.js';

export interface MetadataDriverOptions extends DriverOptions {
  /** `<root>/metadata`. */
  readonly dir: string;
  /** Interior WAL corruption: `auto` = repair when replicaCount > 1, refuse when 1 (default). */
  readonly walMode?: 'auto' | 'refuse' | 'repair';
  /** Random non-zero u128 per boot (default: drawn from `prng`). */
  readonly incarnation?: bigint;
  /** Must be identical on every replica. */
  readonly stateOptions?: MetadataStateOptions;
  /** Report the boot replay's applies through `hooks.applied` too (default false: the host takes the state after open). */
  readonly reportBootReplay?: boolean;
}

/** §7.3 preflight of a request, as `checkRequest` reports it. */
export type { RequestCheckKind };

function fullConfig(input: DriverOptions['config']): ConsensusConfig {
  const c = input as ConsensusConfig;
  return c.ticks !== undefined && c.effectsCapacity !== undefined && Object.isFrozen(c) ? c : makeConfig(input);
}

function nonZeroU128(draw: () => bigint): bigint {
  for (;;) {
    const value = draw();
    if (value !== 0n) return value;
  }
}

interface Storage {
  readonly journal: MetadataJournal;
  readonly superblock: SuperblockStore;
  readonly snapshot: SnapshotFile;
}

const headerView = new PrepareHeaderView();

export class MetadataDriver extends GroupDriver {
  readonly config: ConsensusConfig;
  readonly dir: string;
  readonly incarnation: bigint;
  readonly #options: MetadataDriverOptions;
  readonly #adapter: MetadataAdapter;
  readonly #storage: Storage;
  #snapshotOp: number;
  #snapshotChecksum: bigint;
  readonly #offers = new Map<string, StateOffer>();
  readonly #staging: TransferStaging<MetadataInstaller>;

  private constructor(
    options: MetadataDriverOptions, config: ConsensusConfig, replica: Replica, adapter: MetadataAdapter, storage: Storage,
    snapshot: { op: number; checksum: bigint }, incarnation: bigint,
  ) {
    super({ group: METADATA_GROUP_ID, replica, options });
    this.#options = options;
    this.config = config;
    this.dir = options.dir;
    this.incarnation = incarnation;
    this.#adapter = adapter;
    this.#storage = storage;
    this.#snapshotOp = snapshot.op;
    this.#snapshotChecksum = snapshot.checksum;
    this.#staging = new TransferStaging(config.messageSizeMax, (entries, commitOp) => {
      const installer = new MetadataInstaller(options.disk, options.dir, entries, BigInt(commitOp));
      const begun = installer.begin();
      return begun.ok ? { installer } : { reason: begun.error.kind === 'invalid' ? begun.error.reason : 'staging_io' };
    });
  }

  /** Recovers the metadata plane from `options.dir` and builds the core. */
  static open(options: MetadataDriverOptions): OpenResult<MetadataDriver> {
    const config = fullConfig(options.config);
    const n = config.replicaCount;
    const walMode = options.walMode ?? 'auto';
    const mode = walMode === 'auto' ? (n > 1 ? 'repair' : 'refuse') : walMode;
    const stateOptions = options.stateOptions ?? {};
    const recovered = recoverMetadata(options.disk, options.dir, {
      expected: { clusterId: config.cluster, replicaId: config.replica, replicaCount: n },
      snapshotOpOf: (payload) => {
        const r = restoreSnapshot(payload, stateOptions);
        return r.ok && r.value.sequenceNumber <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.value.sequenceNumber) : null;
      },
      journal: { mode, slots: config.journalSlots, entrySizeMax: Math.min(config.messageSizeMax, 64 * 1024 * 1024) },
    });
    if (!recovered.ok) {
      return { ok: false, reason: 'metadata_recovery_refused', detail: `${recovered.error.kind}: ${recovered.error.reason}` };
    }
    const r = recovered.value;
    // What an earlier process wrote but never fdatasynced may still sit in the page cache and
    // read back as valid: make it durable before the core vouches for any of it.
    const synced = syncFile(options.disk, r.journal.path);
    if (synced !== null) return { ok: false, reason: 'journal_io', detail: synced };
    const built = restoreRecordOf(r, stateOptions, options.rejoin === true);
    if (typeof built === 'string') return { ok: false, reason: 'metadata_recovery_refused', detail: built };
    const incarnation = options.incarnation ?? nonZeroU128(() => options.prng.u128());
    // Boot replay applies ops inside the Replica constructor: those are not reported (the host
    // takes the state as a whole after open).
    const live: { replica: Replica | null } = { replica: null };
    const adapter = new MetadataAdapter(built.state, METADATA_GROUP_ID, {
      applied: (op) => {
        if (live.replica !== null || options.reportBootReplay === true) options.hooks?.applied?.(op);
      },
      loggedOut: (client) => {
        // The core advances commit_min right after the state machine's part of the apply.
        if (live.replica !== null) options.hooks?.applied?.(logoutApplied(METADATA_GROUP_ID, live.replica.role.commitMin + 1, client));
      },
    });
    const replica = new Replica({
      config, plane: metadataPlane(incarnation), stateMachine: adapter, time: options.time, prng: options.prng, restore: built.record,
    });
    live.replica = replica;
    const storage = { journal: r.journal, superblock: r.superblockStore, snapshot: r.snapshotFile };
    const snapshot = { op: r.snapshot?.op ?? 0, checksum: r.snapshot?.checksum ?? 0n };
    const driver = new MetadataDriver(options, config, replica, adapter, storage, snapshot, incarnation);
    driver.drain();
    return { ok: true, driver };
  }

  // -------------------------------------------------------------------------------------------
  // Metadata entry points.

  /** A login (register) or logout the host verified: proposed here on the primary, else forwarded (§8). */
  submitSession(request: SessionRequest): void {
    this.run(() => this.replica.submitSession(request), undefined);
  }

  /** §7.3 preflight without side effects: `new` means the request needs admission. */
  checkRequest(request: Pick<ClientRequest, 'client' | 'session' | 'request' | 'requestChecksum'>): RequestCheckKind {
    return this.replica.checkRequest(request);
  }

  /** The user a client's session is bound to (the committed Register), or null. */
  sessionUser(client: bigint): { readonly userId: number; readonly epoch: bigint } | null {
    const session = this.replica.clientSession(client);
    return session === null ? null : { userId: session.userId, epoch: session.epoch };
  }

  /** Acting primary, Normal, not transferring, commit_min == commit_max (§4.3): may admit and propose. */
  get caughtUpPrimary(): boolean {
    return this.replica.role.caughtUpPrimary;
  }

  /** The CURRENT metadata state (a state-transfer install replaces it: do not cache across turns). */
  get state(): MetadataState {
    return this.#adapter.state;
  }

  /** Op of the snapshot.bin on disk (0 when none). */
  get snapshotOp(): number {
    return this.#snapshotOp;
  }

  /** The WAL (read-only inspection: checkers, tests). */
  get journal(): MetadataJournal {
    return this.#storage.journal;
  }

  /** After the last flush (`close`): staged transfers dropped, the WAL closed. */
  protected closeFiles(): void {
    this.#staging.abortAll();
    this.#storage.journal.close();
  }

  // -------------------------------------------------------------------------------------------
  // Plane effects.

  protected override admitFrame(frame: Uint8Array, ingress: FrameIngress): string | null {
    this.#staging.observe(frame, ingress.validated);
    return null;
  }

  protected override syncJournal(): string | null {
    const synced = this.#storage.journal.sync();
    return synced.ok ? null : synced.error.message;
  }

  protected performStorage(effect: Effect): Completion | null {
    switch (effect.kind) {
      case 'journal_append': {
        const appended = this.#storage.journal.appendNoSync(effect.frame);
        if (appended.ok) return null;
        if (appended.error.code === 'poisoned') {
          this.stop('journal_io', appended.error.message);
          return null;
        }
        return { kind: 'journal_written', op: effect.op, checksum: effect.checksum, ok: false };
      }
      case 'journal_truncate': {
        const cut = this.#storage.journal.truncateFrom(effect.fromOp, effect.faultyThrough);
        if (!cut.ok) this.stop('journal_io', `truncate from ${effect.fromOp}: ${cut.error.message}`);
        return null;
      }
      case 'journal_drain': {
        const drained = this.#storage.journal.drain(Math.max(this.#storage.journal.watermark, effect.beforeOp - 1));
        if (!drained.ok) this.stop('journal_io', `drain before ${effect.beforeOp}: ${drained.error.message}`);
        return null;
      }
      case 'superblock_write':
        return { kind: 'superblock_written', state: effect.state, ok: this.#writeSuperblock(effect.state) };
      case 'checkpoint':
        return this.#checkpoint(effect.op);
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
        return this.#install(effect.nonce, effect.manifest, effect.commitOp, effect.journalHead);
      default:
        assert(false, `metadata driver: unexpected effect ${effect.kind}`);
    }
  }

  // -------------------------------------------------------------------------------------------

  #writeSuperblock(state: DurableVsrState): boolean {
    const written = this.#storage.superblock.write({
      clusterId: this.config.cluster,
      replicaId: this.config.replica,
      replicaCount: this.config.replicaCount,
      view: state.view,
      logView: state.logView,
      commitMax: BigInt(state.commitMax),
      checkpointOp: BigInt(state.checkpointOp),
      checkpointChecksum: state.checkpointChecksum,
      offsetFrontier: 0n,
      logHead: BigInt(state.logHead),
    });
    if (!written.ok) this.hooks.event?.('superblock_write_failed', written.error.message);
    return written.ok;
  }

  #checkpoint(op: number): Completion {
    const frame = this.replica.journalFrame(op);
    const createdAt = frame === null ? this.#options.time.realtimeMicros() : headerView.bind(frame, 0).timestamp;
    const payload = encodeSnapshot(this.#adapter.state, {
      sequenceNumber: BigInt(op),
      createdAt,
      clientTable: encodeClientTableSnapshot(this.replica.clientTableCheckpoint()),
    });
    const written = this.#storage.snapshot.write(payload);
    if (!written.ok) {
      this.hooks.event?.('checkpoint_failed', written.error.message);
      return { kind: 'checkpoint_done', op, checksum: 0n, ok: false };
    }
    this.#snapshotOp = op;
    this.#snapshotChecksum = written.value;
    return { kind: 'checkpoint_done', op, checksum: written.value, ok: true };
  }

  #offer(effect: Extract<Effect, { kind: 'transfer_offer' }>): Completion {
    const refused: Completion = { kind: 'offer_built', requester: effect.requester, nonce: effect.nonce, entries: null, transient: false };
    if (effect.clientTable === null || this.#snapshotOp === 0) return refused;
    const built = buildMetadataOffer(this.#storage.snapshot, BigInt(this.#snapshotOp), effect.clientTable, BigInt(effect.commitOp));
    if (!built.ok) {
      this.hooks.event?.('transfer_offer_refused', JSON.stringify(built.error.kind));
      return refused;
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
    const verified = installer.verify();
    if (!verified.ok) {
      installer.abort();
      const e = verified.error;
      return e.kind === 'invalid'
        ? { kind: 'install_done', nonce, ok: false, failure: 'verify', reason: e.reason }
        : { kind: 'install_done', nonce, ok: false, failure: 'install', reason: e.fault.message };
    }
    const v = verified.value;
    const restored = restoreSnapshot(v.snapshotPayload, this.#options.stateOptions ?? {});
    const table = decodeClientTable(v.clientTable);
    const snapshotOp = Number(v.snapshotOp);
    const decodeProblem = !restored.ok ? restored.reason
      : !table.ok ? table.reason
      : restored.value.sequenceNumber !== v.snapshotOp ? 'snapshot_sequence_mismatch'
      : null;
    if (decodeProblem !== null || !restored.ok || !table.ok) {
      installer.abort();
      return { kind: 'install_done', nonce, ok: false, failure: 'decode', reason: decodeProblem ?? 'decode' };
    }
    if (BigInt(commitOp) < v.snapshotOp || v.tableFrontier > BigInt(commitOp) || !Number.isSafeInteger(snapshotOp)) {
      installer.abort();
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'incoherent_commit_op' };
    }
    const ahead = snapshotOp > this.replica.role.commitMin;
    if (ahead && journalHead > snapshotOp) {
      // The install drops the WAL above the snapshot: what it held may have been acknowledged.
      const recorded = this.#storage.journal.recordFaulty(snapshotOp + 1, journalHead);
      if (!recorded.ok) {
        this.stop('transfer_io', `record faulty ops: ${recorded.error.message}`);
        return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
      }
    }
    const committed = installer.commit(ahead, this.#storage.journal);
    if (!committed.ok) {
      const e = committed.error;
      this.stop('transfer_io', e.kind === 'invalid' ? e.reason : e.fault.message);
      return { kind: 'install_done', nonce, ok: false, failure: 'install', reason: 'io' };
    }
    if (ahead) {
      this.#adapter.replace(restored.value.state);
      this.#snapshotOp = snapshotOp;
      this.#snapshotChecksum = snapshotTrailer(v.snapshotPayload).checksum;
    }
    this.hooks.installed?.({ group: this.group, snapshotOp, commitOp, snapshotPayload: ahead ? v.snapshotPayload : null });
    return {
      kind: 'install_done', nonce, ok: true, snapshotOp,
      // The pairing the core records must match snapshot.bin on disk: the received one when it
      // was installed, the local one otherwise.
      checkpointChecksum: this.#snapshotChecksum,
      clientTable: table.value, tableFrontier: Number(v.tableFrontier),
    };
  }
}

/** fdatasync of a file through a fresh fd (the data of every fd of the file). Null or a reason. */
export function syncFile(disk: Disk, path: string): string | null {
  try {
    if (disk.stat(path) === null) return null;
    const fd = disk.open(path, 'readwrite');
    try {
      disk.fdatasync(fd);
    } finally {
      disk.close(fd);
    }
    return null;
  } catch (error) {
    return `sync ${path}: ${(error as Error).message}`;
  }
}

function opOfFrame(frame: Uint8Array): number {
  return Number(new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(PREPARE_LAYOUT.op.offset, true));
}

function offerKey(requester: number, nonce: bigint): string {
  return `${requester}:${nonce}`;
}

/** storage's recovery result → the state machine at the snapshot op + the core's RestoreRecord. */
function restoreRecordOf(r: MetadataRestore, stateOptions: MetadataStateOptions, rejoin: boolean): { state: MetadataState; record: RestoreRecord } | string {
  let state = new MetadataState(stateOptions);
  let clientTable: RestoreRecord['clientTable'] = null;
  const snapshotOp = r.snapshot?.op ?? 0;
  if (r.snapshot !== null) {
    const restored = restoreSnapshot(r.snapshot.payload, stateOptions);
    if (!restored.ok) return `snapshot_undecodable: ${restored.reason}`;
    state = restored.value.state;
    const table = decodeClientTableSnapshot(restored.value.clientTable);
    if (!table.ok) return `snapshot_client_table: ${table.reason}`;
    clientTable = table.entries;
  }
  // The scan verified every entry it returned (replay, unapplied: views into the bytes it
  // checked). Entries it kept beyond a hole (repair mode) are read again, so they are verified
  // again: a bit flipped on that read must become a faulty slot, never a trusted entry.
  const verified = new Map<number, Uint8Array>();
  for (const e of [...r.replay, ...r.unapplied]) verified.set(e.op, e.frame);
  const journal: Uint8Array[] = [];
  const unreadable: number[] = [];
  for (const op of r.journal.ops()) {
    if (op < Math.max(1, snapshotOp)) continue;
    let frame = verified.get(op) ?? null;
    if (frame === null) {
      const read = r.journal.read(op);
      if (!read.ok) return `journal_read: ${read.error.message}`;
      frame = read.value;
      if (frame !== null && (validateHeader(frame, 0) !== null || frame[60] !== 6 || opOfFrame(frame) !== op)) {
        unreadable.push(op);
        frame = null;
      }
    }
    if (frame !== null) journal.push(frame);
  }
  // A hole below the head ('missing') of a WAL that scanned clean was never journaled, so never
  // acked (an append is fdatasynced before its PrepareOk; a live prepare above a gap is journaled
  // while the gap is repaired), and every removal of an op that may have been acked is recorded
  // first (journal.faulty). Only damage (a corrupt range, whose op may be any; a torn tail) makes a
  // hole a possible loss, as in the partition journal. Faulty, the hole could never be nacked
  // (seed 1023994 of 3: the survivors' merge waited forever for a copy of a never-committed op).
  const damaged = r.faulty.some((f) => f.kind !== 'missing');
  const scanFaulty = r.faulty
    .filter((f) => f.kind !== 'torn' && f.op !== undefined && f.op > snapshotOp && (damaged || f.kind !== 'missing'))
    .map((f) => f.op as number);
  const evidence = recordScanFaulty(r.journal, scanFaulty, r.recordedFaulty);
  if (evidence !== null) return evidence;
  const faultyOps = [...scanFaulty, ...unreadable.filter((op) => op > snapshotOp), ...r.recordedFaulty];
  const sb = r.superblock?.state ?? null;
  const superblock: DurableVsrState | null = sb === null ? null : {
    view: sb.view,
    logView: sb.logView,
    commitMax: Number(sb.commitMax),
    checkpointOp: Number(sb.checkpointOp),
    checkpointChecksum: sb.checkpointChecksum,
    logHead: Number(sb.logHead),
  };
  const record: RestoreRecord = {
    priorState: rejoin || r.headOp > 0 || r.snapshot !== null || r.superblock !== null,
    superblock,
    checkpointOp: snapshotOp,
    checkpointChecksum: r.snapshot?.checksum ?? 0n,
    journal,
    faultyOps,
    // The WAL is fdatasynced before an ack: a power loss loses nothing acknowledged.
    lostThrough: 0,
    journalLost: rejoin,
    clientTable,
    commit: 0,
  };
  return { state, record };
}

/**
 * The scan's faulty ops (a corrupt record's op; with any damage, every hole below the head) are
 * evidence only while the damaged bytes stay in journal.wal, and every rewrite (a truncation, a
 * drain) copies the indexed records alone: a corrupt range vanishes, and the next boot saw a clean
 * WAL whose hole was never journaled, so the DoViewChange nacked an op this replica may have acked
 * (helper-49: a boot-time truncation right after the scan, then a second restart). They are
 * recorded in journal.faulty before the core runs; a refilled op is held again and so no longer
 * reported. Returns why the record failed (the boot refuses), or null.
 */
function recordScanFaulty(journal: MetadataRestore['journal'], ops: readonly number[], recorded: readonly number[]): string | null {
  const known = new Set(recorded);
  const fresh = [...new Set(ops)].filter((op) => !known.has(op)).sort((a, b) => a - b);
  let i = 0;
  while (i < fresh.length) {
    let j = i;
    while (j + 1 < fresh.length && (fresh[j + 1] as number) === (fresh[j] as number) + 1) j++;
    const written = journal.recordFaulty(fresh[i] as number, fresh[j] as number);
    if (!written.ok) return `journal_faulty: ${written.error.message}`;
    i = j + 1;
  }
  return null;
}

/** For AppliedOp consumers: a committed Logout as an applied op (operation 3). */
export function logoutApplied(group: bigint, op: number, client: bigint): AppliedOp {
  return { group, op, operation: 3, client, request: 0n, userId: 0, timestamp: 0n, body: new Uint8Array(0), code: 0, payload: new Uint8Array(0) };
}
