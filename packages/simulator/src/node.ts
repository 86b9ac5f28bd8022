/**
 * One simulated Shoal node: the PRODUCTION drivers (a MetadataDriver with its MetadataHost, and a
 * PartitionDriver per partition the committed metadata names) on this node's own SimDisk, and the
 * PRODUCTION client gateway in front of them (node-gateway.ts: one simulated connection per
 * client; request checks, login, session fencing, evictions, routing and reply shaping are the
 * runtime's). Crash = every in-memory object is dropped and the disk loses what was not durable;
 * restart = the drivers boot from the disk.
 */
import { type ClientToken, type Completion, METADATA_GROUP_ID } from '@shoal/consensus';
import { LAYOUT_BY_COMMAND, Operation } from '@shoal/protocol';
import {
  type AppliedOp, type InstalledSnapshot, MetadataDriver, MetadataHost, PartitionDriver, type SessionResult, partitionCoreConfig,
  wipePartition,
} from '@shoal/replica';
import type { Prng } from '@shoal/stdx';
import { DataDirLayout, DeferredDiskQueue, type SimDisk, sweepDeletedPartitions } from '@shoal/storage';
import { NodeGateway, fakeHash } from './node-gateway.js';

/** What a node needs from the simulation around it. */
export interface NodeEnv {
  readonly replicaCount: number;
  readonly cluster: bigint;
  /** Partition storage fsync threshold (messages). */
  readonly messagesRequiredToSave: number;
  /** Partition groups' prepare pipeline depth. */
  readonly partitionPipelineDepth: number;
  /** Partition groups' group-commit wait depth (capped at the pipeline depth). */
  readonly partitionGroupWaitDepth: number;
  /** Partition frontier jobs go to this node's disk thread (a DeferredDiskQueue its ticks run). */
  readonly asyncFrontier: boolean;
  now(): number;
  send(from: number, to: number, frame: Uint8Array): void;
  /** The host's view of its replica link to `to` (the runtime: the status table's link owner). */
  linked(from: number, to: number): boolean;
  /** Checker and trace hooks. */
  /** `view`: the committing replica's view then (null when its replica is not built yet: a boot's replay). */
  committed(node: number, group: bigint, op: number, operation: number, checksum: bigint | null, view: number | null): void;
  applied(node: number, op: AppliedOp): void;
  installed(node: number, snapshot: InstalledSnapshot): void;
  fatal(node: number, group: bigint, reason: string, detail: string): void;
  /** A core or driver `event` effect (coverage marks, the timeline). */
  event(node: number, group: bigint, name: string, detail: string): void;
  /** A committed consumer-offset write on a partition group (`key`: the checker's history key). */
  offsetCommitted(node: number, key: bigint, group: bigint, op: number, operation: number, body: Uint8Array): void;
  trace(a: number, b: number, c: number): void;
  /** Disk latency of a completion, in ticks. */
  completionDelay(node: number, completion: Completion): number;
  /** A partition group opened (`key`: the checker's history key) in `view`. */
  partitionOpened?(node: number, key: bigint, view: number): void;
  /** `node` destroyed a partition group because its deletion (or a re-creation) committed. */
  partitionDestroyed?(node: number, key: bigint): void;
}

interface PartitionEntry {
  readonly driver: PartitionDriver;
  readonly createdRevision: bigint;
}

const ROOT = '/data';
const EPOCH_MICROS = 1_700_000_000_000_000n;

export class SimNode {
  readonly index: number;
  readonly disk: SimDisk;
  readonly layout = new DataDirLayout(ROOT);
  readonly #env: NodeEnv;
  readonly #prng: Prng;
  readonly #clockSkewMicros: bigint;
  metadata: MetadataDriver | null = null;
  host: MetadataHost | null = null;
  readonly partitions = new Map<bigint, PartitionEntry>();
  /** The client plane (null while down). */
  gateway: NodeGateway | null = null;
  #revision = -1n;
  /** Boots so far (0 = never booted). */
  boots = 0;
  /** Why the node is down for good (a refused metadata boot), or null. */
  dead: string | null = null;
  /** Partition groups whose storage refused to open here even after a wipe (faulty disks only). */
  readonly refused = new Set<bigint>();
  #up = false;
  /** This boot's disk thread (`asyncFrontier`), shared by its partitions as a shard's is. */
  #diskQueue: DeferredDiskQueue | null = null;
  /**
   * The boot latch (docs/cluster.md "Incarnations and the boot latch"): after a boot in a
   * multi-replica cluster no partition group opens until this node's metadata replica has been
   * current once (status normal, commit_min ≥ commit_max, not transferring) and reconcile ran on
   * that state, so a group deleted and re-created while the node was away never speaks with its
   * old incarnation. Opened once per boot; never closed again while the node runs.
   */
  #latched = false;

  constructor(index: number, disk: SimDisk, env: NodeEnv, prng: Prng, clockSkewMicros: bigint) {
    this.index = index;
    this.disk = disk;
    this.#env = env;
    this.#prng = prng;
    this.#clockSkewMicros = clockSkewMicros;
  }

  get up(): boolean {
    return this.#up;
  }

  /** Boots the drivers from the disk. False when the metadata plane refused (the node stays down). */
  boot(): boolean {
    this.boots += 1;
    const env = this.#env;
    const n = env.replicaCount;
    const time = { realtimeMicros: (): bigint => EPOCH_MICROS + BigInt(env.now()) * 10_000n + this.#clockSkewMicros };
    const opened = MetadataDriver.open({
      config: { cluster: env.cluster, replica: this.index, replicaCount: n, prepareQueueDepth: 32, journalSlots: 1024 },
      disk: this.disk,
      dir: this.layout.metadataDir,
      transport: this.#transport(),
      time,
      prng: this.#prng.fork(),
      completionDelay: (c) => env.completionDelay(this.index, c),
      hooks: this.#hooks(METADATA_GROUP_ID),
      reportBootReplay: true,
    });
    if (!opened.ok) {
      this.dead = `${opened.reason}: ${opened.detail}`;
      return false;
    }
    this.metadata = opened.driver;
    this.host = new MetadataHost({
      driver: opened.driver,
      transport: this.#transport(),
      ports: {
        hashPassword: fakeHash,
        verifyPassword: (stored, password) => stored === fakeHash(password),
        generateToken: () => `token-${this.#prng.u32()}`,
      },
      now: time.realtimeMicros,
      patCleanerIntervalTicks: 1000,
    });
    this.gateway = new NodeGateway({
      index: this.index, cluster: env.cluster, metadata: opened.driver, host: this.host,
      partition: (group) => this.partitions.get(group)?.driver ?? null,
      send: (endpoint, frame) => env.send(this.index, endpoint, frame),
      now: () => env.now(),
      realtimeMicros: time.realtimeMicros,
    });
    this.#up = true;
    this.#revision = -1n;
    this.#latched = n > 1;
    this.#diskQueue = env.asyncFrontier ? new DeferredDiskQueue(this.disk) : null;
    // Partition directories whose removal a disk error cut short (partition-removal.ts); a sweep
    // that fails leaves them for the next boot, as the runtime's supervisor does.
    const swept = sweepDeletedPartitions(this.disk, this.layout.root);
    if (!swept.ok) env.event(this.index, METADATA_GROUP_ID, 'partition_sweep_deferred', swept.error.message);
    this.#reconcilePartitions();
    return true;
  }

  /** Each open partition group's durable view (by the checker's history key). */
  partitionDurableViews(): [bigint, number][] {
    const views: [bigint, number][] = [];
    for (const [group, entry] of this.partitions) views.push([this.key(group, entry.createdRevision), entry.driver.replica.role.durableView ?? 0]);
    return views;
  }

  /** Power loss: every in-memory object is gone; the disk keeps what was durable. */
  crash(): void {
    this.refused.clear();
    this.#dropDiskThread();
    this.#up = false;
    this.metadata = null;
    this.host = null;
    this.partitions.clear();
    this.gateway = null;
    this.disk.crash();
  }

  /** Process crash (kill -9): in-memory objects are gone, the disk (page cache included) stays. */
  kill(): void {
    this.refused.clear();
    this.#dropDiskThread();
    this.#up = false;
    this.metadata = null;
    this.host = null;
    this.partitions.clear();
    this.gateway = null;
  }

  /** A frame from the network (replica plane or a client). */
  deliver(from: number, frame: Uint8Array): void {
    if (!this.#up || this.metadata === null) return;
    if (from < this.#env.replicaCount) this.#onReplicaFrame(frame);
    else this.gateway?.deliver(from, frame);
  }

  /** The boot latch is still closed: this node hosts no partition group yet. */
  get latched(): boolean {
    return this.#latched;
  }

  tick(): void {
    if (!this.#up || this.metadata === null || this.host === null) return;
    this.metadata.tick();
    this.host.tick();
    if (this.#latched) {
      const role = this.metadata.replica.role;
      if (role.normal && role.commitMin >= role.commitMax && !role.transferring && !role.ceded) {
        this.#latched = false;
        this.#revision = -1n; // reconcile below, on this state
      }
    }
    if (this.refused.size > 0 && this.metadata.ticks % 100 === 0) this.#revision = -1n; // retry now and then
    this.#reconcilePartitions();
    for (const entry of this.partitions.values()) entry.driver.tick();
    this.#runDiskThread();
    this.gateway?.tick();
    this.flush();
  }

  /** The disk thread finishes each queued job with probability 1/2 per tick, oldest first. */
  #runDiskThread(): void {
    const queue = this.#diskQueue;
    while (queue !== null && queue.pending > 0 && this.#prng.chance(1, 2)) queue.runNext();
  }

  /** The process is gone: jobs still queued never reached the disk. */
  #dropDiskThread(): void {
    this.#diskQueue?.drop();
    this.#diskQueue = null;
  }

  /** End of a step: group commit for every driver. */
  flush(): void {
    if (!this.#up || this.metadata === null) return;
    this.metadata.flush();
    for (const entry of this.partitions.values()) entry.driver.flush();
  }

  // -------------------------------------------------------------------------------------------

  #transport() {
    return {
      sendToReplica: (replica: number, frame: Uint8Array): void => this.#env.send(this.index, replica, frame),
      sendToClient: (client: bigint, token: ClientToken | null, frame: Uint8Array): void => this.gateway?.toClient(client, token, frame),
    };
  }

  /**
   * The checker's key of a group's history: a re-created partition is a new history. So is a
   * single replica's partition after a crash: its durable log holds batches, not op numbers, and
   * the ops above the recorded frontier are renumbered at boot (one per surviving batch;
   * docs/internals-driver.md), so only its data, not its op numbering, carries across boots.
   */
  key(group: bigint, createdRevision: bigint): bigint {
    if (group === METADATA_GROUP_ID) return group;
    const epoch = this.#env.replicaCount === 1 ? BigInt(this.boots) : 0n;
    return group | (createdRevision << 64n) | (epoch << 128n);
  }

  /** The checker's key of the history of `group` as this node holds it now; null when not open here. */
  historyKey(group: bigint): bigint | null {
    if (group === METADATA_GROUP_ID) return group;
    const entry = this.partitions.get(group);
    return entry === undefined ? null : this.key(group, entry.createdRevision);
  }

  #hooks(group: bigint, createdRevision = 0n, driver: { current: PartitionDriver | null } = { current: null }) {
    const env = this.#env;
    const key = this.key(group, createdRevision);
    return {
      fatal: (reason: string, detail: string): void => env.fatal(this.index, group, reason, detail),
      committed: (op: number, operation: number, checksum: bigint | null): void => {
        env.trace(1, op, operation);
        const replica = group === METADATA_GROUP_ID ? (this.metadata?.replica ?? null) : (driver.current?.replica ?? null);
        env.committed(this.index, key, op, operation, checksum, replica?.role.view ?? null);
        if (operation === Operation.StoreConsumerOffset || operation === Operation.DeleteConsumerOffset) {
          const frame = driver.current?.replica.journalFrame(op) ?? null;
          if (frame !== null) env.offsetCommitted(this.index, key, group, op, operation, frame.subarray(256));
        }
      },
      event: (name: string, detail: string): void => env.event(this.index, group, name, detail),
      applied: (op: AppliedOp): void => env.applied(this.index, op),
      installed: (snapshot: InstalledSnapshot): void => env.installed(this.index, { ...snapshot, group: key }),
      sessionResult: (result: SessionResult): void => this.gateway?.sessionResult(result),
      completed: (completion: Completion): void => env.trace(2, completion.kind.length, 'op' in completion ? completion.op : 0),
    };
  }

  #reconcilePartitions(): void {
    const metadata = this.metadata;
    if (metadata === null || this.#latched) return;
    const state = metadata.state;
    if (state.revision === this.#revision) return;
    this.#revision = state.revision;
    const wanted = new Map<bigint, ReturnType<typeof state.partitions>[number]>();
    for (const route of state.partitions()) wanted.set(route.consensusGroupId, route);
    for (const [group, entry] of this.partitions) {
      const route = wanted.get(group);
      if (route !== undefined && route.createdRevision === entry.createdRevision) continue;
      entry.driver.destroy();
      this.#env.partitionDestroyed?.(this.index, this.key(group, entry.createdRevision));
      this.partitions.delete(group);
    }
    for (const [group, route] of wanted) {
      if (this.partitions.has(group)) continue;
      const driver = this.#openPartition(group, route.streamId, route.topicId, route.partitionId, route.createdRevision, route.purgeGeneration);
      if (driver !== null) this.partitions.set(group, { driver, createdRevision: route.createdRevision });
    }
  }

  #openPartition(group: bigint, streamId: number, topicId: number, partitionId: number, createdRevision: bigint, purgeGeneration: bigint): PartitionDriver | null {
    const env = this.#env;
    const dir = this.layout.partitionDir(streamId, topicId, partitionId);
    const holder: { current: PartitionDriver | null } = { current: null };
    const options = {
      config: { cluster: env.cluster, replica: this.index, replicaCount: env.replicaCount, ...partitionCoreConfig({ prepareQueueDepth: env.partitionPipelineDepth, groupWaitDepth: env.partitionGroupWaitDepth }) },
      disk: this.disk,
      dir,
      group,
      identity: { streamId, topicId, partitionId },
      createdRevision,
      storage: { messagesRequiredToSave: env.messagesRequiredToSave, sizeOfMessagesRequiredToSave: 1 << 20, segmentSize: 1 << 20 },
      transport: this.#transport(),
      time: { realtimeMicros: (): bigint => EPOCH_MICROS + BigInt(env.now()) * 10_000n + this.#clockSkewMicros },
      prng: this.#prng.fork(),
      completionDelay: (c: Completion) => env.completionDelay(this.index, c),
      hooks: this.#hooks(group, createdRevision, holder),
      peerLinked: (replica: number) => env.linked(this.index, replica),
      ...(this.#diskQueue === null ? {} : { diskQueue: this.#diskQueue }),
    };
    let opened = PartitionDriver.open(options);
    if (!opened.ok && opened.reason === 'partition_recovery_refused') {
      // A partition whose files contradict each other is rebuilt from peers.
      const wiped = wipePartition(this.disk, dir, { generation: purgeGeneration, createdRevision });
      if (wiped !== null) throw new Error(wiped);
      opened = PartitionDriver.open(options);
    }
    if (!opened.ok) {
      // Refused again (only a faulty disk does that, e.g. both superblock copies damaged): this
      // replica cannot host the partition; it is reported and retried at the next reconcile.
      this.#env.fatal(this.index, group, opened.reason, opened.detail);
      this.refused.add(group);
      return null;
    }
    this.refused.delete(group);
    holder.current = opened.driver;
    env.partitionOpened?.(this.index, this.key(group, createdRevision), opened.driver.replica.role.view);
    return opened.driver;
  }

  #onReplicaFrame(frame: Uint8Array): void {
    if (frame.length < 256) return;
    const command = frame[60] as number;
    const metadata = this.metadata as MetadataDriver;
    if (command >= 26 && command <= 29) {
      metadata.onMessage(frame);
      return;
    }
    const spec = LAYOUT_BY_COMMAND[command]?.['group'];
    if (spec === undefined) return;
    const group = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(spec.offset, true);
    if (group === METADATA_GROUP_ID) metadata.onMessage(frame);
    else this.partitions.get(group)?.driver.onMessage(frame);
  }
}

/** A replica frame of the metadata plane (prepare/commit family 26..29 or a metadata group field). */
export function isMetadataFrame(frame: Uint8Array): boolean {
  return replicaFrameGroup(frame) === METADATA_GROUP_ID;
}

/** The consensus group a replica frame belongs to, or null when it names none (or is too short). */
export function replicaFrameGroup(frame: Uint8Array): bigint | null {
  if (frame.length < 256) return null;
  const command = frame[60] as number;
  if (command >= 26 && command <= 29) return METADATA_GROUP_ID;
  const spec = LAYOUT_BY_COMMAND[command]?.['group'];
  if (spec === undefined) return null;
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(spec.offset, true);
}
