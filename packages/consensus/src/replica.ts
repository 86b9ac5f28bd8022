/**
 * `Replica`: one consensus group's VSR replica, for either plane. A thin coordinator: it validates
 * and routes inputs to the sub-protocol modules, runs the timers, releases gated sends, and checks
 * the invariants after every entry point. Synchronous only; every effect goes to the bounded
 * buffer the host drains after each call (`takeEffects`).
 *
 *   onMessage(frame, ingress)  a replica-plane frame for this group (validated here unless the
 *                              host's link did, ingress.ts; a reason, never a throw)
 *   onRequest(request)      an authenticated client request (the session fence is checked here)
 *   submitSession(request)  a login/logout verified by the host: proposed here or forwarded
 *   tick()                  one 10 ms tick
 *   onStorageDone(done)     a durable write or transfer step finished
 */
import { plainBytes, type Prng } from '@shoal/stdx';
import {
  Command, encodeClientTable, LAYOUT_BY_COMMAND, OFFSET_CLUSTER, OFFSET_COMMAND, OFFSET_REPLICA, validateHeader,
  type ValidateLimits,
} from '@shoal/protocol';
import { emitCheckpoint, maybeCheckpoint, onCheckpointDone } from './checkpoint.js';
import type { ClientTableCheckpointEntry, RequestCheck } from './client-table.js';
import { commitWalk, repairSelfAcks } from './commit.js';
import { makeConfig, type ConfigInput, type ConsensusConfig } from './config.js';
import { Core, type TimeSource } from './core.js';
import { Drop } from './drops.js';
import type { Completion, Effect } from './effects.js';
import { onForward, onForwardResult, submitSession, tickForwarding } from './forwarding.js';
import { UNCHECKED_INGRESS, type FrameIngress } from './ingress.js';
import type { SessionRequest } from './forwarding-state.js';
import { canHandBack, startHandBack, tickHandBack } from './hand-back.js';
import { onCommit, onCommitMessageTimeout, onPrepareTimeout } from './heartbeat.js';
import { checkInvariants } from './invariants.js';
import { Mark, MARKS } from './marks.js';
import type { ClientRequest, RequestOutcome } from './pipeline.js';
import { onJournalWritten, onPrepare, onPrepareOk, onRequest } from './prepare.js';
import { onPrimaryUnreachable } from './primary-link.js';
import { onRequestStartView, onRequestStartViewTimeout } from './probe.js';
import { onRequestPrepares, onRepairPrepare, tickRepair } from './repair.js';
import { onRangeEvicted, onRepairDone, tickUnverifiable } from './repair-done.js';
import { FRESH_RESTORE, restore, type RestoreRecord } from './restore.js';
import { ReplicaRole } from './role.js';
import { flushOutbox } from './send.js';
import { onStartView, tryFinishView } from './start-view.js';
import type { StateMachine } from './state-machine.js';
import {
  onChunkRead, onInstallDone, onOfferBuilt, onRequestStateChunk, onRequestStateTransfer, onStateChunk,
  onStateTransferTarget, tickOffers, tickTransfer,
} from './state-transfer.js';
import { ensureSuperblock, onSuperblockWritten, tickSuperblock } from './superblock.js';
import type { Op, Plane, Status, TransferStage } from './types.js';
import {
  maybeSendDoViewChange,
  onDoViewChange, onDoViewChangeTimeout, onNormalHeartbeatTimeout, onStartViewChange, onStartViewChangeTimeout,
  onViewChangeStatusTimeout,
} from './view-change.js';

/**
 * A replica whose journal is gone (a `--fresh` rejoin: nothing bounds what it acked) abstains
 * from voting while others can elect without it. If the view change has not finished after two
 * status timeouts (n = 2 needs its vote; or several replicas lost their journals), it votes
 * BLIND: its DoViewChange says nothing above its commit point (dvc-suffix.ts), so it never nacks
 * an op it may have acked. It never goes further: voting with its short log (upstream's last
 * resort, and this core's before) could let two such nacks truncate ops a complete replica holds
 * and acknowledged (issue 12, loss path 1). Blind votes finish a view as soon as a replica that
 * holds the log takes part, or, when every replica is blind, once all n DoViewChanges are in
 * (nobody can serve the lost ops: merge.ts drops them); while a replica that may hold them is
 * down, waiting is the safe outcome.
 */
function abstainBound(c: Core): void {
  if (!c.journalIncomplete || c.votesBlind || c.status !== 'view_change') {
    c.incompleteAbstainTicks = 0;
    return;
  }
  c.incompleteAbstainTicks += 1;
  if (c.incompleteAbstainTicks < 2 * c.config.ticks.viewChangeStatus) return;
  c.incompleteAbstainTicks = 0;
  c.votesBlind = true;
  c.mark(Mark.VoteBlind, `view ${c.view}`);
  c.event('journal_incomplete_vote', 'abstained for two status timeouts; voting blind above the commit point');
  maybeSendDoViewChange(c);
}

/** Why a frame was dropped (a short snake_case reason). */
export type DropReason = string;

export interface ReplicaOptions {
  readonly config: ConsensusConfig | ConfigInput;
  readonly plane: Plane;
  readonly stateMachine: StateMachine;
  readonly time: TimeSource;
  readonly prng: Prng;
  readonly restore?: RestoreRecord;
}

/** A read-only picture of the replica (hosts, tests, checkers). */
export interface ReplicaStatus {
  readonly replica: number;
  readonly view: number;
  readonly logView: number;
  readonly status: Status;
  readonly op: Op;
  readonly commitMin: Op;
  readonly commitMax: Op;
  readonly primary: boolean;
  readonly transferStage: TransferStage;
  readonly journalOps: readonly Op[];
  readonly pipelineLength: number;
  readonly requestQueueLength: number;
}

/** Metadata-plane session forwarding frames carry no group field. */
const GROUP_LESS = new Set<number>([
  Command.ForwardRegister, Command.ForwardRegisterResult, Command.ForwardLogout, Command.ForwardLogoutResult,
]);

/** The core behind each replica, for `coreOf` (tests and deep checkers only; see testing.ts). */
const CORES = new WeakMap<Replica, Core>();

/** Test and debug access to a replica's core (exported through `@shoal/consensus/testing` only). */
export function coreOf(replica: Replica): Core {
  const core = CORES.get(replica);
  if (core === undefined) throw new Error('coreOf: not a Replica');
  return core;
}

/** §7.3 preflight of a metadata request without side effects (`not_ready`: in flight, or not a caught-up primary). */
export type RequestCheckKind = RequestCheck['kind'] | 'not_ready';

function isFullConfig(c: ConsensusConfig | ConfigInput): c is ConsensusConfig {
  return (c as ConsensusConfig).ticks !== undefined && (c as ConsensusConfig).effectsCapacity !== undefined && Object.isFrozen(c);
}

export class Replica {
  readonly #c: Core;
  readonly #role: ReplicaRole;
  readonly #limits: ValidateLimits;
  readonly #clusterBytes: Uint8Array;
  /** The role last reported (`role` effect); null before the first. */
  #reported: { readonly view: number; readonly primary: number | null; readonly acting: boolean } | null = null;
  #watermarks = { view: 0, commitMin: 0, commitMax: 0 };

  constructor(options: ReplicaOptions) {
    const config = isFullConfig(options.config) ? options.config : makeConfig(options.config);
    this.#c = new Core(config, options.plane, options.stateMachine, options.time, options.prng);
    this.#role = new ReplicaRole(this.#c);
    CORES.set(this, this.#c);
    this.#limits = Object.freeze({ messageSizeMax: config.messageSizeMax, replicaCount: config.replicaCount });
    this.#clusterBytes = new Uint8Array(16);
    new DataView(this.#clusterBytes.buffer).setBigUint64(0, config.cluster & 0xffff_ffff_ffff_ffffn, true);
    new DataView(this.#clusterBytes.buffer).setBigUint64(8, config.cluster >> 64n, true);
    restore(this.#c, options.restore ?? FRESH_RESTORE);
    this.#finish();
  }

  // -------------------------------------------------------------------------------------------
  // Entry points.

  /** A replica-plane frame for this group. Returns null when handled, else the drop reason. */
  onMessage(frame: Uint8Array, ingress: FrameIngress = UNCHECKED_INGRESS): DropReason | null {
    const c = this.#c;
    if (c.stopped !== null) return Drop.Stopped;
    // Hosts hand in socket Buffers; the core's copies are `.slice()`s, which must copy.
    const reason = this.#route(plainBytes(frame), ingress);
    this.#finish();
    return reason;
  }

  onRequest(request: ClientRequest): RequestOutcome {
    const c = this.#c;
    if (c.stopped !== null) return 'dropped';
    const body = plainBytes(request.body);
    const outcome = onRequest(c, body === request.body ? request : { ...request, body });
    this.#finish();
    return outcome;
  }

  /** A login (register) or logout the host verified: proposed here on the primary, else forwarded. */
  submitSession(request: SessionRequest): void {
    const c = this.#c;
    if (c.stopped !== null) return;
    submitSession(c, request);
    this.#finish();
  }

  tick(): void {
    const c = this.#c;
    if (c.stopped !== null) return;
    c.steps += 1;
    tickSuperblock(c);
    const t = c.timers;
    const fired = t.all().filter((timer) => timer.tick());
    for (const timer of fired) {
      if (!timer.fired) continue; // re-armed by an earlier handler this tick
      if (timer === t.prepare) onPrepareTimeout(c);
      else if (timer === t.commitMessage) onCommitMessageTimeout(c);
      else if (timer === t.normalHeartbeat) onNormalHeartbeatTimeout(c);
      else if (timer === t.startViewChangeMessage) onStartViewChangeTimeout(c);
      else if (timer === t.doViewChangeMessage) onDoViewChangeTimeout(c);
      else if (timer === t.viewChangeStatus) onViewChangeStatusTimeout(c);
      else if (timer === t.requestStartViewMessage) onRequestStartViewTimeout(c);
    }
    repairSelfAcks(c);
    abstainBound(c);
    if (c.vc.parked !== null) tryFinishView(c);
    tickRepair(c);
    tickUnverifiable(c);
    tickTransfer(c);
    tickOffers(c);
    tickForwarding(c);
    if (c.status === 'normal' && c.commitMin < c.commitMax) commitWalk(c);
    tickHandBack(c);
    this.#finish();
  }

  /**
   * The host asks the acting primary to give the group to `target` (hand-back.ts): once `target`
   * is caught up, the pipeline drains and a view change to the first view `target` leads starts.
   * False (nothing happens) unless `canHandBack(target)`.
   */
  handBack(target: number): boolean {
    const c = this.#c;
    if (c.stopped !== null) return false;
    const started = startHandBack(c, target);
    this.#finish();
    return started;
  }

  /** This replica is the acting primary, no hand-back is under way, and `target` is caught up in this view. */
  canHandBack(target: number): boolean {
    return this.#c.stopped === null && canHandBack(this.#c, target);
  }

  /**
   * The host lost its link to this view's primary and could not get it back within its grace:
   * a backup in normal status acts as on the heartbeat timeout now (primary-link.ts). True when
   * that started a view change.
   */
  primaryUnreachable(): boolean {
    const c = this.#c;
    if (c.stopped !== null) return false;
    const started = onPrimaryUnreachable(c);
    this.#finish();
    return started;
  }

  onStorageDone(done: Completion): void {
    const c = this.#c;
    if (c.stopped !== null) return;
    switch (done.kind) {
      case 'journal_written':
        onJournalWritten(c, done.op, done.checksum, done.ok);
        break;
      case 'superblock_written':
        onSuperblockWritten(c, done.state, done.ok);
        break;
      case 'checkpoint_done':
        onCheckpointDone(c, done.op, done.checksum, done.ok);
        break;
      case 'offer_built':
        onOfferBuilt(c, done);
        break;
      case 'chunk_read':
        onChunkRead(c, done);
        break;
      case 'install_done':
        onInstallDone(c, done);
        break;
    }
    this.#finish();
  }

  /** Hands the host every pending effect (oldest first). */
  takeEffects(): Effect[] {
    return this.#c.effects.take();
  }

  drainEffects(visit: (effect: Effect) => void): void {
    this.#c.effects.drain(visit);
  }

  // -------------------------------------------------------------------------------------------
  // Reads.

  get status(): ReplicaStatus {
    const c = this.#c;
    return {
      replica: c.self,
      view: c.view,
      logView: c.logView,
      status: c.status,
      op: c.op,
      commitMin: c.commitMin,
      commitMax: c.commitMax,
      primary: c.isActingPrimary(),
      transferStage: c.transfer.stage,
      journalOps: c.journal.ops(),
      pipelineLength: c.pipeline.length,
      requestQueueLength: c.pipeline.requests.length,
    };
  }

  /** The replica lost journal entries it may have acked and has not caught up yet (hosts keep this durable). */
  get journalIncomplete(): boolean {
    return this.#c.journalIncomplete;
  }

  get stopped(): string | null {
    return this.#c.stopped;
  }

  /** The journaled prepare frame at `op` (a copy), for checkers and tests. */
  journalFrame(op: Op): Uint8Array | null {
    return this.#c.journal.get(op)?.frame.slice() ?? null;
  }

  /** ICT2 bytes of the client table (metadata). */
  clientTableExport(): Uint8Array | null {
    const table = this.#c.clientTable;
    return table === null ? null : encodeClientTable(table.exportEntries());
  }

  /** The client table's checkpoint form (snapshot.bin), as of commit_min. */
  clientTableCheckpoint(): ClientTableCheckpointEntry[] | null {
    return this.#c.clientTable?.checkpointEntries() ?? null;
  }

  /** Where this replica stands (view, status, primary, caught up, …), read live without allocating. */
  get role(): ReplicaRole {
    return this.#role;
  }

  /** The coverage marks reached in this life (marks.ts), every mark listed (0 when not reached). */
  marks(): Record<Mark, number> {
    const out = {} as Record<Mark, number>;
    for (const m of MARKS) out[m] = this.#c.marks.get(m) ?? 0;
    return out;
  }

  /** The identity checksum of the journaled prepare at `op`, or null when not held. */
  journalChecksum(op: Op): bigint | null {
    return this.#c.journal.get(op)?.checksum ?? null;
  }

  /** §7.3 request preflight (metadata), without side effects: `new` means the request needs admission. */
  checkRequest(request: Pick<ClientRequest, 'client' | 'session' | 'request' | 'requestChecksum'>): RequestCheckKind {
    const c = this.#c;
    const table = c.clientTable;
    if (table === null || c.pipeline.hasClient(request.client) || !c.isCaughtUpPrimary()) return 'not_ready';
    return table.check(request.client, request.session, request.request, request.requestChecksum).kind;
  }

  /** A client's committed session (metadata client table), or null. */
  clientSession(client: bigint): { readonly userId: number; readonly epoch: bigint; readonly watermark: bigint } | null {
    const entry = this.#c.clientTable?.get(client);
    return entry === undefined ? null : { userId: entry.userId, epoch: entry.epoch, watermark: entry.watermark };
  }

  /** Runs the invariant checks now (they also run after every entry point). */
  invariants(): void {
    checkInvariants(this.#c, this.#watermarks);
  }

  // -------------------------------------------------------------------------------------------

  #route(frame: Uint8Array, ingress: FrameIngress): DropReason | null {
    const c = this.#c;
    const reason = ingress.validated ? null : validateHeader(frame, 0, this.#limits);
    const command = frame.length > OFFSET_COMMAND ? (frame[OFFSET_COMMAND] as number) : -1;
    const from = frame.length > OFFSET_REPLICA ? (frame[OFFSET_REPLICA] as number) : -1;
    if (reason !== null) return c.dropInvalid(command, from, reason);
    for (let i = 0; i < 16; i++) if (frame[OFFSET_CLUSTER + i] !== this.#clusterBytes[i]) return c.drop(command, from, Drop.ClusterMismatch);
    if (GROUP_LESS.has(command)) {
      if (c.plane.kind !== 'metadata') return c.drop(command, from, Drop.ForwardingOnPartitionPlane);
    } else if (command !== Command.Request) {
      const spec = LAYOUT_BY_COMMAND[command]?.['group'];
      if (spec === undefined) return c.drop(command, from, Drop.NoGroup);
      const group = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(spec.offset, true);
      if (group !== c.plane.group) return c.drop(command, from, Drop.GroupMismatch);
    }
    // A prepare (or repaired prepare) may have been built by this replica in an earlier view.
    if (from === c.self && command !== Command.Prepare && command !== Command.RepairPrepare) return c.drop(command, from, Drop.FromSelf);
    switch (command) {
      case Command.Request: return c.drop(command, from, Drop.RoutedRequestNotAccepted);
      case Command.Prepare: return onPrepare(c, frame, ingress.owned);
      case Command.PrepareOk: return onPrepareOk(c, frame);
      case Command.Commit: return onCommit(c, frame);
      case Command.StartViewChange: return onStartViewChange(c, frame);
      case Command.DoViewChange: return onDoViewChange(c, frame);
      case Command.StartView: return onStartView(c, frame);
      case Command.RequestStartView: return onRequestStartView(c, frame);
      case Command.RequestPrepares: return onRequestPrepares(c, frame);
      case Command.RepairPrepare: return onRepairPrepare(c, frame);
      case Command.RepairDone: return onRepairDone(c, frame);
      case Command.RangeEvicted: return onRangeEvicted(c, frame);
      case Command.RequestStateTransfer: return onRequestStateTransfer(c, frame);
      case Command.StateTransferTarget: return onStateTransferTarget(c, frame);
      case Command.RequestStateChunk: return onRequestStateChunk(c, frame);
      case Command.StateChunk: return onStateChunk(c, frame);
      case Command.ForwardRegister:
      case Command.ForwardLogout:
        return onForward(c, frame);
      case Command.ForwardRegisterResult:
      case Command.ForwardLogoutResult:
        return onForwardResult(c, frame);
      default:
        return c.drop(command, from, Drop.UnhandledCommand);
    }
  }

  #finish(): void {
    const c = this.#c;
    if (c.stopped === null) {
      maybeCheckpoint(c);
      emitCheckpoint(c);
      ensureSuperblock(c);
      flushOutbox(c);
      if (c.journalIncomplete && c.incompleteUntil !== null && c.commitMin >= c.incompleteUntil) {
        c.journalIncomplete = false;
        c.votesBlind = false;
        c.mark(Mark.JournalComplete, `caught up to ${c.incompleteUntil}`);
      }
    }
    this.#reportRole();
    checkInvariants(c, this.#watermarks);
    this.#watermarks = { view: c.view, commitMin: c.commitMin, commitMax: c.commitMax };
  }

  /** A `role` effect when the view, the known primary or acting changed since the last one. */
  #reportRole(): void {
    const role = this.#role;
    const primary = role.normal ? role.primaryIndex : null;
    const acting = role.actingPrimary;
    const last = this.#reported;
    if (last !== null && last.view === role.view && last.primary === primary && last.acting === acting) return;
    this.#reported = { view: role.view, primary, acting };
    this.#c.effects.push({ kind: 'role', view: role.view, primary, acting });
  }
}
