/**
 * A shard worker thread: client connections (a share of the node's listening socket), the
 * partition groups hashed onto this shard, and a read-only copy of the metadata state.
 *
 * ```
 *  sockets ──▶ ClientPlane ──┬─ answered here (reads from the metadata copy, PING, login gates)
 *                            ├─ own partition ─────────────▶ PartitionHost (same thread, no copy)
 *                            └─ other thread ── ring ──▶ metadata worker / other shard
 *  rings ──▶ metadata_snapshot / metadata_commit ─▶ MetadataCopy ─▶ PartitionHost.reconcile
 *            client_request (fenced on the metadata op) ─▶ PartitionHost.execute
 *            reply / session_result ─▶ the connection (by token)
 *  every 10 ms: partition drivers tick; every second: connection clocks, counters, traffic
 * ```
 *
 * Start-up: the shard waits for the metadata snapshot, then listens (shard
 * 0 binds `tcp.address` and reports the descriptor; the others share it when the supervisor
 * relays it) and reports ready.
 */
import { randomBytes } from 'node:crypto';
import xxhash from 'xxhash-wasm';
import { ErrorCode, RequestHeaderView, clusterIdFromName } from '@shoal/protocol';
import { concatBytes } from '@shoal/stdx';
import { Channels } from '../channels/channels.js';
import type { ChannelMessage, ClientRequestMessage, SessionSubmitMessage } from '../channels/messages.js';
import { ClientPlane } from '../client-plane/client-plane.js';
import { ClientListener } from '../client-plane/listener.js';
import { NodeFacts } from '../client-plane/node-facts.js';
import type { PlaneContext } from '../client-plane/plane-context.js';
import { codeReply, type ReplyContext } from '@shoal/gateway';
import type { ShoalConfig } from '../config/index.js';
import { ChannelServer, type ForwardedRequestSink } from '../forwarding/channel-server.js';
import { channelKeys, type ChannelIdentity } from '../forwarding/handshake.js';
import { tokenShard } from '../client-plane/token.js';
import { WallClock } from '../engine/clock.js';
import { RequestLedger } from '../engine/request-ledger.js';
import { driverFatalReason } from '../metadata/fatal-reasons.js';
import { Turn } from '../node/turn.js';
import { ReplicaLinks, linkSettings } from '../node/replica-links.js';
import { ReplicaPlane, ReplicaPlaneError } from '../replica-plane/index.js';
import { shardThread } from '../node/worker-data.js';
import type { BearerVerdict } from '../node/control.js';
import { WorkerRuntime, type WorkerControl } from '../node/worker-runtime.js';
import { HashPool } from '../pool/hash-pool.js';
import { TimedDisk } from '../metrics/timed-disk.js';
import { WorkerDiskQueue } from '../disk/worker-disk-queue.js';
import { BearerWaits } from './bearer-waits.js';
import { MetadataCopy } from './metadata-copy.js';
import { PartitionHost, RETENTION_INTERVAL_MS, copyRequest } from './partition-host.js';
import { shardOfGroup } from './shard-of.js';

const TICK_MS = 10;
const SWEEP_MS = 1000;
/** Ring backlog (bytes waiting for space towards other threads) above which sockets are not read. */
const BACKLOG_HOLD_BYTES = 64 * 1024 * 1024;

class ShardWorker implements ForwardedRequestSink {
  readonly #rt: WorkerRuntime;
  readonly #shard: number;
  readonly #thread: number;
  readonly #shardCount: number;
  readonly #clock = new WallClock();
  readonly #ledger = new RequestLedger();
  /** The shard's disk thread for partition frontier work (`partition.async_frontier`). */
  #diskQueue: WorkerDiskQueue | null = null;
  readonly #hasher = new HashPool();
  readonly #copy: MetadataCopy;
  readonly #channels: Channels;
  readonly #turn: Turn;
  readonly #partitions: PartitionHost;
  readonly #reply: ReplyContext;
  readonly #facts: NodeFacts;
  readonly #links: ReplicaLinks;
  /** Requests waiting for this copy to reach their metadata op (FIFO), with when they arrived. */
  #deferred: Deferred[] = [];
  readonly #bearers = new BearerWaits();
  readonly #channelServer: ChannelServer;
  #plane: ClientPlane | null = null;
  #listener: ClientListener | null = null;
  #draining = false;
  #held = false;
  #listenFd: number | null = null;
  #listening = false;
  #timers: NodeJS.Timeout[] = [];
  #lastRetentionMs = Date.now();

  constructor(rt: WorkerRuntime) {
    if (rt.data.role !== 'shard') throw new Error('shard worker started with metadata worker data');
    this.#rt = rt;
    this.#shard = rt.data.shard;
    this.#thread = shardThread(this.#shard);
    const config = rt.data.config;
    this.#shardCount = config.system.sharding.shardCount;
    this.#copy = new MetadataCopy({ personalAccessTokensPerUserMax: config.personalAccessToken.maxTokensPerUser });
    this.#turn = new Turn(() => this.#endTurn());
    this.#facts = new NodeFacts(config, rt.status);
    const cluster = clusterIdFromName(config.cluster.name);
    const status = rt.status;
    this.#reply = {
      cluster,
      replica: config.node.replicaId,
      view: () => status.metadata().view,
      commit: () => status.metadata().commit,
    };
    this.#channels = new Channels({
      endpoints: rt.data.mesh,
      onMessage: (message) => this.#onMessage(message),
      onBatchEnd: () => this.#turn.touch(),
      framesPerRingPerTurn: 256,
      messageBytesMax: config.messageBus.maxMessageSizeBytes + 4096,
      log: rt.log.child('channels'),
    });
    this.#links = new ReplicaLinks({
      self: this.#thread,
      shardCount: this.#shardCount,
      status,
      log: rt.log.child('replica'),
      link: linkSettings(config),
      deliver: (group, frame, ingress) => this.#partitions.onReplicaFrame(group, frame, ingress),
      ring: (thread, message) => {
        this.#channels.send(thread, message);
        this.#turn.touch();
      },
      closed: (replica) => rt.post({ type: 'replica_closed', replica }),
    });
    this.#diskQueue = config.partition.asyncFrontier ? new WorkerDiskQueue() : null;
    this.#partitions = new PartitionHost({
      shard: this.#shard,
      config,
      disk: new TimedDisk(rt.metrics, 'partition'),
      diskQueue: this.#diskQueue,
      status,
      ledger: this.#ledger,
      reply: this.#reply,
      log: rt.log.child('partitions'),
      deliver: (token, group, frame, completes) => this.#deliver(token, group, frame, completes),
      deliverParts: (token, parts, written) => this.#deliverParts(token, parts, written),
      forward: (thread, message) => this.#dispatch(thread, message),
      fatal: (reason, detail) => rt.fatal(driverFatalReason(reason), detail),
      touched: () => this.#turn.touch(),
      toReplica: (replica, group, frame) => this.#links.send(replica, group, frame),
      metrics: rt.metrics,
    });
    this.#copy.onChange(() => this.#onMetadataChange());
    this.#channelServer = new ChannelServer({
      shard: this.#shard,
      identity: channelIdentity(config),
      frameSizeMax: config.tcp.frameSizeMaxBytes,
      reply: this.#reply,
      randomBytes: (size) => new Uint8Array(randomBytes(size)),
      log: rt.log.child('forwarding'),
    }, this);
  }

  /**
   * A request another node forwarded to this one (forwarding/channel-server.ts): it waits for
   * this node's metadata copy to reach the forwarder's, like a request from another shard.
   */
  acceptForwarded(message: ClientRequestMessage): void {
    const owner = shardThread(shardOfGroup(message.group, this.#shardCount));
    if (owner !== this.#thread) {
      this.#channels.send(owner, message);
      this.#turn.touch();
      return;
    }
    this.#acceptRequest(message);
    this.#turn.touch();
  }

  /** A request for a partition of this shard: now, or behind the metadata fence. */
  #acceptRequest(message: ClientRequestMessage): void {
    if (message.metadataOp > this.#copy.appliedOp || this.#deferred.length > 0) {
      this.#deferred.push({ message: copyRequest(message), sinceMs: Date.now() });
    } else {
      this.#partitions.execute(message);
    }
  }

  async start(): Promise<void> {
    const rt = this.#rt;
    const { h32Raw } = await xxhash();
    const h32 = (bytes: Uint8Array): number => h32Raw(bytes, 0) >>> 0;
    const config = rt.data.config;
    const ctx: PlaneContext = {
      shard: this.#shard,
      metadata: this.#copy,
      status: rt.status,
      facts: this.#facts,
      hasher: this.#hasher,
      h32,
      reply: this.#reply,
      log: rt.log.child('client'),
      listener: () => this.#listener as ClientListener,
      ownerThreadOf: (group) => shardThread(shardOfGroup(group, this.#shardCount)),
      dispatch: (thread, message) => this.#dispatch(thread, message),
      channels: this.#channelServer,
      nowMicros: () => this.#clock.realtimeMicros(),
    };
    this.#plane = new ClientPlane(ctx, () => this.#held || this.#draining);
    this.#listener = new ClientListener({
      shard: this.#shard,
      status: rt.status,
      limits: {
        frameSizeMax: config.tcp.frameSizeMaxBytes,
        requestsInFlightMax: config.tcp.requestsInFlightMax,
        writeBufferBytesMax: config.tcp.writeBufferBytesMax,
        idleTimeoutMs: config.tcp.idleTimeoutMs,
        frameReadTimeoutMs: config.tcp.frameReadTimeoutMs,
        writeStallTimeoutMs: config.tcp.writeStallTimeoutMs,
      },
      connectionsMax: config.tcp.connectionsMax,
      tls: rt.data.role === 'shard' ? rt.data.clientTls : null,
      handler: this.#plane,
      log: rt.log.child('listener'),
      timing: { observe: (command, elapsedMs) => rt.metrics.request(command).observeMs(elapsedMs) },
    });
    rt.attach({
      onDrain: (deadlineMs) => this.#drain(deadlineMs),
      onStop: () => this.#stop(),
      onListenFd: (fd) => {
        this.#listenFd = fd;
        void this.#maybeListen();
      },
      onAdoptReplica: (replica, fd, leftover) => this.#links.adopt(replica, fd, leftover),
      onStartReplicaPlane: () => void this.#startReplicaPlane(),
      stats: () => this.#stats(),
      verifyBearer: (token, answer) => this.#bearers.check(token, this.#metadataFence(), Date.now(), (t) => this.#verifyBearer(t), answer),
    });
    this.#timers.push(setInterval(() => this.#onTick(), TICK_MS));
    this.#timers.push(setInterval(() => this.#onSweep(), SWEEP_MS));
    void this.#channels.run().catch((error: unknown) => rt.fatal('assertion', `shard channels: ${String(error)}`));
  }

  // ---- inbound ------------------------------------------------------------------------------

  #onMessage(message: ChannelMessage): void {
    if (this.#rt.stopped) return;
    switch (message.kind) {
      case 'metadata_snapshot':
        this.#copy.applySnapshot(message);
        break;
      case 'metadata_commit':
        this.#copy.applyCommit(message);
        break;
      case 'client_request':
        this.#acceptRequest(message);
        break;
      case 'reply':
        this.#plane?.onReply(message, true);
        break;
      case 'session_result':
        this.#plane?.onSessionResult(message);
        break;
      case 'replica_frame':
        this.#links.onRing(message);
        break;
      default:
        this.#rt.log.warn('unexpected channel message on a shard', { kind: message.kind });
    }
  }

  #onMetadataChange(): void {
    if (!this.#copy.ready) return;
    this.#maybeUnlatch();
    this.#partitions.reconcile(this.#copy.state);
    while (this.#deferred.length > 0 && (this.#deferred[0] as Deferred).message.metadataOp <= this.#copy.appliedOp) {
      this.#partitions.execute((this.#deferred.shift() as Deferred).message);
    }
    this.#plane?.onMetadataChange();
    this.#bearers.settle(this.#copy.appliedOp, Date.now(), (t) => this.#verifyBearer(t));
    void this.#maybeListen();
  }

  // ---- outbound -----------------------------------------------------------------------------

  /** To another thread's ring, or run here when the target is this shard. */
  #dispatch(thread: number, message: ClientRequestMessage | SessionSubmitMessage): void {
    if (thread !== this.#thread) {
      this.#channels.send(thread, message);
      this.#turn.touch();
      return;
    }
    if (message.kind === 'client_request') this.#acceptRequest(message);
  }

  #deliver(token: number, group: bigint, frame: Uint8Array | null, completes: boolean): void {
    const shard = tokenShard(token);
    if (shard === this.#shard) {
      this.#plane?.onReply({ kind: 'reply', token, group, frame, completes }, false);
      return;
    }
    this.#channels.send(shardThread(shard), { kind: 'reply', token, group, frame, completes });
    this.#turn.touch();
  }

  #deliverParts(token: number, parts: readonly Uint8Array[], written: () => void): void {
    const shard = tokenShard(token);
    if (shard === this.#shard && this.#plane !== null) {
      this.#plane.onReplyParts(token, parts, written);
      return;
    }
    if (shard === this.#shard) return written();
    this.#deliver(token, 0n, concatBytes(parts), true);
    written();
  }

  // ---- listening ----------------------------------------------------------------------------

  async #maybeListen(): Promise<void> {
    const rt = this.#rt;
    const listener = this.#listener;
    if (this.#listening || listener === null || !this.#copy.ready) return;
    // A single node serves once its catalog can answer a login (the root user exists).
    if (rt.data.config.node.replicaCount === 1 && this.#copy.state.model.users.size === 0) return;
    const tcp = rt.data.config.node.listeners.tcp;
    if (tcp === null) {
      this.#listening = true;
      rt.post({ type: 'ready' });
      return;
    }
    if (this.#shard !== 0 && this.#listenFd === null) return;
    this.#listening = true;
    try {
      if (this.#shard === 0) {
        const bound = await listener.listenOnAddress(tcp.host, tcp.port);
        rt.status.publishBoundPort('tcp', bound.port);
        rt.post({ type: 'listening', fd: bound.fd, host: bound.host, port: bound.port });
      } else {
        await listener.listenOnFd(this.#listenFd as number);
      }
      rt.post({ type: 'ready' });
    } catch (error) {
      rt.fatal('listen_failed', `${tcp.host}:${tcp.port}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * TLS on: the whole replica plane (listener, dialer, TLS, handshakes, every link) runs on this
   * shard, the node's replica-I/O owner; links never change threads (docs/cluster.md).
   */
  async #startReplicaPlane(): Promise<void> {
    const rt = this.#rt;
    const links = this.#links;
    try {
      const plane = await ReplicaPlane.start({
        config: rt.data.config,
        log: rt.log.child('replica'),
        onPeerFrames: (peer, frames) => links.onPeerFrames(peer, frames),
        onPeerUp: (peer) => links.peerUp(peer),
        onPeerDown: (peer) => links.peerDown(peer),
      });
      links.attachPlane(plane);
      const address = plane.address;
      rt.post({ type: 'replica_plane', address: address === null ? null : `${address.host}:${address.port}` });
    } catch (error) {
      const listen = error instanceof ReplicaPlaneError && error.code === 'listen_failed';
      rt.fatal(listen ? 'listen_failed' : 'config_invalid', `replica plane: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // ---- clocks -------------------------------------------------------------------------------

  /**
   * The boot latch (partition-host.ts): open once the metadata worker reported its replica
   * current since boot and this shard's copy applied the op it had sent by then.
   */
  #maybeUnlatch(): void {
    if (!this.#partitions.latched || !this.#copy.ready) return;
    const current = this.#rt.status.metadataCurrent();
    if (current === null || this.#copy.appliedOp < current) return;
    this.#partitions.unlatch(this.#copy.state);
  }

  #onTick(): void {
    if (this.#rt.stopped) return;
    this.#maybeUnlatch();
    this.#partitions.tick();
    if (this.#bearers.size > 0) this.#bearers.settle(this.#copy.appliedOp, Date.now(), (t) => this.#verifyBearer(t));
    this.#turn.touch();
  }

  #onSweep(): void {
    if (this.#rt.stopped) return;
    const now = Date.now();
    this.#listener?.sweep(now);
    this.#partitions.links.sweep(now);
    this.#channelServer.sweep(now);
    this.#expireDeferred(now);
    const heartbeat = this.#rt.data.config.heartbeat;
    if (heartbeat.enabled) this.#plane?.sweepStale(now, heartbeat.staleAfterMs);
    this.#publishTraffic();
    if (this.#copy.ready && now - this.#lastRetentionMs >= RETENTION_INTERVAL_MS) {
      this.#lastRetentionMs = now;
      this.#partitions.applyRetention(this.#copy.state);
    }
  }

  /**
   * A forwarded request is not kept waiting for this node's metadata copy beyond
   * DEFERRED_FORWARD_MS: it is answered 57 (the forwarder gave up at its own deadline soon after).
   */
  #expireDeferred(nowMs: number): void {
    if (this.#deferred.length === 0) return;
    const kept: Deferred[] = [];
    for (const d of this.#deferred) {
      if (!d.message.forwarded || nowMs - d.sinceMs < DEFERRED_FORWARD_MS) {
        kept.push(d);
        continue;
      }
      const header = new RequestHeaderView(d.message.header);
      this.#deliver(d.message.token, d.message.group, codeReply(this.#reply, header, ErrorCode.TransientNotCommitted), true);
    }
    this.#deferred = kept;
  }

  #endTurn(): void {
    if (this.#rt.stopped) return;
    this.#partitions.flush();
    this.#channels.flush();
    const held = this.#channels.backlogBytes > BACKLOG_HOLD_BYTES;
    if (this.#held && !held) {
      this.#held = false;
      for (const connection of this.#listener?.connections() ?? []) connection.pump();
    } else {
      this.#held = held;
    }
  }

  #publishTraffic(): void {
    const counters = this.#listener?.counters;
    if (counters === undefined) return;
    this.#rt.status.publishTraffic(this.#thread, {
      bytesIn: BigInt(counters.bytesIn), bytesOut: BigInt(counters.bytesOut), messagesIn: 0n, connections: this.#listener?.open ?? 0,
    });
  }

  // ---- shutdown -----------------------------------------------------------------------------

  /** Stop accepting and reading; answer what is in flight; then close every connection. */
  #drain(deadlineMs: number): void {
    const rt = this.#rt;
    this.#draining = true;
    this.#listener?.stopAccepting();
    const deadline = Date.now() + deadlineMs;
    const check = (): void => {
      const open = [...(this.#listener?.connections() ?? [])];
      const busy = open.some((c) => c.inFlight > 0);
      if (busy && Date.now() < deadline) {
        setTimeout(check, rt.data.config.system.sharding.shutdownPollIntervalMs);
        return;
      }
      if (busy) rt.log.warn('drain deadline passed with requests in flight', { connections: open.length });
      for (const connection of open) connection.end('shutdown');
      this.#partitions.flush();
      this.#channels.flush();
      rt.post({ type: 'drained' });
    };
    check();
  }

  #stop(): void {
    const rt = this.#rt;
    for (const timer of this.#timers) clearInterval(timer);
    try {
      this.#partitions.closeAll();
    } catch (error) {
      rt.log.error('partition close failed', { error });
    }
    this.#channels.flush();
    void Promise.all([this.#links.close(), this.#hasher.close(), this.#diskQueue?.close()]).finally(() => {
      rt.log.info('shard stopped', { shard: this.#shard });
      rt.post({ type: 'stopped' });
      this.#channels.close();
    });
  }

  /** The published metadata op while this shard's copy is behind it, else null (bearer-waits.ts). */
  #metadataFence(): bigint | null {
    const published = this.#rt.status.metadataApplied();
    return this.#copy.appliedOp >= published ? null : published;
  }

  /** The HTTP port's bearer: a personal access token, checked as a PAT login would (expiry, user status). */
  #verifyBearer(token: string): BearerVerdict {
    if (!this.#copy.ready) return 'unavailable';
    return this.#copy.state.verifyPersonalAccessToken(token, this.#clock.realtimeMicros()).ok ? 'ok' : 'denied';
  }

  #stats(): ReturnType<WorkerControl['stats']> {
    const listener = this.#listener;
    const channels = this.#channels.stats();
    return {
      requests: this.#plane?.requestCounts() ?? {},
      commits: { metadata: 0, partition: this.#partitions.commits },
      bytesIn: listener?.counters.bytesIn ?? 0,
      bytesOut: listener?.counters.bytesOut ?? 0,
      connectionsOpen: listener?.open ?? 0,
      connectionsAccepted: listener?.counters.accepted ?? 0,
      connectionsClosed: listener?.counters.closed ?? 0,
      connectionsRefused: { ...(listener?.counters.refused ?? {}) },
      evictions: this.#plane?.counters.evictions ?? 0,
      channelMessagesSent: channels.sent,
      channelMessagesReceived: channels.received,
      channelBacklogBytes: this.#channels.backlogBytes,
      groups: this.#partitions.stats(),
      replicaPeers: this.#links.stats(),
      replicaHandshakes: this.#links.handshakes(),
      consensusEvents: this.#partitions.events.snapshot(),
      ...(this.#copy.ready
        ? { partitions: this.#partitions.series(this.#copy.state), consumerGroups: this.#partitions.consumerGroupLags(this.#copy.state) }
        : {}),
    };
  }
}

interface Deferred {
  readonly message: ClientRequestMessage;
  readonly sinceMs: number;
}

/** How long a forwarded request may wait for this node's metadata copy (below the forwarder's deadline). */
const DEFERRED_FORWARD_MS = 5_000;

/** The channel identity of this node, or null without `[cluster.auth]` (no forwarding). */
function channelIdentity(config: ShoalConfig): ChannelIdentity | null {
  const keys = config.cluster.enabled && config.node.replicaCount > 1 ? channelKeys(config.cluster.auth) : null;
  return keys === null ? null : {
    cluster: clusterIdFromName(config.cluster.name), self: config.node.replicaId, replicaCount: config.node.replicaCount, keys,
  };
}

const runtime = new WorkerRuntime();
void new ShardWorker(runtime).start().catch((error: unknown) => runtime.fatal('worker_crashed', String(error)));

