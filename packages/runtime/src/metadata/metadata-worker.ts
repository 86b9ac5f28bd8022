/**
 * The metadata worker thread: the metadata group (`1 << 63`) of this node.
 *
 * ```
 *  rings from shards ──▶ client_request (metadata writes, DeleteSegments) ─▶ MetadataHost.submitRequest
 *                        session_submit (verified logins, logouts)         ─▶ driver.submitSession
 *  MetadataDriver ── applied op ──▶ metadata_commit to EVERY shard (their read-only copies)
 *                 ── client frame ─▶ (echo patched by the ledger) reply to the connection's shard
 *                 ── session result ▶ session_result to the connection's shard
 *  every 10 ms: driver.tick(), host.tick() (root bootstrap, PAT cleaner, revocations), status table
 * ```
 *
 * Ordering: an op's `metadata_commit` is written to a shard's ring before any reply to that op
 * (the driver reports the apply before it performs the reply effect, and a ring is FIFO), so a
 * client that got its CreateStream reply finds the stream on its own shard's copy. Other shards'
 * rings are read by other threads at their own pace: the op is also published in the status
 * table before the reply (`METADATA_APPLIED`), and a shard holds a connection's next frame while
 * its copy is behind it, so a second connection of the same client, on another shard, sees the
 * op too (client-plane/connection.ts).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ClientRequest } from '@shoal/consensus';
import { ErrorCode, METADATA_GROUP, Operation, RequestHeaderView, clusterIdFromName, deleteSegmentsCommand } from '@shoal/protocol';
import { encodeSnapshot } from '@shoal/state';
import {
  INTERNAL_TOKEN, MetadataDriver, MetadataHost, type AppliedOp, type SessionResult,
} from '@shoal/replica';
import { Channels } from '../channels/channels.js';
import type { ChannelMessage, ClientRequestMessage, SessionSubmitMessage } from '../channels/messages.js';
import { codeReply, type ReplyContext } from '@shoal/gateway';
import { tokenShard } from '../client-plane/token.js';
import { notPrimaryCode } from '../engine/group-role.js';
import { WallClock, randomPrng } from '../engine/clock.js';
import { metadataConsensusConfig } from '../engine/consensus-config.js';
import { RequestLedger } from '../engine/request-ledger.js';
import { driverFatalReason } from './fatal-reasons.js';
import { Turn } from '../node/turn.js';
import { ReplicaLinks, linkSettings } from '../node/replica-links.js';
import { WorkerRuntime, type WorkerControl } from '../node/worker-runtime.js';
import { METADATA_THREAD, shardThread } from '../node/worker-data.js';
import { HashPool } from '../pool/hash-pool.js';
import { performance } from 'node:perf_hooks';
import { CommitTimer } from '../metrics/commit-timer.js';
import { ReplicationTimer } from '../metrics/replication-timer.js';
import { TimedDisk } from '../metrics/timed-disk.js';
import { EventCounts, type CatalogSummary } from '../metrics/thread-stats.js';
import { PRIMARY_UNREACHABLE_EVENT, primaryLinkWatch, type PrimaryLinkWatch } from '../engine/primary-link-watch.js';

const TICK_MS = 10;
/** Metadata-group events worth an info line (rare: a view change, a transfer). */
const LOGGED_EVENTS = new Set(['view_change', 'view_start', 'view_adopt', 'dvc', 'probe', 'state_transfer', 'journal_truncated']);

class MetadataWorker {
  readonly #rt: WorkerRuntime;
  readonly #clock = new WallClock();
  readonly #ledger = new RequestLedger();
  readonly #hasher = new HashPool();
  readonly #shardCount: number;
  readonly #channels: Channels;
  readonly #turn: Turn;
  /** The last token each client used: frames the core addresses by client id only go there. */
  readonly #tokenOfClient = new Map<bigint, number>();
  /** Users of submitted sessions, by token (the result needs it; the core's does not carry it). */
  readonly #sessionUsers = new Map<number, number>();
  /** DeleteSegments offsets resolved by the partition owner, for the admission port. */
  readonly #segmentHints = new Map<string, bigint>();
  readonly #links: ReplicaLinks;
  #driver: MetadataDriver | null = null;
  #host: MetadataHost | null = null;
  #commits = 0;
  #acting = false;
  readonly #events = new EventCounts();
  readonly #replyContext: ReplyContext;
  #tick: NodeJS.Timeout | null = null;
  #readyPosted = false;
  /** The boot latch was opened (published once). */
  #current = false;
  readonly #replication: ReplicationTimer;
  readonly #commitTimer: CommitTimer;
  /** Fast failover: a dropped link to the metadata primary starts the view change (engine/primary-link-watch.ts). */
  readonly #primaryLink: PrimaryLinkWatch;

  constructor(rt: WorkerRuntime) {
    this.#rt = rt;
    const config = rt.data.config;
    this.#shardCount = config.system.sharding.shardCount;
    this.#replication = new ReplicationTimer(rt.metrics, 'metadata');
    this.#commitTimer = new CommitTimer(rt.metrics, 'metadata');
    this.#primaryLink = primaryLinkWatch(config, rt.status);
    this.#turn = new Turn(() => this.#endTurn());
    this.#replyContext = {
      cluster: clusterIdFromName(config.cluster.name),
      replica: config.node.replicaId,
      view: () => this.#driver?.replica.role.view ?? 0,
      commit: () => BigInt(this.#driver?.replica.role.commitMax ?? 0),
    };
    // The metadata worker holds no link: its frames go to the link owner's ring, and the frames
    // of the metadata group arrive on its own ring.
    this.#links = new ReplicaLinks({
      self: METADATA_THREAD,
      shardCount: this.#shardCount,
      status: rt.status,
      log: rt.log.child('replica'),
      link: linkSettings(config),
      deliver: (_group, frame, ingress) => {
        this.#replication.received(frame);
        this.#driver?.onMessage(frame, ingress);
      },
      ring: (thread, message) => {
        this.#channels.send(thread, message);
        this.#turn.touch();
      },
      closed: () => undefined,
    });
    this.#channels = new Channels({
      endpoints: rt.data.mesh,
      onMessage: (message) => this.#onMessage(message),
      onBatchEnd: () => this.#turn.touch(),
      framesPerRingPerTurn: 256,
      messageBytesMax: config.messageBus.maxMessageSizeBytes + 4096,
      log: rt.log.child('channels'),
    });
  }

  start(): void {
    const rt = this.#rt;
    const config = rt.data.config;
    const transport = {
      sendToReplica: (replica: number, frame: Uint8Array): void => {
        this.#replication.sent(frame);
        this.#links.send(replica, METADATA_GROUP, frame);
      },
      sendToClient: (client: bigint, token: number | null, frame: Uint8Array): void => this.#toClient(client, token, frame),
    };
    const opened = MetadataDriver.open({
      config: metadataConsensusConfig(config),
      disk: new TimedDisk(rt.metrics, 'metadata'),
      transport,
      time: this.#clock,
      prng: randomPrng(),
      dir: join(config.system.path, 'metadata'),
      incarnation: BigInt(rt.data.incarnation),
      // `--fresh` in a cluster: this replica had state its peers still count on; it must learn the
      // current view before it could lead one (docs/cluster.md "Rejoining with --fresh").
      rejoin: config.cluster.enabled && config.boot.fresh,
      stateOptions: { personalAccessTokensPerUserMax: config.personalAccessToken.maxTokensPerUser },
      hooks: {
        fatal: (reason, detail) => rt.fatal(driverFatalReason(reason), detail),
        applied: (op) => this.#broadcastCommit(op),
        committed: (op, operation) => {
          this.#commits += 1;
          // A Register never reaches the state machine (the core's client table takes it), so no
          // `applied` reports it; the shards' copies still advance past it. Their `appliedOp` is
          // the fence a forwarded partition request waits on: a node whose copy was seeded from a
          // snapshot (a restart: commit_min counts the Registers) forwards with a higher op than
          // a copy fed only by `applied` ever reaches, and the partition primary held every
          // forwarded write until the next non-Register metadata op (the soak's write stall).
          // During the boot replay (inside open, #driver still null) the snapshot covers it.
          if (operation === Operation.Register && this.#driver !== null) this.#broadcastRegister(op);
        },
        sessionResult: (result) => this.#onSessionResult(result),
        installed: (installed) => {
          this.#events.add('metadata', 'state_transfer_installed');
          rt.log.info('metadata state transfer installed', { snapshotOp: installed.snapshotOp, commitOp: installed.commitOp });
          this.#broadcastSnapshot();
        },
        dropped: (command, from, reason) => rt.log.debug('frame dropped', { command, from, reason }),
        role: (role) => this.#onRole(role.acting),
        event: (name, detail) => {
          this.#events.add('metadata', name);
          if (LOGGED_EVENTS.has(name)) rt.log.info('metadata group', { event: name, detail });
          else rt.log.debug('consensus event', { name, detail });
        },
      },
    });
    if (!opened.ok) {
      rt.fatal(driverFatalReason(opened.reason), opened.detail);
      return;
    }
    const driver = opened.driver;
    this.#driver = driver;
    const rootPassword = this.#rootPassword(driver.state.model.users.size === 0);
    this.#host = new MetadataHost({
      driver,
      transport,
      now: () => this.#clock.realtimeMicros(),
      rootUsername: config.root.username,
      rootPassword,
      patCleanerIntervalTicks: config.personalAccessToken.cleaner.enabled
        ? Math.max(1, Math.floor(config.personalAccessToken.cleaner.intervalMs / TICK_MS)) : 0,
      revocationTimeoutMicros: BigInt(config.consumerGroup.rebalancingTimeoutMs) * 1000n,
      ports: {
        hashPassword: (password) => this.#hasher.hash(password),
        verifyPassword: (hash, password) => this.#hasher.verify(password, hash),
        generateToken: () => randomBytes(32).toString('base64url'),
        inFlightPartitions: () => [],
        resolveSegments: (work) => this.#segmentHints.get(segmentKey(work)) ?? 0n,
      },
    });
    rt.attach({
      onDrain: () => rt.post({ type: 'drained' }),
      onStop: () => this.#stop(),
      stats: () => this.#stats(),
    });
    this.#broadcastSnapshot();
    this.#publishStatus();
    this.#tick = setInterval(() => this.#onTick(), TICK_MS);
    void this.#channels.run().catch((error: unknown) => rt.fatal('assertion', `metadata channels: ${String(error)}`));
    rt.log.info('metadata group recovered', { commit: driver.status.commitMax, op: driver.status.op, view: driver.status.view });
    this.#maybeReady();
  }

  /**
   * The password the root user is created with, should this node create it. Nobody gave one: a
   * random one (as the reference's `create_root_credentials`), logged once, when the catalog is
   * empty and this node is about to create the user; it is never stored in plaintext nor shown
   * again (a later boot finds the user and generates nothing it would use). A cluster never gets
   * here without explicit credentials: the supervisor refuses its first boot.
   */
  #rootPassword(catalogEmpty: boolean): string {
    const root = this.#rt.data.config.root;
    if (root.password !== null) {
      if (catalogEmpty && root.fromDefaultFlag) {
        this.#rt.log.warn('root user created with the default credentials (--with-default-root-credentials): INSECURE outside development', { username: root.username });
      }
      return root.password;
    }
    const generated = randomBytes(24).toString('base64url');
    if (catalogEmpty) {
      this.#rt.log.warn('root user created with a generated password: shown this once, store it now (set IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD to choose your own)', {
        username: root.username, password: generated,
      });
    }
    return generated;
  }

  /**
   * Ready once the catalog can serve a login: a single node waits for its root user (created by
   * a committed op on first boot); a cluster replica does not wait (the primary creates it).
   */
  #maybeReady(): void {
    const driver = this.#driver;
    if (this.#readyPosted || driver === null) return;
    if (this.#rt.data.config.node.replicaCount === 1 && driver.state.model.users.size === 0) return;
    this.#readyPosted = true;
    this.#rt.post({ type: 'ready' });
  }

  #onMessage(message: ChannelMessage): void {
    if (this.#rt.stopped) return;
    switch (message.kind) {
      case 'client_request':
        this.#onClientRequest(message);
        break;
      case 'session_submit':
        this.#onSessionSubmit(message);
        break;
      case 'replica_frame':
        this.#links.onRing(message);
        break;
      default:
        this.#rt.log.warn('unexpected channel message on the metadata worker', { kind: message.kind });
    }
    this.#turn.touch();
  }

  #onClientRequest(message: ClientRequestMessage): void {
    const driver = this.#driver;
    const host = this.#host;
    if (driver === null || host === null) return;
    const h = new RequestHeaderView(message.header);
    // The host may answer after an await (hashing in the pool): keep a copy of the body.
    const request: ClientRequest = {
      client: h.client, request: h.request, session: h.session, requestChecksum: h.requestChecksum, operation: h.operation,
      body: message.body.slice(), userId: message.userId, timestamp: h.timestamp, token: message.token,
    };
    this.#tokenOfClient.set(request.client, message.token);
    // Writes are admitted on the metadata primary only: a backup answers 58 (retry on the leader).
    const refused = notPrimaryCode(driver);
    if (refused !== 0) {
      this.#reply(message.token, codeReply(this.#replyContext, h, refused), true);
      return;
    }
    const check = driver.checkRequest(request);
    if (check === 'epoch_ahead' || check === 'checksum_mismatch') {
      // The core answers nothing to these client bugs (§7.3): release the request slot.
      this.#reply(message.token, null, true);
      return;
    }
    this.#ledger.record(message.token, METADATA_GROUP, request, performance.now());
    if (message.hostValue !== 0n) {
      const decoded = deleteSegmentsCommand.decodeRequest(request.body);
      const target = decoded.ok ? driver.state.topic(decoded.value.streamId, decoded.value.topicId) : undefined;
      if (decoded.ok && target !== undefined) {
        this.#segmentHints.set(segmentKey({
          streamId: target.stream.id, topicId: target.topic.id, partitionId: decoded.value.partitionId, segmentsCount: decoded.value.segmentsCount,
        }), message.hostValue);
      }
    }
    host.submitRequest(request);
    this.#segmentHints.clear();
  }

  #onSessionSubmit(message: SessionSubmitMessage): void {
    const driver = this.#driver;
    if (driver === null) return;
    if (message.token !== 0) {
      this.#sessionUsers.set(message.token, message.userId);
      this.#tokenOfClient.set(message.client, message.token);
    } else if (message.session === 'logout') {
      this.#tokenOfClient.delete(message.client);
    }
    driver.submitSession({
      session: message.session, client: message.client, userId: message.userId, epoch: message.epoch, request: message.request,
      token: message.token,
    });
  }

  #onSessionResult(result: SessionResult): void {
    if (result.token === INTERNAL_TOKEN || result.token === 0) return;
    const userId = this.#sessionUsers.get(result.token) ?? 0;
    this.#sessionUsers.delete(result.token);
    this.#channels.send(shardThread(tokenShard(result.token)), {
      kind: 'session_result', session: result.session, token: result.token, client: result.client, userId,
      outcome: result.outcome, epoch: result.epoch, watermark: result.watermark,
    });
  }

  #toClient(client: bigint, token: number | null, frame: Uint8Array): void {
    if (token === INTERNAL_TOKEN) return;
    const target = token ?? this.#tokenOfClient.get(client) ?? null;
    if (target === null || target === 0) return;
    const matched = this.#ledger.match(target, METADATA_GROUP, frame);
    this.#commitTimer.replied(frame, matched.recordedMs);
    this.#reply(target, matched.frame, matched.completes);
  }

  #reply(token: number, frame: Uint8Array | null, completes: boolean): void {
    this.#channels.send(shardThread(tokenShard(token)), { kind: 'reply', token, group: METADATA_GROUP, frame, completes });
  }

  #broadcastCommit(op: AppliedOp): void {
    for (let shard = 0; shard < this.#shardCount; shard++) {
      this.#channels.send(shardThread(shard), {
        kind: 'metadata_commit', op: BigInt(op.op), operation: op.operation, timestamp: op.timestamp, userId: op.userId,
        client: op.client, body: op.body,
      });
    }
    // Before any reply to this op (the driver reports the apply first): a client that saw the
    // reply and opens another connection, on another shard, must find the op there too.
    this.#rt.status.publishMetadataApplied(BigInt(op.op));
    if (op.operation === Operation.Logout) this.#tokenOfClient.delete(op.client);
  }

  /** A committed Register to every shard: their copies change nothing but their applied op. */
  #broadcastRegister(op: number): void {
    for (let shard = 0; shard < this.#shardCount; shard++) {
      this.#channels.send(shardThread(shard), {
        kind: 'metadata_commit', op: BigInt(op), operation: Operation.Register, timestamp: 0n, userId: 0, client: 0n, body: new Uint8Array(0),
      });
    }
    // Registers are reported after the walk's applies: never publish below an op already out.
    if (BigInt(op) > this.#rt.status.metadataApplied()) this.#rt.status.publishMetadataApplied(BigInt(op));
  }

  /** The whole catalog to every shard (boot, and after a state-transfer install). */
  #broadcastSnapshot(): void {
    const driver = this.#driver;
    if (driver === null) return;
    const op = BigInt(driver.status.commitMin);
    const snapshot = encodeSnapshot(driver.state, { sequenceNumber: op, createdAt: this.#clock.realtimeMicros(), clientTable: null });
    for (let shard = 0; shard < this.#shardCount; shard++) {
      this.#channels.send(shardThread(shard), { kind: 'metadata_snapshot', op, snapshot });
    }
    this.#rt.status.publishMetadataApplied(op);
    this.#turn.touch();
  }

  #onTick(): void {
    const driver = this.#driver;
    if (driver === null || this.#rt.stopped) return;
    this.#primaryLink.tick();
    if (this.#primaryLink.check(METADATA_GROUP, driver)) {
      this.#events.add('metadata', PRIMARY_UNREACHABLE_EVENT);
      this.#rt.log.info('metadata group', { event: PRIMARY_UNREACHABLE_EVENT, view: driver.replica.role.view });
    }
    driver.tick();
    this.#host?.tick();
    this.#publishStatus();
    this.#maybeReady();
    this.#turn.touch();
  }

  /**
   * The core's `role` effect (after any entry point that changed the view, the known primary or
   * acting; no per-tick polling). Losing the primary role (a view change) drops the requests the
   * core had not committed, unanswered (§5.1): answer each 57 (outcome unknown; the client table
   * makes the replay on the new primary exactly-once) instead of leaving the client to its
   * request timeout.
   */
  #onRole(acting: boolean): void {
    if (this.#acting && !acting) {
      for (const pending of this.#ledger.takeGroup(METADATA_GROUP)) {
        this.#reply(pending.token, codeReply(this.#replyContext, pending, ErrorCode.TransientNotCommitted), true);
      }
    }
    this.#acting = acting;
  }

  #endTurn(): void {
    if (this.#rt.stopped) return;
    this.#driver?.flush();
    this.#channels.flush();
  }

  /** Every tick: read the replica's role (`driver.status` would list the WAL's ops each time). */
  #publishStatus(): void {
    const driver = this.#driver;
    if (driver === null) return;
    const role = driver.replica.role;
    this.#rt.status.publishMetadata(role.view, role.status, role.primaryIndex, BigInt(role.commitMax));
    // Caught up (readiness): applied everything known committed, not transferring state, not ceded.
    this.#rt.status.publishMetadataCaughtUp(role.commitMin === role.commitMax && !role.transferring && !role.ceded && driver.fatal === null);
    // The boot latch (status-table.ts METADATA_CURRENT): current once since boot opens the
    // shards' partition groups, at the op already on their rings (every apply of this tick was
    // broadcast before this runs).
    if (!this.#current && role.normal && role.commitMin >= role.commitMax && !role.transferring && !role.ceded && driver.fatal === null) {
      this.#current = true;
      this.#rt.status.publishMetadataCurrent(this.#rt.status.metadataApplied());
      this.#rt.log.info('metadata current since boot: partition groups open', { view: role.view, op: role.commitMin });
    }
  }

  #stats(): ReturnType<WorkerControl['stats']> {
    const driver = this.#driver;
    const channels = this.#channels.stats();
    const s = driver?.status;
    return {
      requests: {},
      commits: { metadata: this.#commits, partition: 0 },
      bytesIn: 0,
      bytesOut: 0,
      connectionsOpen: 0,
      connectionsAccepted: 0,
      connectionsClosed: 0,
      connectionsRefused: {},
      evictions: 0,
      channelMessagesSent: channels.sent,
      channelMessagesReceived: channels.received,
      channelBacklogBytes: this.#channels.backlogBytes,
      groups: driver === null || s === undefined ? [] : [{
        group: METADATA_GROUP.toString(), plane: 'metadata', view: s.view, role: s.primary ? 'primary' : 'backup', status: s.status,
        op: s.op, commit: s.commitMax, journalBytes: driver.journal.byteLength, segmentBytes: 0, segments: 0,
      }],
      replicaPeers: this.#links.stats(),
      replicaHandshakes: this.#links.handshakes(),
      consensusEvents: this.#events.snapshot(),
      ...(driver === null ? {} : { catalog: catalogOf(driver) }),
    };
  }

  #stop(): void {
    const rt = this.#rt;
    if (this.#tick !== null) clearInterval(this.#tick);
    try {
      this.#driver?.close();
    } catch (error) {
      rt.log.error('metadata driver close failed', { error });
    }
    this.#channels.flush();
    void this.#hasher.close().finally(() => {
      rt.log.info('metadata worker stopped');
      rt.post({ type: 'stopped' });
      this.#channels.close();
    });
  }
}

/** Names, partition counts and consumer groups with their member counts. */
function catalogOf(driver: MetadataDriver): CatalogSummary {
  const streams = [...driver.state.model.streams.values()].map((stream) => ({
    id: stream.id, name: stream.name,
    topics: [...stream.topics.values()].map((topic) => ({
      id: topic.id, name: topic.name, partitions: topic.partitions.length,
      consumerGroups: [...topic.consumerGroups.values()].map((g) => ({ id: g.id, name: g.name, members: g.members.size })),
    })),
  }));
  return { streams };
}

function segmentKey(work: { streamId: number; topicId: number; partitionId: number; segmentsCount: number }): string {
  return `${work.streamId}/${work.topicId}/${work.partitionId}/${work.segmentsCount}`;
}

const runtime = new WorkerRuntime();
new MetadataWorker(runtime).start();
