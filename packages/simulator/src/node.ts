/**
 * One simulated Shoal node: the PRODUCTION drivers (a MetadataDriver with its MetadataHost, and a
 * PartitionDriver per partition the committed metadata names) on this node's own SimDisk, plus a
 * minimal client gateway standing in for the runtime's shard workers (decode a request frame,
 * login, route by plane, echo replies). Crash = every in-memory object is dropped and the disk
 * loses what was not durable; restart = the drivers boot from the disk.
 */
import { type ClientRequest, type ClientToken, type Completion, METADATA_GROUP_ID } from '@shoal/consensus';
import {
  ErrorCode, EvictionReason, LAYOUT_BY_COMMAND, Operation, SHOAL_PROTOCOL_VERSION, decodeLoginRegisterRequest, decodeRequestFrame,
  encodeLoginReply, encodeResultSuccess, isMetadataPlane,
} from '@shoal/protocol';
import {
  type AppliedOp, INTERNAL_TOKEN, type InstalledSnapshot, MetadataDriver, MetadataHost, PartitionDriver, type SessionResult,
  buildEvictionFrame, buildReply, buildStatusReply, echoReply, wipePartition,
} from '@shoal/replica';
import { admitOffsetWrite, admitSendMessages } from '@shoal/state';
import type { Prng } from '@shoal/stdx';
import { DataDirLayout, type SimDisk } from '@shoal/storage';

/** What a node needs from the simulation around it. */
export interface NodeEnv {
  readonly replicaCount: number;
  readonly cluster: bigint;
  /** Partition storage fsync threshold (messages). */
  readonly messagesRequiredToSave: number;
  now(): number;
  send(from: number, to: number, frame: Uint8Array): void;
  /** Checker and trace hooks. */
  committed(node: number, group: bigint, op: number, operation: number, checksum: bigint | null): void;
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
}

interface TokenInfo {
  readonly endpoint: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  readonly login: boolean;
  /** Login: the user the credentials verified as. */
  userId: number;
}

interface PartitionEntry {
  readonly driver: PartitionDriver;
  readonly createdRevision: bigint;
}

const ROOT = '/data';
const TOKENS_MAX = 4096;
const EPOCH_MICROS = 1_700_000_000_000_000n;
const NO_HASH = (): number => 0;

/** Deterministic stand-ins for the runtime's piscina pool (synchronous: the run stays deterministic). */
function fakeHash(password: string): string {
  return `sim$${password}`;
}

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
  #tokens = new Map<number, TokenInfo>();
  #nextToken = 1;
  #revision = -1n;
  /** Boots so far (0 = never booted). */
  boots = 0;
  /** Why the node is down for good (a refused metadata boot), or null. */
  dead: string | null = null;
  /** Partition groups whose storage refused to open here even after a wipe (faulty disks only). */
  readonly refused = new Set<bigint>();
  #up = false;

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
    this.#up = true;
    this.#revision = -1n;
    this.#reconcilePartitions();
    return true;
  }

  /** Power loss: every in-memory object is gone; the disk keeps what was durable. */
  crash(): void {
    this.refused.clear();
    this.#up = false;
    this.metadata = null;
    this.host = null;
    this.partitions.clear();
    this.#tokens = new Map();
    this.disk.crash();
  }

  /** Process crash (kill -9): in-memory objects are gone, the disk (page cache included) stays. */
  kill(): void {
    this.refused.clear();
    this.#up = false;
    this.metadata = null;
    this.host = null;
    this.partitions.clear();
    this.#tokens = new Map();
  }

  /** A frame from the network (replica plane or a client). */
  deliver(from: number, frame: Uint8Array): void {
    if (!this.#up || this.metadata === null) return;
    if (from < this.#env.replicaCount) this.#onReplicaFrame(frame);
    else this.#onClientFrame(from, frame);
  }

  tick(): void {
    if (!this.#up || this.metadata === null || this.host === null) return;
    this.metadata.tick();
    this.host.tick();
    if (this.refused.size > 0 && this.metadata.ticks % 100 === 0) this.#revision = -1n; // retry now and then
    this.#reconcilePartitions();
    for (const entry of this.partitions.values()) entry.driver.tick();
    this.flush();
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
      sendToClient: (client: bigint, token: ClientToken | null, frame: Uint8Array): void => this.#toClient(client, token, frame),
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

  #hooks(group: bigint, createdRevision = 0n, driver: { current: PartitionDriver | null } = { current: null }) {
    const env = this.#env;
    const key = this.key(group, createdRevision);
    return {
      fatal: (reason: string, detail: string): void => env.fatal(this.index, group, reason, detail),
      committed: (op: number, operation: number, checksum: bigint | null): void => {
        env.trace(1, op, operation);
        env.committed(this.index, key, op, operation, checksum);
        if (operation === Operation.StoreConsumerOffset || operation === Operation.DeleteConsumerOffset) {
          const frame = driver.current?.replica.journalFrame(op) ?? null;
          if (frame !== null) env.offsetCommitted(this.index, key, group, op, operation, frame.subarray(256));
        }
      },
      event: (name: string, detail: string): void => env.event(this.index, group, name, detail),
      applied: (op: AppliedOp): void => env.applied(this.index, op),
      installed: (snapshot: InstalledSnapshot): void => env.installed(this.index, { ...snapshot, group: key }),
      sessionResult: (result: SessionResult): void => this.#onSessionResult(result),
      completed: (completion: Completion): void => env.trace(2, completion.kind.length, 'op' in completion ? completion.op : 0),
    };
  }

  #reconcilePartitions(): void {
    const metadata = this.metadata;
    if (metadata === null) return;
    const state = metadata.state;
    if (state.revision === this.#revision) return;
    this.#revision = state.revision;
    const wanted = new Map<bigint, ReturnType<typeof state.partitions>[number]>();
    for (const route of state.partitions()) wanted.set(route.consensusGroupId, route);
    for (const [group, entry] of this.partitions) {
      const route = wanted.get(group);
      if (route !== undefined && route.createdRevision === entry.createdRevision) continue;
      entry.driver.destroy();
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
      config: { cluster: env.cluster, replica: this.index, replicaCount: env.replicaCount, prepareQueueDepth: 32 },
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

  // ---- the client gateway (the runtime's job in production) ---------------------------------

  #token(info: TokenInfo): number {
    const token = this.#nextToken++;
    this.#tokens.set(token, info);
    if (this.#tokens.size > TOKENS_MAX) {
      const oldest = this.#tokens.keys().next().value;
      if (oldest !== undefined) this.#tokens.delete(oldest);
    }
    return token;
  }

  #toClient(client: bigint, token: ClientToken | null, frame: Uint8Array): void {
    if (token === null || token === INTERNAL_TOKEN) return;
    const info = this.#tokens.get(token);
    if (info === undefined || info.client !== client) return;
    this.#tokens.delete(token);
    this.#env.send(this.index, info.endpoint, echoReply(frame, info));
  }

  #context(info: TokenInfo) {
    const m = this.metadata as MetadataDriver;
    return {
      cluster: this.#env.cluster, view: m.status.view, replica: this.index, client: info.client, request: info.request,
      operation: info.operation, timestamp: info.timestamp,
    };
  }

  #answer(token: number, code: number): void {
    const info = this.#tokens.get(token);
    if (info === undefined) return;
    this.#toClient(info.client, token, buildStatusReply(this.#context(info), code));
  }

  #evict(token: number, reason: number): void {
    const info = this.#tokens.get(token);
    if (info === undefined) return;
    this.#toClient(info.client, token, buildEvictionFrame(this.#context(info), reason));
  }

  #onClientFrame(endpoint: number, frame: Uint8Array): void {
    const decoded = decodeRequestFrame(frame);
    if (!decoded.ok) return;
    const h = decoded.value.header;
    const body = decoded.value.body;
    const metadata = this.metadata as MetadataDriver;
    const host = this.host as MetadataHost;
    const info: TokenInfo = {
      endpoint, client: h.client, request: h.request, operation: h.operation, timestamp: h.timestamp, login: h.operation === Operation.Register, userId: 0,
    };
    if (h.client === 0n) return;
    const token = this.#token(info);
    if (h.operation === Operation.Register) {
      const login = decodeLoginRegisterRequest(body);
      if (!login.ok) {
        this.#evict(token, EvictionReason.MalformedLogin);
        return;
      }
      host.login({ client: h.client, token, credentials: { kind: 'password', username: login.value.username, password: login.value.password } }, (outcome) => {
        if (outcome.kind === 'refused') this.#evict(token, outcome.eviction);
        else info.userId = outcome.userId;
      });
      return;
    }
    if (h.operation === Operation.Logout) {
      metadata.submitSession({ session: 'logout', client: h.client, userId: 0, epoch: h.session, request: h.request, token });
      return;
    }
    const session = metadata.sessionUser(h.client);
    const request: ClientRequest = {
      client: h.client, request: h.request, session: h.session, requestChecksum: h.requestChecksum, operation: h.operation, body,
      userId: session?.userId ?? 0, timestamp: h.timestamp, token,
    };
    if (isMetadataPlane(h.operation)) {
      host.submitRequest(request);
      return;
    }
    // Partition plane: the session must be known here (the metadata table is replicated).
    if (session === null || session.epoch !== h.session) {
      this.#answer(token, ErrorCode.TransientNotCommitted);
      return;
    }
    if (h.operation === Operation.SendMessages) {
      const admitted = admitSendMessages(metadata.state, body, session.userId, 0, NO_HASH);
      if (admitted.kind === 'reject') this.#answer(token, admitted.status);
      else if (admitted.kind === 'evict') this.#evict(token, EvictionReason.InvalidRequestBody);
      else this.#toPartition(token, admitted.value.group, { ...request, body: admitted.value.batch });
      return;
    }
    if (h.operation === Operation.StoreConsumerOffset || h.operation === Operation.DeleteConsumerOffset) {
      const admitted = admitOffsetWrite(metadata.state, h.operation, body, { userId: session.userId, client: h.client, h32: NO_HASH });
      if (admitted.kind === 'reject') this.#answer(token, admitted.status);
      else if (admitted.kind === 'evict') this.#evict(token, EvictionReason.InvalidRequestBody);
      else this.#toPartition(token, admitted.target.group, { ...request, body: admitted.body });
      return;
    }
    this.#evict(token, EvictionReason.InvalidRequestOperation);
  }

  #toPartition(token: number, group: bigint, request: ClientRequest): void {
    const entry = this.partitions.get(group);
    if (entry === undefined) {
      this.#answer(token, ErrorCode.TransientNotCommitted);
      return;
    }
    entry.driver.onRequest(request);
  }

  #onSessionResult(result: SessionResult): void {
    const info = this.#tokens.get(result.token);
    if (info === undefined) return;
    if (result.session === 'logout') {
      if (result.outcome === 'ok') this.#toClient(info.client, result.token, buildReply(this.#context(info), new Uint8Array(0)));
      else this.#answer(result.token, ErrorCode.TransientNotCommitted);
      return;
    }
    switch (result.outcome) {
      case 'ok': {
        const body = encodeResultSuccess(encodeLoginReply({ userId: info.userId, session: result.epoch, serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: 'sim' }));
        this.#toClient(info.client, result.token, buildReply({ ...this.#context(info), commit: result.epoch }, body));
        return;
      }
      case 'client_id_owned_by_another_user':
        this.#evict(result.token, EvictionReason.SessionError);
        return;
      case 'not_primary':
      case 'not_caught_up':
      case 'pipeline_full':
      case 'primary_unreachable':
        this.#answer(result.token, ErrorCode.TransientNotAccepted);
        return;
      default:
        this.#answer(result.token, ErrorCode.TransientNotCommitted);
    }
  }
}
