/**
 * `Replica`: one consensus group's VSR replica, for either plane. A thin coordinator: it validates
 * and routes inputs to the sub-protocol modules, runs the timers, releases gated sends, and checks
 * the invariants after every entry point. Synchronous only; every effect goes to the bounded
 * buffer the host drains after each call (`takeEffects`).
 *
 *   onMessage(frame)        a replica-plane frame for this group (validated here; a reason, never a throw)
 *   onRequest(request)      an authenticated client request (the session fence is checked here)
 *   submitSession(request)  a login/logout verified by the host: proposed here or forwarded
 *   tick()                  one 10 ms tick
 *   onStorageDone(done)     a durable write or transfer step finished
 */
import { type Prng } from '@shoal/stdx';
import { encodeClientTable, LAYOUT_BY_COMMAND, validateHeader, type ValidateLimits } from '@shoal/protocol';
import type { ClientTableCheckpointEntry } from './client-table.js';
import { commitWalk, onPrepareOk, repairSelfAcks } from './commit.js';
import { makeConfig, type ConfigInput, type ConsensusConfig } from './config.js';
import { Core, type TimeSource } from './core.js';
import type { Completion, Effect } from './effects.js';
import { onForward, onForwardResult, submitSession, tickForwarding, type SessionRequest } from './forwarding.js';
import { onCommit, onCommitMessageTimeout, onPrepareTimeout } from './heartbeat.js';
import { checkInvariants } from './invariants.js';
import { emitCheckpoint, maybeCheckpoint, onCheckpointDone } from './checkpoint.js';
import { admit, onJournalWritten, onPrepare, onRequest, type ClientRequest, type RequestOutcome } from './prepare.js';
import { onRequestStartView, onRequestStartViewTimeout } from './probe.js';
import { onRangeEvicted, onRepairDone, onRepairPrepare, onRequestPrepares, tickRepair } from './repair.js';
import { FRESH_RESTORE, restore, type RestoreRecord } from './restore.js';
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
 * A replica that lost journal entries it may have acked abstains from voting while others can
 * elect without it. If the view change has not finished after two status timeouts (n = 2 needs
 * its vote; or too many replicas restarted), it votes BLIND: its DoViewChange says nothing above
 * its commit point (dvc-suffix.ts), so it never nacks an op it may have acked. If even that does
 * not finish a view within two more status timeouts (every replica may be blind: all of them
 * restarted, and nobody can vouch for what was lost), it votes with its short log, nacks and all
 * (upstream's behaviour, with its risk), so the group stays live.
 */
function abstainBound(c: Core): void {
  if (!c.journalIncomplete || c.status !== 'view_change') {
    c.incompleteAbstainTicks = 0;
    return;
  }
  c.incompleteAbstainTicks += 1;
  if (c.incompleteAbstainTicks < 2 * c.config.ticks.viewChangeStatus) return;
  c.incompleteAbstainTicks = 0;
  if (!c.votesBlind) {
    c.votesBlind = true;
    c.event('journal_incomplete_vote', 'abstained for two status timeouts; voting blind above the commit point');
  } else {
    c.votesBlind = false;
    c.journalIncomplete = false;
    c.event('journal_incomplete_vote', 'no view while voting blind; voting with an incomplete journal');
  }
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

const GROUP_LESS = new Set([26, 27, 28, 29]);

function isFullConfig(c: ConsensusConfig | ConfigInput): c is ConsensusConfig {
  return (c as ConsensusConfig).ticks !== undefined && (c as ConsensusConfig).effectsCapacity !== undefined && Object.isFrozen(c);
}

export class Replica {
  readonly #c: Core;
  readonly #limits: ValidateLimits;
  readonly #clusterBytes: Uint8Array;
  #watermarks = { view: 0, commitMin: 0, commitMax: 0 };

  constructor(options: ReplicaOptions) {
    const config = isFullConfig(options.config) ? options.config : makeConfig(options.config);
    this.#c = new Core(config, options.plane, options.stateMachine, options.time, options.prng);
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
  onMessage(frame: Uint8Array): DropReason | null {
    const c = this.#c;
    if (c.stopped !== null) return 'stopped';
    const reason = this.#route(frame);
    this.#finish();
    return reason;
  }

  onRequest(request: ClientRequest): RequestOutcome {
    const c = this.#c;
    if (c.stopped !== null) return 'dropped';
    const outcome = onRequest(c, request);
    this.#finish();
    return outcome;
  }

  /** A login (register) or logout the host verified: proposed here on the primary, else forwarded. */
  submitSession(request: SessionRequest): void {
    const c = this.#c;
    if (c.stopped !== null) return;
    submitSession(c, request, admit);
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
    tickTransfer(c);
    tickOffers(c);
    tickForwarding(c);
    if (c.status === 'normal' && c.commitMin < c.commitMax) commitWalk(c);
    this.#finish();
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

  /** Test/debug access to the core (not for hosts). */
  get core(): Core {
    return this.#c;
  }

  /** Runs the invariant checks now (they also run after every entry point). */
  invariants(): void {
    checkInvariants(this.#c, this.#watermarks);
  }

  // -------------------------------------------------------------------------------------------

  #route(frame: Uint8Array): DropReason | null {
    const c = this.#c;
    const reason = validateHeader(frame, 0, this.#limits);
    const command = frame.length > 60 ? (frame[60] as number) : -1;
    const from = frame.length > 61 ? (frame[61] as number) : -1;
    if (reason !== null) return c.drop(command, from, reason);
    for (let i = 0; i < 16; i++) if (frame[32 + i] !== this.#clusterBytes[i]) return c.drop(command, from, 'cluster_mismatch');
    if (GROUP_LESS.has(command)) {
      if (c.plane.kind !== 'metadata') return c.drop(command, from, 'forwarding_on_partition_plane');
    } else if (command !== 5) {
      const spec = LAYOUT_BY_COMMAND[command]?.['group'];
      if (spec === undefined) return c.drop(command, from, 'no_group');
      const group = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(spec.offset, true);
      if (group !== c.plane.group) return c.drop(command, from, 'group_mismatch');
    }
    if (from === c.self && command !== 6 && command !== 19) return c.drop(command, from, 'from_self');
    switch (command) {
      case 5: return c.drop(command, from, 'routed_request_not_accepted');
      case 6: return onPrepare(c, frame);
      case 7: return onPrepareOk(c, frame);
      case 9: return onCommit(c, frame);
      case 10: return onStartViewChange(c, frame);
      case 11: return onDoViewChange(c, frame);
      case 12: return onStartView(c, frame);
      case 17: return onRequestStartView(c, frame);
      case 18: return onRequestPrepares(c, frame);
      case 19: return onRepairPrepare(c, frame);
      case 20: return onRepairDone(c, frame);
      case 21: return onRangeEvicted(c, frame);
      case 22: return onRequestStateTransfer(c, frame);
      case 23: return onStateTransferTarget(c, frame);
      case 24: return onRequestStateChunk(c, frame);
      case 25: return onStateChunk(c, frame);
      case 26:
      case 28:
        return onForward(c, frame, admit);
      case 27:
      case 29:
        return onForwardResult(c, frame);
      default:
        return c.drop(command, from, 'unhandled_command');
    }
  }

  #finish(): void {
    const c = this.#c;
    if (c.stopped === null) {
      maybeCheckpoint(c);
      emitCheckpoint(c);
      ensureSuperblock(c);
      flushOutbox(c);
      if (c.journalIncomplete && c.incompleteUntil > 0 && c.commitMin >= c.incompleteUntil) {
        c.journalIncomplete = false;
        c.votesBlind = false;
        c.event('journal_complete', `caught up to ${c.incompleteUntil}`);
      }
    }
    checkInvariants(c, this.#watermarks);
    this.#watermarks = { view: c.view, commitMin: c.commitMin, commitMax: c.commitMax };
  }
}
