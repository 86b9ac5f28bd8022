/**
 * The fault schedule of a run (the nemesis): crashes and restarts, network partitions, and the
 * scenarios built from them. It owns every replica's life (up, down until a tick, down for good,
 * restarted and still catching up) and the partition currently in force.
 *
 *   background   random crashes (power loss or process kill) of ANY up replica, a recovering one
 *                included, and random partitions (isolate one, random halves, one-way), short
 *                (exponential) or long (≥ 2,000 ticks: the view-change fallback stages)
 *   targeted     crash a replica while it repairs its journal or runs a state transfer
 *   rolling      restart every replica in turn, the next one killed soon after the previous one
 *                came back (before it caught up, when the budget allows)
 *   isolate      crash a replica, and while it catches up after its restart, isolate another one
 *                for 2,500+ ticks (a stalled view change with an abstaining voter)
 *   cluster kill every replica killed at once (only where no kill can lose an acknowledged op)
 *   pause        a replica's process stops (SIGSTOP, a long GC pause): it neither runs nor reads;
 *                frames to it wait and its peers' per-peer queues back up until they overrun
 *   disk errors  on a replica with a faulty disk, the next 1–3 mutating calls fail (EIO, ENOSPC):
 *                the core rolls the write back or retries, or the driver stops (journal_io,
 *                partition_io, transfer_io) and the process exits: a crash like a kill
 *   disk stall   (scenarios only, `stall`: not in the random mix) a replica's disk completes
 *                nothing for a while (a hung fsync, a throttled volume): its writes land but
 *                every completion waits for the stall's end, so its cores withhold their gated
 *                sends (the outbox fills) and it acks nothing
 *
 * The one bound: at most `lossBudget` (max(1, f)) replicas may be *lossy* at once: down after a
 * crash that may have lost writes it acknowledged, or restarted after one and not caught up yet.
 * A power loss is always lossy (unsynced writes are gone); a process kill is not: both planes
 * write every prepare to a file before acknowledging it (metadata WAL, partition journal) and the
 * page cache survives a kill. Beyond that bound an acknowledged op may legitimately be lost; within it every
 * checker must hold. Crashes that lose nothing overlap freely.
 */
import { METADATA_GROUP_ID, type ReplicaRole } from '@shoal/consensus';
import type { Prng } from '@shoal/stdx';
import { PARTITION_JOURNAL_DIR } from '@shoal/storage';
import { type Activity, activities, busyWithLiveSource } from './activity.js';
import type { Marks } from './marks.js';
import type { Network } from './network.js';
import type { SimNode } from './node.js';
import { type SimulationOptions, faultTolerance } from './options.js';
import { exponential } from './random.js';
import type { Timeline } from './timeline.js';
import type { TraceHash } from './trace.js';

/** Ticks an injected disk error counts against the loss budget (the write it hits may come late). */
const ERROR_PENDING_TICKS = 300;

/** Share of the isolate scenario's power losses that also lose the victim's partition journals. */
const JOURNAL_LOSS_SHARE = 0.5;

/** A partition held at least this long reaches the blind and short-log voting stages. */
export const LONG_PARTITION_TICKS = 2000;

/** How long an armed targeted crash waits for a replica busy with its activity. */
const TARGET_WAIT_TICKS = 500;

export type CrashKind = 'power' | 'process';

/** What the schedule needs from the simulation around it. */
export interface FaultHost {
  readonly options: SimulationOptions;
  readonly nodes: readonly SimNode[];
  readonly network: Network;
  readonly marks: Marks;
  readonly trace: TraceHash;
  readonly timeline: Timeline | null;
  readonly tick: number;
  /** Replicas whose disks inject faults (at most f). */
  readonly faulty: ReadonlySet<number>;
  /** Boots a node (the simulation checks and records it). */
  boot(node: SimNode): void;
  /** Before a node's memory is dropped (checkers remember what it had made durable). */
  crashing(node: SimNode, kind: CrashKind): void;
}

interface Life {
  /** Down until this tick (Infinity: for good); -1 when up. */
  downUntil: number;
  /** Its last crash may have lost writes it had acknowledged. */
  lossy: boolean;
  /** Restarted and not caught up: per group, the commit it must reach. */
  recovering: Map<bigint, number> | null;
  /**
   * How far its metadata had applied when a lossy crash hit it (-1: none since it caught up).
   * Until its metadata is back there, it may not have reopened every group the crash may have
   * damaged (reopened groups must hold what they acked: caughtUp). Its peers alone are no
   * witness: down or restarting themselves, they report nothing (seed 45 of 3: a replica counted
   * as caught up before it had even reopened the group whose journal the power loss had cut).
   */
  lossyAtCommit: number;
  /**
   * The most its metadata ever applied, over all its lives (taken at each crash). A replica
   * restarted by a process kill may not have reopened its groups yet when a power loss hits it:
   * their files on its disk are from the earlier life, so the lossy crash must wait for the
   * metadata of THAT life (seed 313 of 3: killed at metadata op 6 hosting the group, power loss
   * at op 5 with the group not yet reopened, counted caught up at op 5; a second replica's power
   * loss then lost a committed op both had held only in their page cache).
   */
  metadataHigh: number;
  /**
   * It missed ops it may have acknowledged when it last went down (`missesAcked` then). While it
   * is down nothing else tells: its role is gone with the process (seed 1003392 of 3: a replica
   * with a faulty op 21, down at the degraded phase's pick and restarted by it, was kept as a
   * survivor; op 21's only body went down for good).
   */
  missedAcks: boolean;
  /** Paused until this tick; -1 when running. */
  pausedUntil: number;
}

interface Rolling {
  readonly order: number[];
  next: number;
  at: number;
  overlapped: boolean;
}

interface Isolate {
  readonly victim: number;
  /** Tick the isolation starts once the victim is back (it catches up meanwhile). */
  at: number;
}

export class Faults {
  readonly #host: FaultHost;
  readonly #p: Prng;
  readonly #lives: Life[];
  /** The partition in force, healed at this tick (-1: none). */
  #partitionUntil = -1;
  #partitionStarted = 0;
  #rolling: Rolling | null = null;
  #isolate: Isolate | null = null;
  /** A targeted crash waiting for its victim (`#targetedCrash`), or null. */
  #armed: { readonly activity: Activity; readonly until: number } | null = null;
  /** Learned from the first partition driver seen: does the partition plane journal to disk? */
  readonly stats = { crashes: 0, restarts: 0, partitions: 0 };

  /** Per replica: its disk completes nothing before this tick (-1: no stall). */
  readonly #stalledUntil: number[];

  constructor(host: FaultHost, prng: Prng) {
    this.#host = host;
    this.#p = prng;
    this.#stalledUntil = host.nodes.map(() => -1);
    this.#lives = host.nodes.map(() => ({ downUntil: -1, lossy: false, recovering: null, lossyAtCommit: -1, metadataHigh: 0, missedAcks: false, pausedUntil: -1 }));
  }

  get lossBudget(): number {
    return Math.max(1, faultTolerance(this.#host.options.replicas));
  }

  isDown(index: number): boolean {
    return (this.#lives[index] as Life).downUntil >= 0;
  }

  isPaused(index: number): boolean {
    return (this.#lives[index] as Life).pausedUntil >= 0;
  }

  isRecovering(index: number): boolean {
    return (this.#lives[index] as Life).recovering !== null;
  }

  /** Lossy replicas: down or catching up after a crash that may have lost acknowledged writes (or dead). */
  lossyCount(except = -1): number {
    let count = 0;
    for (let i = 0; i < this.#lives.length; i++) if (i !== except && this.#lossyUnsafe(i)) count++;
    return count;
  }

  /** Is replica `i` lossy now (lossyCount counts these)? */
  isLossy(i: number): boolean {
    return this.#lossyUnsafe(i);
  }

  #lossyUnsafe(i: number): boolean {
    const life = this.#lives[i] as Life;
    if ((this.#host.nodes[i] as SimNode).dead !== null) return true;
    // An injected disk error may still stop it: it holds a place in the budget meanwhile.
    if ((this.#errorPendingUntil.get(i) ?? -1) > this.#host.tick) return true;
    return life.lossy && (life.downUntil >= 0 || life.recovering !== null);
  }

  /** Can `victim` crash this way without breaking the loss budget? */
  #mayCrash(victim: SimNode, kind: CrashKind): boolean {
    if (!victim.up) return false;
    if (!this.#lossy(victim, kind)) return true;
    return this.lossyCount(victim.index) + 1 <= this.lossBudget;
  }

  #lossy(_node: SimNode, kind: CrashKind): boolean {
    if (this.#host.options.replicas === 1) return false; // only process kills; a solo replica commits at once
    return kind === 'power';
  }

  // ---- the safety phase ---------------------------------------------------------------------

  /** One tick of the safety phase: maybe start or advance a fault. */
  step(): void {
    const o = this.#host.options;
    const p = this.#p;
    const n = o.replicas;
    if (o.crashProbability > 0 && p.float() < o.crashProbability) this.#randomCrash();
    if (n > 1) {
      if (o.targetedCrashProbability > 0 && this.#armed === null && p.float() < o.targetedCrashProbability) this.#armTargetedCrash();
      this.#targetedCrash();
      if (this.#rolling === null && o.rollingRestartProbability > 0 && p.float() < o.rollingRestartProbability) this.#startRolling();
      if (this.#isolate === null && o.isolateAfterRestartProbability > 0 && p.float() < o.isolateAfterRestartProbability) this.#startIsolate();
      if (o.clusterKillProbability > 0 && p.float() < o.clusterKillProbability) this.#clusterKill();
      if (o.pauseProbability > 0 && p.float() < o.pauseProbability) this.#pause();
      if (o.diskErrorProbability > 0 && this.#host.faulty.size > 0 && p.float() < o.diskErrorProbability) this.#diskError();
      this.#advanceRolling();
      this.#advanceIsolate();
      if (this.#partitionUntil < 0) {
        if (o.partitionProbability > 0 && p.float() < o.partitionProbability) {
          const long = p.float() < o.longPartitionShare;
          this.#partition(long ? this.#longDuration() : 1 + exponential(p, 1 / Math.max(o.unpartitionProbability, 1e-6)), null);
        }
      } else if (this.#host.tick >= this.#partitionUntil) {
        this.#healPartition();
      }
    }
  }

  #randomCrash(): void {
    const p = this.#p;
    const n = this.#host.options.replicas;
    const candidates = this.#host.nodes.filter((x) => x.up);
    if (candidates.length === 0) return;
    const victim = p.pick(candidates);
    const kind: CrashKind = n === 1 ? 'process' : p.float() < this.#host.options.powerShare ? 'power' : 'process';
    if (!this.#mayCrash(victim, kind)) return;
    this.crash(victim, kind, this.#downTicks());
  }

  /**
   * A targeted crash hits a replica in the middle of a journal repair or of a state transfer
   * (half each), from a live primary. It is armed first and fires at the first victim within
   * `TARGET_WAIT_TICKS`: a repair lasts a tick or two, a transfer hundreds, so a crash drawn
   * per tick among whoever is busy at that tick would hardly ever land in a repair.
   */
  #armTargetedCrash(): void {
    const activity: Activity = this.#p.float() < 0.5 ? 'repair' : 'transfer';
    this.#armed = { activity, until: this.#host.tick + TARGET_WAIT_TICKS };
  }

  #targetedCrash(): void {
    const armed = this.#armed;
    if (armed === null) return;
    if (this.#host.tick > armed.until) {
      this.#armed = null;
      return;
    }
    const nodes = this.#host.nodes;
    const busy = nodes.filter((x) => busyWithLiveSource(x, nodes, armed.activity));
    if (busy.length === 0) return;
    this.#armed = null;
    const p = this.#p;
    const victim = p.pick(busy);
    const kind: CrashKind = p.float() < this.#host.options.powerShare ? 'power' : 'process';
    if (!this.#mayCrash(victim, kind)) return;
    this.crash(victim, kind, this.#downTicks());
  }

  #startRolling(): void {
    const order = this.#p.shuffle(Array.from({ length: this.#host.options.replicas }, (_, i) => i));
    this.#rolling = { order, next: 0, at: this.#host.tick, overlapped: false };
  }

  #advanceRolling(): void {
    const r = this.#rolling;
    if (r === null || this.#host.tick < r.at) return;
    const index = r.order[r.next] as number;
    const node = this.#host.nodes[index] as SimNode;
    if (!node.up) {
      if (node.dead !== null) this.#rolling = null; // a replica that cannot boot ends the round
      return;
    }
    if (!this.#mayCrash(node, 'process')) return; // wait until the previous one caught up
    const previous = r.next > 0 ? (r.order[r.next - 1] as number) : -1;
    if (previous >= 0 && (this.isRecovering(previous) || this.isDown(previous))) r.overlapped = true;
    const down = 1 + exponential(this.#p, 40);
    this.crash(node, 'process', down);
    r.next++;
    if (r.next >= r.order.length) {
      this.#host.marks.hit('fault.rolling_restart');
      if (r.overlapped) this.#host.marks.hit('fault.rolling_restart_overlap');
      this.#rolling = null;
      return;
    }
    r.at = this.#host.tick + down + this.#p.below(300);
  }

  #startIsolate(): void {
    const p = this.#p;
    const candidates = this.#host.nodes.filter((x) => x.up);
    if (candidates.length < 2 || this.#partitionUntil >= 0) return;
    const victim = p.pick(candidates);
    const kind: CrashKind = p.float() < this.#host.options.powerShare ? 'power' : 'process';
    if (!this.#mayCrash(victim, kind)) return;
    const down = 1 + exponential(p, 60);
    this.crash(victim, kind, down);
    if (kind === 'power' && !this.#host.faulty.has(victim.index) && p.float() < JOURNAL_LOSS_SHARE) this.#loseJournals(victim);
    this.#isolate = { victim: victim.index, at: this.#host.tick + down + p.below(150) };
  }

  /**
   * The down victim's partition journals are gone (a lost journal volume; an operator's rejoin
   * of the partition plane): its groups boot with prior state and no journal, so they abstain,
   * then vote blind (the core's `journalLost`). With durable partition journals this is the one
   * way a partition replica may have acked ops it knows nothing about; a power loss alone loses
   * a bounded tail (faulty ops). Only on disks without injected faults (a pending injected error
   * must hit the replica's own writes).
   */
  #loseJournals(node: SimNode): void {
    const disk = node.disk;
    const streams = node.layout.streamsDir;
    const dirs = new Set<string>();
    for (const path of disk.listFiles()) {
      const at = path.lastIndexOf(`/${PARTITION_JOURNAL_DIR}/`);
      if (!path.startsWith(streams) || at < 0) continue;
      disk.unlink(path);
      dirs.add(path.slice(0, at + PARTITION_JOURNAL_DIR.length + 1));
    }
    for (const dir of dirs) disk.fsyncDir(dir);
    if (dirs.size === 0) return;
    this.#host.marks.hit('fault.journal_lost');
    this.#host.timeline?.fault(this.#host.tick, node.index, 'journal loss', `${dirs.size} partition journals`);
  }

  #advanceIsolate(): void {
    const s = this.#isolate;
    if (s === null || this.#host.tick < s.at) return;
    this.#isolate = null;
    if (!this.isRecovering(s.victim) || this.#partitionUntil >= 0) return; // caught up already, or cut off another way
    const others = this.#host.nodes.filter((x) => x.up && x.index !== s.victim && !this.isRecovering(x.index));
    if (others.length === 0) return;
    const isolated = this.#p.pick(others).index;
    this.#host.marks.hit('fault.isolate_after_restart');
    this.#partition(this.#longDuration(), isolated);
  }

  #clusterKill(): void {
    const nodes = this.#host.nodes.filter((x) => x.up);
    if (nodes.length < this.#host.options.replicas) return;
    if (nodes.some((x) => this.#lossy(x, 'process'))) return;
    this.#host.marks.hit('fault.cluster_kill');
    for (const node of nodes) this.crash(node, 'process', this.#downTicks());
  }

  /** Replicas whose disk returned an injected error (their io stops are expected exits). */
  readonly diskErrored = new Set<number>();
  readonly #errorPendingUntil = new Map<number, number>();

  #diskError(): void {
    const candidates = this.#host.nodes.filter((x) => x.up && this.#host.faulty.has(x.index) && this.#mayCrash(x, 'process'));
    if (candidates.length === 0) return;
    const node = this.#p.pick(candidates);
    const code = this.#p.bool() ? 'EIO' : 'ENOSPC';
    const count = this.#p.range(1, 3);
    node.disk.failNext(code, count);
    this.diskErrored.add(node.index);
    this.#errorPendingUntil.set(node.index, this.#host.tick + ERROR_PENDING_TICKS);
    this.#host.marks.hit('fault.disk_write_error');
    this.#host.trace.mix(11, node.index, count);
    this.#host.timeline?.fault(this.#host.tick, node.index, 'disk error', `${code} x${count}`);
  }

  /**
   * A driver stopped on an injected disk error: the process exits (its supervisor restarts it
   * after the usual downtime). Within the loss budget by construction (errors are injected only
   * where a kill may happen); a second exit in the same life is ignored.
   */
  exitOnIoError(index: number): void {
    const node = this.#host.nodes[index] as SimNode;
    if (!node.up) return;
    this.#host.marks.hit('fault.disk_error_exit');
    this.crash(node, 'process', this.#downTicks(), false);
  }

  /** Ticks until replica `index`'s disk completes writes again (0: not stalled). */
  stallTicks(index: number): number {
    return Math.max(0, (this.#stalledUntil[index] as number) - this.#host.tick);
  }

  /** Stalls replica `index`'s disk for `ticks` (scenario tests call it directly). */
  stall(index: number, ticks: number): void {
    this.#stalledUntil[index] = this.#host.tick + ticks;
    this.#host.trace.mix(12, index, ticks);
    this.#host.timeline?.fault(this.#host.tick, index, 'disk stall', `${ticks} ticks`);
  }

  #pause(): void {
    const running = this.#host.nodes.filter((x) => x.up && !this.isPaused(x.index));
    if (running.length === 0) return;
    const node = this.#p.pick(running);
    this.pause(node.index, 1 + exponential(this.#p, this.#host.options.pauseMeanTicks));
  }

  /** Pauses replica `index`'s process for `ticks` (scenario tests call it directly). */
  pause(index: number, ticks: number): void {
    const node = this.#host.nodes[index] as SimNode;
    if (!node.up || this.isPaused(index)) return;
    (this.#lives[index] as Life).pausedUntil = this.#host.tick + ticks;
    this.#host.network.setClogged(index, true);
    this.#host.marks.hit('fault.process_pause');
    this.#host.trace.mix(10, index, ticks);
    this.#host.timeline?.fault(this.#host.tick, index, 'pause', `${ticks} ticks`);
  }

  #resume(index: number): void {
    const life = this.#lives[index] as Life;
    if (life.pausedUntil < 0) return;
    life.pausedUntil = -1;
    this.#host.network.setClogged(index, false);
    this.#host.timeline?.fault(this.#host.tick, index, 'resume', '');
  }

  #downTicks(): number {
    return 1 + exponential(this.#p, this.#host.options.downMeanTicks);
  }

  #longDuration(): number {
    return this.#host.options.longPartitionTicks + this.#p.below(1000);
  }

  // ---- crashes and restarts -----------------------------------------------------------------

  /** Crashes `node` for `downTicks`; `scheduled` crashes (safety phase) count toward the fault marks. */
  crash(node: SimNode, kind: CrashKind, downTicks: number, scheduled = true): void {
    const host = this.#host;
    const life = this.#lives[node.index] as Life;
    const marks = host.marks;
    this.stats.crashes++;
    if (scheduled) {
      marks.hit(kind === 'power' ? 'fault.crash_power' : 'fault.crash_process');
      if (life.recovering !== null) marks.hit('fault.crash_of_recovering');
      if (this.#lives.some((l, i) => i !== node.index && (l.downUntil >= 0 || l.recovering !== null))) marks.hit('fault.crash_while_other_recovers');
      const busy = activities(node);
      if (busy.repair) marks.hit('fault.crash_during_repair');
      if (busy.transfer) marks.hit('fault.crash_during_transfer');
    }
    const lossy = this.#lossy(node, kind);
    life.missedAcks = missesAcked(node);
    // (the groups it ever hosted reopen as its metadata applies again what it had applied)
    life.metadataHigh = Math.max(life.metadataHigh, node.metadata?.replica.role.commitMin ?? 0);
    if (lossy) life.lossyAtCommit = Math.max(life.lossyAtCommit, life.metadataHigh);
    this.#resume(node.index);
    host.crashing(node, kind);
    host.trace.mix(7, node.index, kind === 'power' ? 1 : 0);
    host.timeline?.fault(host.tick, node.index, kind === 'power' ? 'power loss' : 'kill', lossy ? 'lossy' : '');
    if (kind === 'power') {
      const seen = node.disk.faultLog.length;
      if (scheduled && partitionBytesUnsynced(node)) marks.hit('fault.power_loss_partition_data');
      node.crash();
      const streams = node.layout.streamsDir;
      for (const f of node.disk.faultLog.slice(seen)) {
        if (scheduled && f.path.startsWith(streams) && (f.kind === 'torn_write' || f.kind === 'unsynced_persisted')) marks.hit('fault.torn_partition_write');
      }
    } else {
      node.kill();
    }
    host.network.setDown(node.index, true);
    life.downUntil = host.tick + downTicks;
    life.lossy = life.lossy || lossy;
    life.recovering = null;
  }

  /** Restarts every replica whose downtime is over; resumes every pause that is over. */
  restartDue(): void {
    const now = this.#host.tick;
    for (let i = 0; i < this.#lives.length; i++) {
      const life = this.#lives[i] as Life;
      if (life.downUntil >= 0 && life.downUntil <= now) this.restart(i);
      if (life.pausedUntil >= 0 && life.pausedUntil <= now) this.#resume(i);
    }
  }

  restart(index: number): void {
    const host = this.#host;
    const node = host.nodes[index] as SimNode;
    const life = this.#lives[index] as Life;
    this.stats.restarts++;
    life.downUntil = -1;
    host.network.setDown(index, false);
    host.trace.mix(8, index, host.tick);
    host.timeline?.fault(host.tick, index, 'restart', '');
    const targets = new Map<bigint, number>();
    for (const other of host.nodes) {
      if (other === node || !other.up || other.metadata === null) continue;
      targets.set(METADATA_GROUP_ID, Math.max(targets.get(METADATA_GROUP_ID) ?? 0, other.metadata.status.commitMax));
      for (const [group, entry] of other.partitions) targets.set(group, Math.max(targets.get(group) ?? 0, entry.driver.status.commitMax));
    }
    host.boot(node);
    life.recovering = node.up ? targets : null;
    if (!node.up) life.lossy = true; // refused to boot: down for good
  }

  /**
   * A restarted replica is caught up once it holds every group the others hold, each at least
   * where the others were at its restart, its boot latch open and its metadata applied at least
   * what it had applied at its last lossy crash (so every group it hosted then is open again), and none of its groups
   * is still incomplete or holds faulty ops (ops it may have acked and lost).
   */
  updateRecovering(): void {
    const nodes = this.#host.nodes;
    for (let i = 0; i < this.#lives.length; i++) {
      const life = this.#lives[i] as Life;
      if (life.recovering === null) continue;
      const node = nodes[i] as SimNode;
      if (caughtUp(node, life.recovering, nodes) && (node.metadata?.replica.role.commitMin ?? -1) >= life.lossyAtCommit) {
        life.recovering = null;
        life.lossy = false;
        life.lossyAtCommit = -1;
        this.#host.timeline?.fault(this.#host.tick, i, 'caught up', '');
      }
    }
  }

  // ---- partitions ---------------------------------------------------------------------------

  /** Cuts the replica network for `duration` ticks: `isolated` alone, or a random shape. */
  #partition(duration: number, isolated: number | null): void {
    const host = this.#host;
    const n = host.options.replicas;
    const p = this.#p;
    this.stats.partitions++;
    this.#partitionUntil = host.tick + duration;
    this.#partitionStarted = host.tick;
    const mode = isolated !== null ? 0 : p.below(3);
    const side = new Array<boolean>(n).fill(false);
    if (isolated !== null) side[isolated] = true;
    else if (mode === 0) side[p.below(n)] = true; // isolate one
    else for (let i = 0; i < n; i++) side[i] = p.bool(); // random halves
    const oneWay = isolated === null && p.below(3) === 0;
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        if (a === b || side[a] === side[b]) continue;
        if (oneWay && side[a] === true) continue; // only one direction is cut
        host.network.setBlocked(a, b, true);
      }
    }
    host.trace.mix(9, mode, oneWay ? 1 : 0);
    const cut = side.map((s, i) => (s ? i : -1)).filter((i) => i >= 0);
    host.timeline?.partition(host.tick, this.#partitionUntil, cut, oneWay);
  }

  #healPartition(): void {
    const host = this.#host;
    if (this.#partitionUntil < 0) return;
    const held = host.tick - this.#partitionStarted;
    host.marks.hit(held >= LONG_PARTITION_TICKS ? 'fault.partition_long' : 'fault.partition_short');
    host.network.healAll();
    this.#partitionUntil = -1;
    host.trace.mix(6, 0, host.tick);
    host.timeline?.heal(host.tick);
  }

  // ---- the liveness phases ------------------------------------------------------------------

  /** Faults stop: the network heals, every crashed replica restarts (except `keepDown`). */
  healAll(keepDown: ReadonlySet<number> = new Set()): void {
    this.#healPartition();
    this.#rolling = null;
    this.#isolate = null;
    this.#stalledUntil.fill(-1); // (completions already delayed still come at their stall's end)
    for (let i = 0; i < this.#lives.length; i++) this.#resume(i);
    for (let i = 0; i < this.#lives.length; i++) {
      if (keepDown.has(i)) continue;
      if ((this.#lives[i] as Life).downUntil >= 0 && (this.#host.nodes[i] as SimNode).dead === null) this.restart(i);
    }
  }

  /**
   * The degraded phase: f replicas go (or stay) down for good. Every lossy replica and every
   * replica with a faulty disk must be among them (a survivor must hold what was acknowledged,
   * undamaged: with f gone, nobody else can vouch for it); the rest are picked at random, the
   * metadata primary first half the time. Returns the replicas kept down (null: no such set).
   */
  degrade(): Set<number> | null {
    const host = this.#host;
    const f = faultTolerance(host.options.replicas);
    if (f === 0) return null;
    // Survivors must hold what was acknowledged, undamaged: lossy replicas and faulty disks go first.
    const down = new Set<number>();
    for (let i = 0; i < this.#lives.length; i++) if (this.#lossyUnsafe(i) || host.faulty.has(i) || this.#missesAcked(i)) down.add(i);
    if (down.size > f) return null;
    const p = this.#p;
    const healthy = host.nodes.filter((x) => !down.has(x.index) && x.dead === null).map((x) => x.index);
    const primary = host.nodes.find((x) => x.up && x.metadata?.replica.status.primary === true);
    if (down.size < f && primary !== undefined && !down.has(primary.index) && p.bool()) down.add(primary.index);
    for (const i of p.shuffle(healthy)) {
      if (down.size >= f) break;
      down.add(i);
    }
    this.healAll(down);
    for (const i of down) {
      const node = host.nodes[i] as SimNode;
      if (node.up) this.crash(node, p.float() < host.options.powerShare ? 'power' : 'process', Number.POSITIVE_INFINITY, false);
      (this.#lives[i] as Life).downUntil = Number.POSITIVE_INFINITY;
    }
    return down;
  }

  /** `missesAcked`, and for a replica that is down, what it was when it went down. */
  #missesAcked(i: number): boolean {
    const node = this.#host.nodes[i] as SimNode;
    return node.up ? missesAcked(node) : (this.#lives[i] as Life).missedAcks;
  }

  /** Ends the degraded phase: the downed replicas come back. */
  restore(down: ReadonlySet<number>): void {
    for (const i of down) if ((this.#host.nodes[i] as SimNode).dead === null) this.restart(i);
  }
}

/**
 * The replica holds again every op it may have acknowledged before it crashed: its journal is
 * complete and nothing is faulty. The others' commit points alone are no bound: a replica that
 * restarts while they are down (or restarted themselves and do not know their commit yet) sees
 * targets of 0, and was counted as caught up while it still missed ops only it and one other
 * replica had held (seed 5 of 3: two lossy replicas at once, a committed op on one replica only).
 */
function holdsWhatItAcked(role: ReplicaRole): boolean {
  return !role.journalIncomplete && role.faultyOps === 0;
}

/**
 * An up replica that no longer holds ops it may have acknowledged (faulty ops: an integrity
 * truncation, a hole the restart could not explain; an incomplete journal), whatever crash (or
 * none) led there: it cannot vouch for them, so it is as lossy as a power loss for the degraded
 * phase (seed 100472 of 3: an integrity truncation dropped committed ops 82-84 on the replica
 * kept up, and the one downed for good held their only other copy).
 */
function missesAcked(node: SimNode): boolean {
  if (!node.up || node.metadata === null) return false;
  if (!holdsWhatItAcked(node.metadata.replica.role)) return true;
  for (const entry of node.partitions.values()) if (!holdsWhatItAcked(entry.driver.replica.role)) return true;
  return false;
}

/** Replica `node` is up and no longer holds ops of `group` it may have acknowledged (`missesAcked`, for one group). */
export function missesAckedIn(node: SimNode, group: bigint): boolean {
  if (!node.up || node.metadata === null) return false;
  const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
  return driver !== undefined && !holdsWhatItAcked(driver.replica.role);
}

function caughtUp(node: SimNode, targets: Map<bigint, number>, nodes: readonly SimNode[]): boolean {
  // Behind its boot latch a node hosts none of its groups yet (node.ts): nothing it may have
  // acknowledged and lost is held again, whatever its metadata applied.
  if (!node.up || node.metadata === null || node.latched) return false;
  for (const [group, target] of targets) {
    const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
    if (driver === undefined) return false;
    if (driver.replica.role.commitMin < target) return false;
  }
  if (!holdsWhatItAcked(node.metadata.replica.role)) return false;
  for (const entry of node.partitions.values()) if (!holdsWhatItAcked(entry.driver.replica.role)) return false;
  for (const other of nodes) {
    if (other === node || !other.up) continue;
    for (const group of other.partitions.keys()) if (!node.partitions.has(group)) return false;
  }
  return true;
}

/** Does any partition-plane file hold bytes a power loss would discard? */
function partitionBytesUnsynced(node: SimNode): boolean {
  const disk = node.disk;
  const streams = node.layout.streamsDir;
  for (const path of disk.listFiles()) {
    if (!path.startsWith(streams)) continue;
    const durable = disk.durableImage(path);
    const fd = disk.open(path, 'read');
    try {
      if (durable === null || disk.size(fd) !== durable.length) return true;
    } finally {
      disk.close(fd);
    }
  }
  return false;
}
