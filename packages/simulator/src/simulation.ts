/**
 * One deterministic run: a cluster of SimNodes (production drivers on SimDisks), a simulated
 * network, simulated clients, faults, and the checkers.
 *
 *   step (one tick = 10 ms):  deliver ready packets (random order) ─▶ every node ticks (drivers,
 *                              host duties, group commit) ─▶ every client ticks ─▶ faults
 *                              (safety phase) ─▶ watermark samples
 *
 *   safety phase   `safetyTicks` with faults: loss, duplication, reordering, corruption, bounded
 *                  links, partitions (isolate one, random halves, one-way), crashes (power loss or
 *                  process kill) and restarts, disk faults on at most f replicas
 *   liveness phase faults stop, the network heals, every crashed replica restarts, clients finish
 *                  what they started; every live replica must reach the same commit for every
 *                  group within `livenessTicks`, else the seed fails
 *   final checks   acked metadata vs the committed log and the shadow model, replica states vs
 *                  the model, every acked batch readable on every replica
 */
import { METADATA_GROUP_ID, type Completion } from '@shoal/consensus';
import { packPartitionGroup } from '@shoal/protocol';
import type { AppliedOp, InstalledSnapshot } from '@shoal/replica';
import type { Prng } from '@shoal/stdx';
import { NO_FAULTS, SimDisk } from '@shoal/storage';
import { Checker, SafetyViolation } from './checker.js';
import { type AckRecord, SimClient } from './client.js';
import { Network } from './network.js';
import { SimNode } from './node.js';
import { type SimulationOptions, faultTolerance } from './options.js';
import { Salt, exponential, stream } from './random.js';
import { TraceHash } from './trace.js';
import { DATA_STREAM, DATA_TOPIC } from './workload.js';

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
  };
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
}

interface Down {
  readonly node: number;
  readonly until: number;
}

interface Recovering {
  readonly node: number;
  readonly targets: Map<bigint, number>;
}

export class Simulation {
  readonly options: SimulationOptions;
  readonly nodes: SimNode[] = [];
  readonly clients: SimClient[] = [];
  readonly network: Network;
  readonly checker: Checker;
  readonly trace = new TraceHash();
  readonly #faults: Prng;
  readonly #latency: Prng[];
  readonly #hooks: SimulationHooks;
  readonly #faulty: Set<number>;
  #tick = 0;
  #down: Down[] = [];
  #recovering: Recovering[] = [];
  #partitioned = false;
  #phase: 'safety' | 'liveness' = 'safety';
  #stats = { crashes: 0, restarts: 0, partitions: 0 };
  #failure: string | null = null;
  /** Acked batches found damaged (and refused) on replicas with injected disk faults. */
  #detectedCorruption = 0;

  constructor(options: SimulationOptions, hooks: SimulationHooks = {}) {
    this.options = options;
    this.#hooks = hooks;
    const seed = options.seed;
    const n = options.replicas;
    this.network = new Network(n, options.clients, stream(seed, Salt.network), options.network);
    this.checker = new Checker(n);
    if (hooks.forgeCommit !== undefined) this.checker.forgeCommit = hooks.forgeCommit;
    this.#faults = stream(seed, Salt.faults);
    this.#latency = Array.from({ length: n }, (_, i) => stream(seed, Salt.clock, i + 1000));
    const faultyPick = stream(seed, Salt.faults, 7);
    const order = faultyPick.shuffle(Array.from({ length: n }, (_, i) => i));
    this.#faulty = new Set(order.slice(0, Math.min(options.faultyReplicas, faultTolerance(n))));
    const cluster = 0x5348_4f41_4c00_0000_0000_0000_0000_0001n;
    const env = {
      replicaCount: n,
      cluster,
      messagesRequiredToSave: options.messagesRequiredToSave,
      now: (): number => this.#tick,
      send: (from: number, to: number, frame: Uint8Array): void => this.network.send(from, to, frame, this.#tick),
      committed: (node: number, group: bigint, op: number, operation: number, checksum: bigint | null): void =>
        this.checker.committed(node, group, op, operation, checksum),
      applied: (node: number, op: AppliedOp): void => {
        if (hooks.forgeApplied === undefined) this.checker.applied(node, op);
        else for (const forged of hooks.forgeApplied(node, op)) this.checker.applied(node, forged);
      },
      installed: (node: number, s: InstalledSnapshot): void => {
        this.trace.mix(3, node, s.snapshotOp);
        this.checker.installed(node, s.group, s.snapshotOp);
      },
      fatal: (node: number, group: bigint, reason: string, detail: string): void => this.#onFatal(node, group, reason, detail),
      trace: (a: number, b: number, c: number): void => this.trace.mix(a, b, c),
      completionDelay: (node: number, c: Completion): number => this.#completionDelay(node, c),
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
      send: (from: number, to: number, frame: Uint8Array): void => this.network.send(from, to, frame, this.#tick),
      acked: (record: AckRecord): void => {
        const r = hooks.forgeAck === undefined ? record : hooks.forgeAck(record);
        this.trace.mix(4, r.clientIndex, r.kind.length);
        this.checker.ack(r);
      },
    };
    for (let c = 0; c < options.clients; c++) {
      this.clients.push(new SimClient(c, n + c, clientEnv, stream(seed, Salt.client, c), options.workload));
    }
  }

  get tick(): number {
    return this.#tick;
  }

  /** Runs both phases and the final checks; never throws for a violation (it is the result). */
  run(): SimulationResult {
    try {
      for (const node of this.nodes) this.#boot(node);
      while (this.#tick < this.options.safetyTicks) this.step();
      this.#heal();
      const deadline = this.#tick + this.options.livenessTicks;
      while (!this.#converged()) {
        if (this.#tick >= deadline) {
          throw new SafetyViolation(`liveness: no convergence within ${this.options.livenessTicks} ticks after healing: ${this.#divergence()}`);
        }
        this.step();
      }
      this.#hooks.beforeFinalChecks?.(this);
      this.#finalChecks();
    } catch (error) {
      if (!(error instanceof SafetyViolation) && !(error instanceof Error)) throw error;
      const kind = error instanceof SafetyViolation ? '' : `${error.name}: `;
      this.#failure = `tick ${this.#tick}: ${kind}${error.message}${error instanceof SafetyViolation ? '' : `\n${error.stack ?? ''}`}`;
    }
    return this.#result();
  }

  step(): void {
    this.#tick += 1;
    const n = this.options.replicas;
    for (const p of this.network.takeReady(this.#tick)) {
      this.trace.frame(5, p.from, p.to, p.frame);
      if (p.to < n) (this.nodes[p.to] as SimNode).deliver(p.from, p.frame);
      else (this.clients[p.to - n] as SimClient).deliver(p.frame);
    }
    for (const node of this.nodes) node.tick();
    for (const client of this.clients) client.tick();
    if (this.#phase === 'safety') this.#injectFaults();
    this.#restartDue();
    this.#updateRecovering();
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
    throw new SafetyViolation(`replica ${node} group ${group}: fatal ${reason}: ${detail}`);
  }

  #completionDelay(node: number, c: Completion): number {
    const mean = this.options.diskLatencyMeanTicks;
    if (mean <= 0 || c.kind === 'chunk_read' || c.kind === 'offer_built') return 0;
    return exponential(this.#latency[node] as Prng, mean);
  }

  #unsafe(): number {
    return this.#down.length + this.#recovering.length + this.nodes.filter((x) => x.dead !== null && !this.#down.some((d) => d.node === x.index)).length;
  }

  #injectFaults(): void {
    const o = this.options;
    const p = this.#faults;
    const n = o.replicas;
    if (o.crashProbability > 0 && p.float() < o.crashProbability) {
      const allowed = n === 1 ? 1 : Math.max(1, faultTolerance(n));
      const candidates = this.nodes.filter((x) => x.up && !this.#recovering.some((r) => r.node === x.index));
      if (candidates.length > 0 && this.#unsafe() < allowed) {
        const victim = p.pick(candidates);
        // A single replica only loses its process (its page cache survives); with peers, power too.
        this.#crash(victim, n === 1 ? 'process' : p.bool() ? 'power' : 'process');
      }
    }
    if (n > 1) {
      if (!this.#partitioned && o.partitionProbability > 0 && p.float() < o.partitionProbability) this.#partition();
      else if (this.#partitioned && p.float() < o.unpartitionProbability) {
        this.network.healAll();
        this.#partitioned = false;
        this.trace.mix(6, 0, this.#tick);
      }
    }
  }

  #crash(node: SimNode, kind: 'power' | 'process'): void {
    this.#stats.crashes++;
    const durable = node.metadata?.replica.role.durableView ?? 0;
    this.checker.crashed(node.index, durable);
    this.trace.mix(7, node.index, kind === 'power' ? 1 : 0);
    if (kind === 'power') node.crash();
    else node.kill();
    this.network.setDown(node.index, true);
    this.#down.push({ node: node.index, until: this.#tick + 1 + exponential(this.#faults, this.options.downMeanTicks) });
  }

  #restartDue(): void {
    if (this.#down.length === 0) return;
    const due = this.#down.filter((d) => d.until <= this.#tick);
    if (due.length === 0) return;
    this.#down = this.#down.filter((d) => d.until > this.#tick);
    for (const d of due) this.#restart(d.node);
  }

  #restart(index: number): void {
    const node = this.nodes[index] as SimNode;
    this.#stats.restarts++;
    this.network.setDown(index, false);
    this.trace.mix(8, index, this.#tick);
    const targets = new Map<bigint, number>();
    for (const other of this.nodes) {
      if (other === node || !other.up || other.metadata === null) continue;
      targets.set(METADATA_GROUP_ID, Math.max(targets.get(METADATA_GROUP_ID) ?? 0, other.metadata.status.commitMax));
      for (const [group, entry] of other.partitions) targets.set(group, Math.max(targets.get(group) ?? 0, entry.driver.status.commitMax));
    }
    this.#boot(node);
    if (node.up) this.#recovering.push({ node: index, targets });
  }

  /**
   * A restarted replica counts as unsafe until it holds every group the others hold, each caught
   * up to where the others were at its restart, and none of its journals is still incomplete.
   */
  #updateRecovering(): void {
    if (this.#recovering.length === 0) return;
    this.#recovering = this.#recovering.filter((r) => {
      const node = this.nodes[r.node] as SimNode;
      if (!node.up || node.metadata === null) return false;
      for (const [group, target] of r.targets) {
        const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
        if (driver === undefined) return true;
        if (driver.status.commitMin < target) return true;
      }
      if (node.metadata.replica.role.journalIncomplete) return true;
      for (const entry of node.partitions.values()) if (entry.driver.replica.role.journalIncomplete) return true;
      for (const other of this.nodes) {
        if (other === node || !other.up) continue;
        for (const group of other.partitions.keys()) if (!node.partitions.has(group)) return true;
      }
      return false;
    });
  }

  #partition(): void {
    const n = this.options.replicas;
    const p = this.#faults;
    this.#partitioned = true;
    this.#stats.partitions++;
    const mode = p.below(3);
    const side = new Array<boolean>(n).fill(false);
    if (mode === 0) side[p.below(n)] = true; // isolate one
    else for (let i = 0; i < n; i++) side[i] = p.bool(); // random halves
    const oneWay = p.below(3) === 0;
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        if (a === b || side[a] === side[b]) continue;
        if (oneWay && side[a] === true) continue; // only one direction is cut
        this.network.setBlocked(a, b, true);
      }
    }
    this.trace.mix(9, mode, oneWay ? 1 : 0);
  }

  #heal(): void {
    this.#phase = 'liveness';
    // A healed network is a good TCP-like one: no loss, duplication or corruption, links in order.
    this.network.faults = {
      ...this.options.network, lossProbability: 0, duplicateProbability: 0, corruptProbability: 0, linkCapacity: 256, fifoLinks: true,
    };
    this.network.healAll();
    this.#partitioned = false;
    for (const node of this.nodes) node.disk.setFaultsAllowed(false);
    for (const d of this.#down) this.#restart(d.node);
    this.#down = [];
    for (const client of this.clients) client.stopped = true;
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
    for (const group of this.#groups()) {
      let commit = -1;
      for (const node of live) {
        // A faulty disk may leave a replica unable to host a partition at all (refused even
        // after a wipe): it does not count; every other live replica must.
        if (node.refused.has(group) && this.#faulty.has(node.index)) continue;
        const driver = group === METADATA_GROUP_ID ? node.metadata : node.partitions.get(group)?.driver;
        if (driver === undefined || driver === null) return false;
        // Nothing pending: every op any replica holds is committed and applied everywhere.
        const s = driver.replica.role; // (the status getter also lists the journal: too slow per tick)
        if (!s.normal || s.commitMin !== s.commitMax || s.commitMax !== s.op || s.transferring) return false;
        if (commit === -1) commit = s.commitMin;
        else if (commit !== s.commitMin) return false;
      }
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
      this.checker.sample(node.index, METADATA_GROUP_ID, (node.metadata as NonNullable<typeof node.metadata>).replica);
      for (const [group, entry] of node.partitions) this.checker.sample(node.index, node.key(group, entry.createdRevision), entry.driver.replica);
    }
  }

  #finalChecks(): void {
    this.checker.checkMetadataAcks();
    for (const node of this.#live()) {
      const m = node.metadata as NonNullable<typeof node.metadata>;
      this.checker.checkState(node.index, m.state, m.status.commitMin);
    }
    this.#checkPartitions();
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
      const batch = read.value.batches[0];
      if (batch === undefined || batch.firstOffset !== ack.base || batch.messageCount !== ack.messages || batch.sliced) {
        this.checker.fail(`replica ${node} partition ${partitionId}: acknowledged batch at ${ack.base} (+${ack.messages}) is not stored as one batch`);
      }
      const stored = (batch.parts[0] as Uint8Array).subarray(256);
      if (!equalBytes(stored, ack.frames)) this.checker.fail(`replica ${node} partition ${partitionId}: batch at ${ack.base} differs from what was acknowledged`);
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
        ...this.#stats,
        network: { ...this.network.stats },
        metadataAcks: this.checker.stats.metadataAcks,
        sendAcks: this.checker.stats.sendAcks,
        predictions: this.checker.stats.predictions,
        deadReplicas: this.nodes.filter((x) => x.dead !== null).length,
        detectedCorruption: this.#detectedCorruption,
      },
    };
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
