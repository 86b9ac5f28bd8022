/**
 * One deterministic run: a cluster of SimNodes (production drivers on SimDisks), a simulated
 * network, simulated clients, faults (faults.ts), and the checkers.
 *
 *   step (one tick = 10 ms):  deliver ready packets (random order) ─▶ every node ticks (drivers,
 *                              host duties, group commit) ─▶ every client ticks ─▶ faults
 *                              (safety phase) ─▶ restarts due ─▶ per-peer queues flush (the
 *                              turn ends) ─▶ watermark samples
 *
 *   safety phase   `safetyTicks` with faults: loss, duplication, reordering, corruption, bounded
 *                  links and per-peer queues, partitions short and long, crashes (power loss or
 *                  process kill, overlapping within the loss budget), rolling restarts, crashes in
 *                  repair / state transfer, disk faults on at most f replicas
 *   degraded       (some seeds) f replicas down for good, the network healed: clients keep
 *                  working and must get answers; then the live replicas must converge; 'restored'
 *                  seeds then bring the f back and converge again
 *   liveness phase faults stop, the network heals, every crashed replica restarts, clients finish
 *                  what they started; every live replica must reach the same commit for every
 *                  group within `livenessTicks`, else the seed fails
 *   final checks   acked metadata vs the committed log and the shadow model, replica states vs
 *                  the model, every acked batch readable on every live replica, consumer offsets
 *                  (offsets.ts)
 */
import { METADATA_GROUP_ID, dvcRecordFromFrame, type Completion, type ReplicaRole } from '@shoal/consensus';
import { Command, DoViewChangeHeaderView, HEADER_SIZE, OFFSET_COMMAND, PrepareOkHeaderView, packPartitionGroup, unpackPartitionGroup } from '@shoal/protocol';
import type { AppliedOp, InstalledSnapshot } from '@shoal/replica';
import { type Prng, equalBytes } from '@shoal/stdx';
import { NO_FAULTS, SimDisk } from '@shoal/storage';
import { AckOracle } from './ack-oracle.js';
import { Checker, SafetyViolation } from './checker.js';
import { type AckRecord, SimClient } from './client.js';
import { type CrashKind, Faults, LONG_PARTITION_TICKS, missesAckedIn } from './faults.js';
import { Marks } from './marks.js';
import { Network } from './network.js';
import { SimNode } from './node.js';
import { OffsetChecker } from './offsets.js';
import { type SimulationOptions, faultTolerance } from './options.js';
import { sameMessages } from './stored-batch.js';
import { Salt, exponential, stream } from './random.js';
import type { Timeline } from './timeline.js';
import { TraceHash } from './trace.js';
import { DATA_STREAM, DATA_TOPIC, type WorkOp } from './workload.js';

export interface SimulationResult {
  readonly seed: number;
  readonly replicas: number;
  readonly ok: boolean;
  /** The violation or liveness failure, with the tick it happened at. */
  readonly failure: string | null;
  readonly traceHash: string;
  readonly ticks: number;
  /** Distinct ops committed cluster-wide, all groups. */
  readonly committedOps: number;
  readonly stats: {
    readonly crashes: number;
    readonly restarts: number;
    readonly partitions: number;
    readonly network: Network['stats'];
    readonly metadataAcks: number;
    readonly sendAcks: number;
    readonly predictions: number;
    readonly deadReplicas: number;
    readonly detectedCorruption: number;
    readonly offsetAcks: number;
  };
  /** Coverage marks this run reached (name → hits). */
  readonly marks: Record<string, number>;
}

/** Test-only hooks (checker self-tests). */
export interface SimulationHooks {
  /** Rewrites a commit's checksum as the checker sees it. */
  readonly forgeCommit?: (node: number, group: bigint, op: number, checksum: bigint) => bigint;
  /** Rewrites an ack before the checker sees it. */
  readonly forgeAck?: (record: AckRecord) => AckRecord;
  /** Rewrites (or repeats) an applied op before the checker sees it. */
  readonly forgeApplied?: (node: number, op: AppliedOp) => readonly AppliedOp[];
  /** Runs after the liveness phase, before the final checks. */
  readonly beforeFinalChecks?: (sim: Simulation) => void;
  /** Scripted clients (scenario tests): client `index` runs only what this returns (null: nothing now). */
  readonly script?: (client: number) => WorkOp | null;
  /** Scripted faults (scenario tests): true drops this replica-to-replica frame on delivery. */
  readonly dropReplicaFrame?: (from: number, to: number, frame: Uint8Array) => boolean;
}

/** A liveness timeout while more replicas than the loss budget allows are lossy: not a failure. */
class BeyondLossBudget extends Error {}

const prepareOkView = new PrepareOkHeaderView();
const doViewChangeView = new DoViewChangeHeaderView();

export class Simulation {
  readonly options: SimulationOptions;
  readonly nodes: SimNode[] = [];
  readonly clients: SimClient[] = [];
  readonly network: Network;
  readonly checker: Checker;
  readonly ackOracle: AckOracle;
  readonly offsets = new OffsetChecker();
  readonly trace = new TraceHash();
  readonly marks = new Marks();
  readonly timeline: Timeline | null;
  readonly faults: Faults;
  readonly #latency: Prng[];
  readonly #hooks: SimulationHooks;
  readonly #faulty: Set<number>;
  #tick = 0;
  #phase: 'safety' | 'degraded' | 'liveness' = 'safety';
  #failure: string | null = null;
  /** Acked batches found damaged (and refused) on replicas with injected disk faults. */
  #detectedCorruption = 0;
  /** Answers that made progress (committed metadata replies, batch acks, offset writes). */
  #productive = 0;
  /** Per node: group → tick it entered its current view change (sampled). */
  readonly #viewChangeSince: Map<bigint, number>[];
  #queueDropped = 0;
  #evicted = 0;
  #maxGroups = 0;
  /** Nodes whose driver stopped on an injected disk error: they exit at the end of the step. */
  readonly #exiting = new Set<number>();

  constructor(options: SimulationOptions, hooks: SimulationHooks = {}, timeline: Timeline | null = null) {
    this.options = options;
    this.#hooks = hooks;
    this.timeline = timeline;
    const seed = options.seed;
    const n = options.replicas;
    this.network = new Network(n, options.clients, stream(seed, Salt.network), options.network);
    this.checker = new Checker(n);
    this.ackOracle = new AckOracle(n);
    if (hooks.forgeCommit !== undefined) this.checker.forgeCommit = hooks.forgeCommit;
    this.#latency = Array.from({ length: n }, (_, i) => stream(seed, Salt.clock, i + 1000));
    this.#viewChangeSince = Array.from({ length: n }, () => new Map());
    const faultyPick = stream(seed, Salt.faults, 7);
    const order = faultyPick.shuffle(Array.from({ length: n }, (_, i) => i));
    this.#faulty = new Set(order.slice(0, Math.min(options.faultyReplicas, faultTolerance(n))));
    const cluster = 0x5348_4f41_4c00_0000_0000_0000_0000_0001n;
    const env = {
      replicaCount: n,
      cluster,
      messagesRequiredToSave: options.messagesRequiredToSave,
      partitionPipelineDepth: options.partitionPipelineDepth,
      partitionGroupWaitDepth: options.partitionGroupWaitDepth,
      asyncFrontier: options.asyncFrontier,
      now: (): number => this.#tick,
      send: (from: number, to: number, frame: Uint8Array): void => {
        if (to < n) this.#observeReplicaFrame(from, frame);
        this.network.send(from, to, frame, this.#tick);
      },
      linked: (from: number, to: number): boolean => this.network.linked(from, to),
      committed: (node: number, group: bigint, op: number, operation: number, checksum: bigint | null, view: number | null): void => {
        this.checker.committed(node, group, op, operation, checksum);
        if (checksum !== null) this.ackOracle.committed(group, op, checksum, view);
        this.timeline?.commit(this.#tick, node, group === METADATA_GROUP_ID);
      },
      applied: (node: number, op: AppliedOp): void => {
        if (hooks.forgeApplied === undefined) this.checker.applied(node, op);
        else for (const forged of hooks.forgeApplied(node, op)) this.checker.applied(node, forged);
      },
      installed: (node: number, s: InstalledSnapshot): void => {
        this.trace.mix(3, node, s.snapshotOp);
        this.checker.installed(node, s.group, s.snapshotOp);
      },
      fatal: (node: number, group: bigint, reason: string, detail: string): void => this.#onFatal(node, group, reason, detail),
      event: (node: number, group: bigint, name: string, detail: string): void => this.#onEvent(node, group, name, detail),
      offsetCommitted: (_node: number, key: bigint, group: bigint, op: number, operation: number, body: Uint8Array): void => {
        const ns = unpackPartitionGroup(group);
        if (ns.ok) this.offsets.committed(key, ns.value.partition, op, operation, body);
      },
      trace: (a: number, b: number, c: number): void => this.trace.mix(a, b, c),
      completionDelay: (node: number, c: Completion): number => this.#completionDelay(node, c),
      partitionOpened: (node: number, key: bigint, view: number): void => this.checker.partitionOpened(node, key, view),
      partitionDestroyed: (node: number, key: bigint): void => this.checker.partitionDestroyed(node, key),
    };
    const clock = stream(seed, Salt.clock);
    for (let i = 0; i < n; i++) {
      const faulty = this.#faulty.has(i);
      const disk = new SimDisk({ seed: stream(seed, Salt.disk, i).u32(), faults: faulty ? options.diskFaults : NO_FAULTS });
      if (faulty) disk.allowFaults(64);
      else disk.setFaultsAllowed(false);
      this.nodes.push(new SimNode(i, disk, env, stream(seed, Salt.replica, i), BigInt(clock.range(0, 20_000))));
    }
    const clientEnv = {
      replicaCount: n,
      now: (): number => this.#tick,
      incarnation: (node: number): number => {
        const sim = this.nodes[node] as SimNode;
        return sim.up ? sim.boots : 0;
      },
      send: (from: number, to: number, frame: Uint8Array): void => this.network.send(from, to, frame, this.#tick),
      acked: (record: AckRecord): void => this.#onAck(hooks.forgeAck === undefined ? record : hooks.forgeAck(record)),
    };
    for (let c = 0; c < options.clients; c++) {
      const script = hooks.script === undefined ? null : (hooks.script.bind(null, c) as () => WorkOp | null);
      this.clients.push(new SimClient(c, n + c, clientEnv, stream(seed, Salt.client, c), options.workload, script));
    }
    const sim = this;
    this.faults = new Faults({
      options, nodes: this.nodes, network: this.network, marks: this.marks, trace: this.trace, timeline, faulty: this.#faulty,
      get tick(): number { return sim.#tick; },
      boot: (node: SimNode): void => this.#boot(node),
      crashing: (node: SimNode, _kind: CrashKind): void => this.checker.crashed(node.index, node.metadata?.replica.role.durableView ?? 0, node.partitionDurableViews()),
    }, stream(seed, Salt.faults));
  }

  get tick(): number {
    return this.#tick;
  }

  /** Runs every phase and the final checks; never throws for a violation (it is the result). */
  run(): SimulationResult {
    try {
      this.start();
      while (this.#tick < this.options.safetyTicks) this.step();
      const down = this.options.degraded === 'none' ? null : this.faults.degrade();
      if (down !== null) {
        this.#degradedPhase(down);
        if (this.options.degraded === 'restored') {
          this.timeline?.phase(this.#tick, 'restored');
          this.faults.restore(down);
          this.#converge('after the f downed replicas came back');
          this.marks.hit('phase.degraded_then_restored');
        }
      } else {
        this.#heal();
        this.#converge('after healing');
      }
      this.#hooks.beforeFinalChecks?.(this);
      this.timeline?.phase(this.#tick, 'final checks');
      this.#finalChecks();
    } catch (error) {
      if (error instanceof BeyondLossBudget) {
        // Every check so far held; convergence was not owed (docs/simulator.md, "Liveness beyond
        // the loss budget"), and the end-state checks assume a converged cluster.
        this.marks.hit('check.liveness_beyond_budget');
        this.timeline?.phase(this.#tick, `stuck beyond the loss budget: ${error.message}`);
        // The votes are judged all the same: a nacked acknowledged op is a safety matter.
        const nacked = this.#judgeVotes();
        if (nacked !== null) this.#failure = `tick ${this.#tick}: ${nacked}`;
        return this.#result();
      }
      if (!(error instanceof SafetyViolation) && !(error instanceof Error)) throw error;
      const kind = error instanceof SafetyViolation ? '' : `${error.name}: `;
      this.#failure = `tick ${this.#tick}: ${kind}${error.message}${error instanceof SafetyViolation ? '' : `\n${error.stack ?? ''}`}`;
    }
    return this.#result();
  }

  /** Boots every node (the first thing `run` does; scenario tests call it, then `step`). */
  start(): void {
    for (const node of this.nodes) this.#boot(node);
    this.timeline?.phase(0, 'safety');
  }

  step(): void {
    this.#tick += 1;
    const n = this.options.replicas;
    const timeline = this.timeline;
    for (const p of this.network.takeReady(this.#tick)) {
      this.trace.frame(5, p.from, p.to, p.frame);
      if (p.to < n) {
        if (p.from < n && this.#hooks.dropReplicaFrame?.(p.from, p.to, p.frame) === true) continue;
        if (timeline !== null && p.from >= n) timeline.request(this.#tick, p.to);
        (this.nodes[p.to] as SimNode).deliver(p.from, p.frame);
      } else {
        if (timeline !== null && p.from < n) timeline.reply(this.#tick, p.from);
        (this.clients[p.to - n] as SimClient).deliver(p.from, p.frame);
      }
    }
    for (const node of this.nodes) if (!this.faults.isPaused(node.index)) node.tick();
    for (const client of this.clients) client.tick();
    if (this.#exiting.size > 0) {
      for (const index of this.#exiting) this.faults.exitOnIoError(index);
      this.#exiting.clear();
    }
    if (this.#phase === 'safety') this.faults.step();
    this.faults.restartDue();
    this.faults.updateRecovering();
    this.network.flush(this.#tick);
    this.#networkMarks();
    if (timeline !== null) this.#recordStatus(timeline);
    if (this.#tick % this.options.sampleEveryTicks === 0) this.#sample();
  }

  // -------------------------------------------------------------------------------------------

  #boot(node: SimNode): void {
    if (!node.boot()) {
      if (!this.#faulty.has(node.index)) throw new SafetyViolation(`replica ${node.index} without disk faults refused to boot: ${node.dead}`);
      this.network.setDown(node.index, true);
      return;
    }
    this.checker.booted(node.index, (node.metadata as NonNullable<typeof node.metadata>).replica);
  }

  #onFatal(node: number, group: bigint, reason: string, detail: string): void {
    if (this.#faulty.has(node) && (reason === 'partition_recovery_refused' || reason === 'metadata_recovery_refused')) return;
    const io = reason === 'journal_io' || reason === 'partition_io' || reason === 'transfer_io'
      || (reason === 'consensus' && detail.startsWith('journal_write_failed')); // the core stops on a failed write under vouched ops
    if (this.faults.diskErrored.has(node) && io) {
      this.#exiting.add(node); // the process exits at the end of this step
      return;
    }
    throw new SafetyViolation(`replica ${node} group ${group}: fatal ${reason}: ${detail}`);
  }

  #onEvent(node: number, group: bigint, name: string, detail: string): void {
    const plane = group === METADATA_GROUP_ID ? 'metadata' : 'partition';
    const mark = this.marks.event(plane, name, detail);
    if (mark !== null) this.timeline?.mark(this.#tick, node, `core.${mark}@${plane}`, `${plane === 'metadata' ? 'metadata' : group.toString(16)}: ${detail}`);
  }

  #onAck(r: AckRecord): void {
    this.trace.mix(4, r.clientIndex, r.kind.length);
    this.timeline?.answer(this.#tick, r.clientIndex, r.kind);
    if ((r.kind === 'metadata' && r.op > 0) || r.kind === 'send' || (r.kind === 'offset' && r.code === 0)) this.#productive++;
    if (r.kind === 'offset') this.offsets.ack(r);
    else if (r.kind === 'unknown' && (r.work.kind === 'store_offset' || r.work.kind === 'delete_offset')) {
      this.offsets.unknown(r.work.partitionId ?? 0, r.work.consumer ?? 0, r.work.offset ?? null);
    }
    this.checker.ack(r);
  }

  #completionDelay(node: number, c: Completion): number {
    if (c.kind === 'chunk_read' || c.kind === 'offer_built') return 0;
    const mean = this.options.diskLatencyMeanTicks;
    const latency = mean <= 0 ? 0 : exponential(this.#latency[node] as Prng, mean);
    return Math.max(latency, this.faults.stallTicks(node));
  }

  #networkMarks(): void {
    const stats = this.network.stats;
    if (stats.queueDropped !== this.#queueDropped) {
      this.marks.hit('fault.peer_queue_overrun', stats.queueDropped - this.#queueDropped);
      this.#queueDropped = stats.queueDropped;
    }
    if (stats.evicted !== this.#evicted) {
      this.marks.hit('fault.link_eviction', stats.evicted - this.#evicted);
      this.#evicted = stats.evicted;
    }
  }

  /** Faults stop: a healthy network (TCP-like links, the real per-peer queues), disks without faults. */
  #calm(): void {
    this.network.faults = {
      ...this.options.network, lossProbability: 0, duplicateProbability: 0, corruptProbability: 0, linkCapacity: 256, fifoLinks: true,
      linkBytesPerTick: 1 << 20,
    };
    for (const node of this.nodes) node.disk.setFaultsAllowed(false);
  }

  #heal(): void {
    this.#phase = 'liveness';
    this.timeline?.phase(this.#tick, 'liveness');
    this.#calm();
    this.faults.healAll();
    for (const client of this.clients) client.stopped = true;
  }

  /**
   * f replicas down for good: the others must make progress (answers that committed something:
   * 2 per client) within `livenessTicks` (the view changes past down primaries take their
   * timeouts), keep serving for `degradedTicks` more, then converge once the clients stop.
   */
  #degradedPhase(down: ReadonlySet<number>): void {
    this.#phase = 'degraded';
    const which = [...down].join(', ');
    this.timeline?.phase(this.#tick, `degraded (down: ${which})`);
    this.#calm();
    const target = this.#productive + 2 * this.options.clients;
    const deadline = this.#tick + this.options.livenessTicks;
    while (this.#productive < target) {
      if (this.#tick >= deadline) {
        throw new SafetyViolation(`liveness: with replicas ${which} down for good, ${this.#productive - target + 2 * this.options.clients} answers made `
          + `progress in ${this.options.livenessTicks} ticks (want ${2 * this.options.clients}): ${this.#divergence()}`);
      }
      this.step();
    }
    const end = this.#tick + this.options.degradedTicks;
    while (this.#tick < end) this.step();
    this.#phase = 'liveness';
    this.timeline?.phase(this.#tick, 'liveness (degraded)');
    for (const client of this.clients) client.stopped = true;
    this.#converge(`with replicas ${which} down for good`);
    this.marks.hit('phase.degraded_liveness');
  }

  #converge(when: string): void {
    const deadline = this.#tick + this.options.livenessTicks;
    while (!this.#converged()) {
      if (this.#tick >= deadline) {
        this.#excuseBeyondBudget();
        throw new SafetyViolation(`liveness: no convergence within ${this.options.livenessTicks} ticks ${when}: ${this.#divergence()}`);
      }
      this.step();
    }
  }

  /**
   * Convergence is owed only within the loss budget: when more replicas than it allows are lossy
   * at once (dead for good, or down or still catching up after a crash that lost writes they had
   * acknowledged, or refusing a group on a faulty disk), no quorum may hold every acknowledged op, and VSR must then wait (the merge
   * awaits the missing replica's vote) rather than guess. The faults decide this from what they
   * injected, never from where the cores stand.
   */
  #excuseBeyondBudget(): void {
    // Every group still pending must be beyond the budget; a faulty disk that cannot host a group
    // even after a wipe lost that group's files for good: as lossy as a dead replica for it. So
    // is one whose damage cost the group ops it may have acknowledged (a journal lost to a
    // misdirected write, faulty ops) while it has not got them back: a process kill is never
    // lossy, but the damage was injected before it (seeds 1061545 and 1084567 of 5: that, one
    // power loss and one replica dead for good left no quorum that could vouch for the log).
    const live = this.#live();
    const budget = this.faults.lossBudget;
    const stuck = this.#groups().filter((group) => !this.#groupConverged(group, live));
    const lossyFor = (group: bigint): number =>
      this.nodes.filter((x) => this.faults.isLossy(x.index) || (x.up && this.#faulty.has(x.index) && (x.refused.has(group) || missesAckedIn(x, group)))).length;
    if (stuck.length === 0 || stuck.some((group) => lossyFor(group) <= budget)) return;
    const lossy = Math.min(...stuck.map(lossyFor));
    throw new BeyondLossBudget(`${lossy} replicas lossy at once (budget ${budget}): ${this.#divergence()}`);
  }

  #recordStatus(timeline: Timeline): void {
    for (const node of this.nodes) {
      const m = node.up ? node.metadata : null;
      if (m === null) {
        timeline.status(this.#tick, node.index, null);
        continue;
      }
      const c = m.replica.role;
      timeline.status(this.#tick, node.index, { status: c.ceded && c.normal ? 'recovering' : c.status, view: c.view, primary: c.actingPrimary });
    }
  }

  #live(): SimNode[] {
    return this.nodes.filter((x) => x.up && x.metadata !== null);
  }

  #groups(): bigint[] {
    const groups = new Set<bigint>([METADATA_GROUP_ID]);
    for (const node of this.#live()) for (const g of node.partitions.keys()) groups.add(g);
    return [...groups];
  }

  #converged(): boolean {
    if (this.clients.some((c) => c.busy)) return false;
    const live = this.#live();
    if (live.length === 0) return true;
    return this.#groups().every((group) => this.#groupConverged(group, live));
  }

  /** Nothing pending in `group`: every op any live replica holds is committed and applied everywhere. */
  #groupConverged(group: bigint, live: readonly SimNode[]): boolean {
    let commit = -1;
    for (const node of live) {
      // A faulty disk may leave a replica unable to host a partition at all (refused even
      // after a wipe): it does not count; every other live replica must.
      if (node.refused.has(group) && this.#faulty.has(node.index)) continue;
      const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
      if (driver === undefined || driver === null) return false;
      const s = driver.replica.role; // (the status getter also lists the journal: too slow per tick)
      if (!s.normal || s.commitMin !== s.commitMax || s.commitMax !== s.op || s.transferring) return false;
      if (commit === -1) commit = s.commitMin;
      else if (commit !== s.commitMin) return false;
    }
    return true;
  }

  #divergence(): string {
    const parts: string[] = [];
    for (const group of this.#groups()) {
      const row = this.#live().map((node) => {
        const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
        if (driver === undefined || driver === null) return `r${node.index}:-`;
        const s = driver.status;
        return `r${node.index}:${s.status}/v${s.view}/op${s.op}/c${s.commitMin}-${s.commitMax}/${s.transferStage}`;
      });
      parts.push(`group ${group === METADATA_GROUP_ID ? 'metadata' : group.toString(16)} [${row.join(' ')}]`);
    }
    const busy = this.clients.filter((c) => c.busy).map((c) => c.index);
    return `${parts.join('; ')}${busy.length > 0 ? `; clients still busy: ${busy.join(',')}` : ''}`;
  }

  #sample(): void {
    for (const node of this.#live()) {
      const m = (node.metadata as NonNullable<typeof node.metadata>).replica;
      this.checker.sample(node.index, METADATA_GROUP_ID, m);
      this.#watchViewChange(node.index, METADATA_GROUP_ID, m.role, 'metadata');
      let inViewChange = 0;
      for (const [group, entry] of node.partitions) {
        this.checker.sample(node.index, node.key(group, entry.createdRevision), entry.driver.replica);
        const role = entry.driver.replica.role;
        if (role.status === 'view_change') inViewChange++;
        this.#watchViewChange(node.index, group, role, 'partition');
      }
      this.#maxGroups = Math.max(this.#maxGroups, node.partitions.size);
      this.timeline?.groups(this.#tick, node.index, node.partitions.size, inViewChange);
    }
  }

  /** View changes stalled past the fallback votes (2,000 ticks on one replica). */
  #watchViewChange(node: number, group: bigint, role: ReplicaRole, plane: 'metadata' | 'partition'): void {
    const since = this.#viewChangeSince[node] as Map<bigint, number>;
    if (role.status !== 'view_change') {
      if (since.size > 0) since.delete(group);
      return;
    }
    const start = since.get(group);
    if (start === undefined) since.set(group, this.#tick);
    else if (this.#tick - start === LONG_PARTITION_TICKS - (LONG_PARTITION_TICKS % this.options.sampleEveryTicks)) {
      this.marks.hit('fault.view_change_stalled');
      this.timeline?.mark(this.#tick, node, 'fault.view_change_stalled', `${plane === 'metadata' ? 'metadata' : group.toString(16)}: in view change since tick ${start}`);
    }
  }

  #finalChecks(): void {
    this.checker.checkMetadataAcks();
    const nacked = this.#judgeVotes();
    if (nacked !== null) this.checker.fail(nacked);
    for (const node of this.#live()) {
      const m = node.metadata as NonNullable<typeof node.metadata>;
      this.checker.checkState(node.index, m.state, m.status.commitMin);
    }
    this.#checkPartitions();
    this.#checkOffsets();
    if (this.#maxGroups >= 64) this.marks.hit('workload.groups_64');
    for (const node of this.nodes) if (node.disk.faultLog.some((f) => f.kind === 'read_bit_flip')) this.marks.hit('fault.disk_read_fault');
  }

  /** The ack oracle's verdict on every DoViewChange sent (ack-oracle.ts): a violation, or null. */
  #judgeVotes(): string | null {
    if (this.ackOracle.votesWithAcks > 0) this.marks.hit('check.dvc_acks');
    return this.ackOracle.check();
  }

  /** What a replica sends another, as the ack oracle sees it (ack-oracle.ts). */
  #observeReplicaFrame(from: number, frame: Uint8Array): void {
    if (frame.length < HEADER_SIZE) return;
    const command = frame[OFFSET_COMMAND];
    if (command !== Command.PrepareOk && command !== Command.DoViewChange) return;
    const node = this.nodes[from] as SimNode;
    if (command === Command.PrepareOk) {
      const h = prepareOkView.bind(frame, 0);
      const key = node.historyKey(h.group);
      if (key !== null) this.ackOracle.acked(from, key, h.opNumber, h.prepareChecksum);
      return;
    }
    const h = doViewChangeView.bind(frame, 0);
    const key = node.historyKey(h.group);
    const record = dvcRecordFromFrame(frame);
    if (key !== null && typeof record !== 'string') this.ackOracle.voted(from, key, h.view, record);
  }

  /** Consumer offsets: the committed log (durable, monotone), then every live replica's table. */
  #checkOffsets(): void {
    this.offsets.checkLogs();
    if (this.options.replicas === 1) return; // a solo replica renumbers its ops at boot: no op-level history to replay
    for (const node of this.#live()) {
      const state = (node.metadata as NonNullable<typeof node.metadata>).state;
      const found = state.topic({ kind: 'string', value: DATA_STREAM }, { kind: 'string', value: DATA_TOPIC });
      if (found === undefined) continue;
      for (let partitionId = 0; partitionId < found.topic.partitions.length; partitionId++) {
        const group = packPartitionGroup(found.stream.id, found.topic.id, partitionId);
        if (!group.ok) continue;
        const entry = node.partitions.get(group.value);
        if (entry === undefined) continue; // refused on a faulty disk (#checkPartitions judged it)
        this.offsets.checkState(node.index, node.key(group.value, entry.createdRevision), partitionId, entry.driver.replica.role.commitMin, entry.driver.state);
      }
    }
    if (this.offsets.checked > 0 && this.offsets.acknowledged > 0) this.marks.hit('check.consumer_offsets');
  }

  /** Every acked batch, byte for byte, on every live replica. */
  #checkPartitions(): void {
    for (const node of this.#live()) {
      const state = (node.metadata as NonNullable<typeof node.metadata>).state;
      const found = state.topic({ kind: 'string', value: DATA_STREAM }, { kind: 'string', value: DATA_TOPIC });
      if (found === undefined) {
        if (this.checker.stats.sendAcks > 0) this.checker.fail(`replica ${node.index}: the data topic is missing but batches were acknowledged`);
        continue;
      }
      for (const [partitionId, acks] of this.checker.sends) {
        const group = packPartitionGroup(found.stream.id, found.topic.id, partitionId);
        if (!group.ok) this.checker.fail(`partition ${partitionId}: bad group`);
        const entry = node.partitions.get(group.value);
        if (entry === undefined && node.refused.has(group.value) && this.#faulty.has(node.index)) continue;
        if (entry === undefined) this.checker.fail(`replica ${node.index}: no driver for data partition ${partitionId}`);
        const driver = entry.driver;
        if (BigInt(driver.storage.log.nextOffset) !== driver.state.nextOffset) {
          this.checker.fail(`replica ${node.index} partition ${partitionId}: log end ${driver.storage.log.nextOffset} != state ${driver.state.nextOffset}`);
        }
        for (const ack of acks) this.#checkBatch(node.index, partitionId, driver, ack);
      }
    }
  }

  #checkBatch(node: number, partitionId: number, driver: NonNullable<SimNode['partitions'] extends Map<bigint, infer E> ? E : never>['driver'],
    ack: { base: number; messages: number; frames: Uint8Array }): void {
    let lastError = '';
    for (let attempt = 0; attempt < 5; attempt++) {
      const read = driver.storage.reader.byOffset(ack.base, ack.messages);
      if (!read.ok) {
        // A transient read fault: read again. Persistent damage on a replica with injected disk
        // faults is acceptable only because the read FAILS CLOSED (it never serves wrong bytes).
        lastError = read.error.kind === 'corrupt_batch' ? read.error.reason : read.error.kind;
        continue;
      }
      // Alone: stored as sent, one whole batch. Group-committed: a slice of the joined batch,
      // the same messages with re-based deltas (stored-batch.ts).
      const batch = read.value.batches[0];
      if (batch === undefined || batch.firstOffset !== ack.base || batch.messageCount !== ack.messages) {
        this.checker.fail(`replica ${node} partition ${partitionId}: acknowledged batch at ${ack.base} (+${ack.messages}) is not stored at its offsets`);
      }
      const same = batch.sliced
        ? sameMessages(batch.parts[1] as Uint8Array, ack.frames)
        : equalBytes((batch.parts[0] as Uint8Array).subarray(256), ack.frames);
      // The driver's reader lends pooled buffers (lendViews): give this one back, or every check
      // allocates a fresh 2 MiB read buffer (about a sixth of a seed's time, with its GC).
      read.value.release();
      if (!same) this.checker.fail(`replica ${node} partition ${partitionId}: batch at ${ack.base} differs from what was acknowledged`);
      return;
    }
    if (this.#faulty.has(node) && lastError !== 'io') {
      this.#detectedCorruption++;
      return;
    }
    this.checker.fail(`replica ${node} partition ${partitionId}: batch at ${ack.base} unreadable (${lastError})`);
  }

  #result(): SimulationResult {
    const committedOps = this.checker.committedOps();
    return {
      seed: this.options.seed,
      replicas: this.options.replicas,
      ok: this.#failure === null,
      failure: this.#failure,
      traceHash: this.trace.hex(),
      ticks: this.#tick,
      committedOps,
      stats: {
        ...this.faults.stats,
        network: { ...this.network.stats },
        metadataAcks: this.checker.stats.metadataAcks,
        sendAcks: this.checker.stats.sendAcks,
        predictions: this.checker.stats.predictions,
        deadReplicas: this.nodes.filter((x) => x.dead !== null).length,
        detectedCorruption: this.#detectedCorruption,
        offsetAcks: this.offsets.acknowledged,
      },
      marks: this.marks.toRecord(),
    };
  }
}
