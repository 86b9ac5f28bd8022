/**
 * The replica's state, in one place. Sub-protocol modules are functions of a `Core`; `Replica`
 * (replica.ts) is the thin public coordinator that calls them and checks invariants.
 *
 * Field groups: identity and ports; VSR state (§4.1); journal, pipeline, client table; trust
 * anchors of the current log (`canon`); view change; durability (superblock + gated outbox);
 * repair; state transfer; forwarding; checkpointing.
 */
import type { Prng } from '@shoal/stdx';
import { ClientTable } from './client-table.js';
import type { ConsensusConfig } from './config.js';
import type { Drop } from './drops.js';
import { EffectBuffer } from './effects.js';
import { newForwardingState, type ForwardingState } from './forwarding-state.js';
import { type AckProgress, type HandBack, newAckProgress } from './hand-back-state.js';
import { Journal } from './journal.js';
import type { Mark } from './marks.js';
import { Pipeline } from './pipeline.js';
import { quorums, type Quorums } from './quorums.js';
import type { RepairSession } from './repair-state.js';
import type { StateMachine } from './state-machine.js';
import { newTransferState, type ServedOffer, type TransferState } from './state-transfer-state.js';
import { newSuperblockState, type SuperblockState } from './superblock-state.js';
import { Timers } from './timers.js';
import { asReplica, asView, type Op, type Plane, type ReplicaIndex, type Status, type View } from './types.js';
import { newViewChangeState, type ViewChangeState } from './view-change-state.js';

/** Injected wall clock for prepare timestamps (deterministic in the simulator). */
export interface TimeSource {
  realtimeMicros(): bigint;
}

/** A canonical header of the current log: the trust anchor for the entry at its op. */
export interface CanonicalHeader {
  readonly checksum: bigint;
  /** null when only the checksum is known (a Commit heartbeat's commit_checksum). */
  readonly parent: bigint | null;
  /** The 256 header bytes when known (StartView body, merged log): DVC suffixes repeat them. */
  readonly header: Uint8Array | null;
}

/** A gated send withheld until the durability gate opens (send.ts). */
export interface PendingSend {
  readonly to: ReplicaIndex;
  readonly frame: Uint8Array;
  readonly command: number;
  readonly view: View;
  readonly logView: View;
  /** The journal entry this send vouches for (PrepareOk, prepare forward), or null. */
  readonly vouchOp: Op | null;
  readonly vouchChecksum: bigint;
}

export class Core {
  readonly config: ConsensusConfig;
  readonly plane: Plane;
  readonly sm: StateMachine;
  readonly time: TimeSource;
  readonly prng: Prng;
  /** Timer-jitter PRNG (§4.2: its own stream). */
  readonly jitter: Prng;
  readonly n: number;
  readonly self: ReplicaIndex;
  readonly quorums: Quorums;
  readonly effects: EffectBuffer;
  readonly timers: Timers;
  readonly journal = new Journal();
  readonly pipeline: Pipeline;
  readonly clientTable: ClientTable | null;

  // §4.1
  view: View = asView(0);
  logView: View = asView(0);
  status: Status = 'normal';
  /** Sequencer: the head of this replica's log. */
  op: Op = 0;
  /** Highest op applied locally. */
  commitMin: Op = 0;
  /** Highest op known committed. */
  commitMax: Op = 0;
  lastPrepareChecksum = 0n;
  /** Monotonic floor of prepare timestamps (µs). */
  lastTimestamp = 0n;
  /** The last accepted Commit heartbeat's counter (a primary: its own, bumped per heartbeat). */
  heartbeatTimestamp = 0n;
  /** The view whose primary `heartbeatTimestamp` came from (a counter orders one primary's heartbeats only). */
  heartbeatView: View = asView(0);
  /** A restart lost journal entries this replica may have acked: it must not vote (DVC) until caught up. */
  journalIncomplete = false;
  /** The op the replica must apply before `journalIncomplete` clears (set on StartView adoption; null: not yet). */
  incompleteUntil: Op | null = null;
  /** Ticks a backup held every op to commit_max without being able to verify the next (repair-done.ts). */
  unverifiableTicks = 0;
  /** Ticks spent in a view change while abstaining; past a bound the replica votes anyway. */
  incompleteAbstainTicks = 0;
  /**
   * Voting with an incomplete journal (after the abstain bound): its DoViewChange then says
   * nothing (no nack, no header) about ops above its commit point, so it never nacks by omission
   * an op it may have acked before it lost it. Cleared with `journalIncomplete`.
   */
  votesBlind = false;
  /** A restarted replica refuses to lead until a view transition. */
  ceded = false;
  observedNewerView: View = asView(0);
  probeAttempts = 0;
  /** New requests wait until commit_max reaches this op (boot with an uncommitted tail). */
  recoveryBarrier: Op = 0;
  /** Primary: per replica, the view and highest op of the last PrepareOk counted (hand-back.ts). */
  readonly acks: AckProgress[];
  /** Primary: a leadership hand-back draining its pipeline (hand-back.ts), or null. */
  handBack: HandBack | null = null;

  /** Trust anchors of the current log view (cleared when a new log is installed). */
  readonly canon = new Map<Op, CanonicalHeader>();

  vc: ViewChangeState;
  sb: SuperblockState;
  outbox: PendingSend[] = [];
  repair: RepairSession | null = null;
  transfer: TransferState;
  readonly offers = new Map<number, ServedOffer>();
  forwarding: ForwardingState;
  /** Metadata checkpoint in flight (op), or null. */
  checkpointInFlight: Op | null = null;
  /** A checkpoint is due: emitted at the end of the entry point (state machine at commit_min). */
  checkpointWanted = false;
  /** Checkpoint written and recorded but not yet in a durable superblock. */
  checkpointPending: { op: Op; checksum: bigint } | null = null;
  /** Failed appends of applied ops written again since the last append that succeeded (prepare.ts). */
  appendRetries = 0;
  /** Set when the core emitted `fatal`: every later entry point is a no-op. */
  stopped: string | null = null;
  /** Ticks in this life (logs, and the age of a backup's last ack: hand-back.ts). */
  steps = 0;
  /** Coverage marks reached in this life (marks.ts). */
  readonly marks = new Map<Mark, number>();

  constructor(config: ConsensusConfig, plane: Plane, sm: StateMachine, time: TimeSource, prng: Prng) {
    this.config = config;
    this.plane = plane;
    this.sm = sm;
    this.time = time;
    this.prng = prng;
    this.jitter = prng.fork();
    this.n = config.replicaCount;
    this.self = asReplica(config.replica, config.replicaCount);
    this.quorums = quorums(config.replicaCount);
    this.effects = new EffectBuffer(config.effectsCapacity);
    this.timers = new Timers(config.ticks);
    this.pipeline = new Pipeline(config.prepareQueueDepth, config.requestQueueMax, config.requestQueueBytesMax);
    this.clientTable = plane.clientTable ? new ClientTable(config.clientsTableMax) : null;
    this.vc = newViewChangeState();
    this.sb = newSuperblockState();
    this.transfer = newTransferState();
    this.forwarding = newForwardingState(plane.incarnation, config.replica);
    this.acks = newAckProgress(config.replicaCount);
  }

  primaryIndex(view: number = this.view): ReplicaIndex {
    return (view % this.n) as ReplicaIndex;
  }

  /** Primary by index of the current view. */
  isPrimaryByIndex(): boolean {
    return this.primaryIndex() === this.self;
  }

  /** §4.1: acting primary = primary by index, Normal, not ceded. */
  isActingPrimary(): boolean {
    return this.isPrimaryByIndex() && this.status === 'normal' && !this.ceded;
  }

  /** True when the superblock durably holds the current (view, log_view) and the log view's installed head. */
  viewDurable(): boolean {
    const d = this.sb.durable;
    return d !== null && d.view === this.view && d.logView === this.logView && d.logHead === this.sb.logHead;
  }

  transferring(): boolean {
    return this.transfer.stage !== 'idle';
  }

  /** §4.3 is_caught_up_primary. */
  isCaughtUpPrimary(): boolean {
    return (
      this.isActingPrimary() &&
      !this.transferring() &&
      this.commitMin === this.commitMax &&
      this.commitMax >= this.recoveryBarrier
    );
  }

  /**
   * May serve a state transfer (§6.4 step 2: a caught-up primary), except that the recovery
   * barrier does not apply: it holds back new client requests until a boot's uncommitted tail
   * is decided, while the offer is the committed state at commit_min. Requiring it deadlocked a
   * primary whose tail needed the ack of the very backup asking for the transfer (seed 60 of 3:
   * that backup could not hold the tail before it had the state below it).
   */
  servesStateTransfer(): boolean {
    return this.isActingPrimary() && !this.transferring() && this.commitMin === this.commitMax && this.commitMin > 0;
  }

  others(): ReplicaIndex[] {
    const out: ReplicaIndex[] = [];
    for (let r = 0; r < this.n; r++) if (r !== this.self) out.push(r as ReplicaIndex);
    return out;
  }

  /** Drops a frame for one of the core's own reasons (returned, and emitted as `dropped`). */
  drop(command: number, from: number, reason: Drop): string {
    this.effects.push({ kind: 'dropped', command, from, reason });
    return reason;
  }

  /** Drops a frame for a reason a decoder or the state machine named (passed through). */
  dropInvalid(command: number, from: number, reason: string): string {
    this.effects.push({ kind: 'dropped', command, from, reason });
    return reason;
  }

  /** A coverage mark (marks.ts): counted, and emitted as an `event` named `mark`. */
  mark(mark: Mark, detail = ''): void {
    this.marks.set(mark, (this.marks.get(mark) ?? 0) + 1);
    this.effects.push({ kind: 'event', name: 'mark', detail: detail === '' ? mark : `${mark} ${detail}` });
  }

  event(name: string, detail: string): void {
    this.effects.push({ kind: 'event', name, detail });
  }

  fatal(reason: string): void {
    if (this.stopped !== null) return;
    this.stopped = reason;
    this.effects.push({ kind: 'fatal', reason });
  }
}
