/**
 * The partition groups one shard owns: their drivers (consensus core + segment storage + partition
 * state machine, `@shoal/replica` PartitionDriver), kept in step with the metadata copy, and the
 * requests other shards (or this one) route to them.
 *
 * Ownership: a partition group belongs to shard `shardOfGroup(group, S)` (shard/shard-of.ts).
 * Reconciliation runs whenever the metadata revision moves (a create/delete/purge/truncate
 * commit): a new partition gets its driver (recovering its directory, created when missing), a
 * deleted one is destroyed (directory removed) and retired from the status table, a re-created
 * one (same group, new created-revision) is destroyed and opened empty, and purge generations and
 * delete watermarks are handed to the driver (`observePartition`).
 *
 * Requests (channels/messages.ts RequestRoute) wait while the copy has not applied the metadata op
 * their sender had (the fence), then:
 *   submit                  → driver.onRequest (SendMessages, Quorum offset writes)
 *   poll / get_offset       → driver.poll / the stored offset, answered here
 *   offset_local            → driver.applyOffsetWriteLocally (NoAck), answered here
 *   resolve_delete_segments → the end offset of the oldest sealed segments, then on to the metadata worker
 */
import { AssertionError } from '@shoal/stdx';
import type { ClientRequest, FrameIngress } from '@shoal/consensus';
import {
  ErrorCode, METADATA_GROUP, RequestHeaderView, deleteSegmentsCommand, encodeResultRejection,
  encodeResultSuccess, getConsumerOffsetCommand, pollMessagesCommand,
} from '@shoal/protocol';
import { type MetadataState, type PartitionRoute, topicSettingsOf } from '@shoal/state';
import { type Disk, type DiskQueue, DataDirLayout, RETENTION_NEVER, partitionShareOfTopicSize } from '@shoal/storage';
import { PartitionDriver, type FatalReason as DriverFatalReason } from '@shoal/replica';
import type { ShoalConfig } from '../config/index.js';
import { type ClientRequestMessage, RequestRoute } from '../channels/messages.js';
import { ACKED_UNKNOWN, codeReply, payloadReply, payloadReplyParts, type ReplyContext, statusReply, unpackConsumerRef } from '@shoal/gateway';
import { WallClock, randomPrng } from '../engine/clock.js';
import { partitionConsensusConfig } from '../engine/consensus-config.js';
import type { RequestLedger } from '../engine/request-ledger.js';
import type { Logger } from '../log/logger.js';
import { performance } from 'node:perf_hooks';
import { CommitTimer } from '../metrics/commit-timer.js';
import { ReplicationTimer } from '../metrics/replication-timer.js';
import type { ThreadMetrics } from '../metrics/thread-metrics.js';
import { EventCounts, type ConsumerGroupLag, type GroupStats, type PartitionSeries } from '../metrics/thread-stats.js';
import { METADATA_THREAD } from '../node/worker-data.js';
import type { StatusTable } from '../status/status-table.js';
import { shardOfGroup } from './shard-of.js';
import { NO_PRIMARY, groupRole, notPrimaryCode } from '../engine/group-role.js';
import { PRIMARY_UNREACHABLE_EVENT, primaryLinkWatch, type PrimaryLinkWatch } from '../engine/primary-link-watch.js';
import type { ForwardOutcomes, PendingForward } from '../forwarding/forward-link.js';
import { ForwardLinks } from '../forwarding/forward-links.js';

export interface PartitionHostOptions {
  readonly shard: number;
  readonly config: ShoalConfig;
  readonly disk: Disk;
  /** Where drivers run their frontier durability work (null: inline; `partition.async_frontier`). */
  readonly diskQueue: DiskQueue | null;
  readonly status: StatusTable;
  readonly ledger: RequestLedger;
  readonly reply: ReplyContext;
  readonly log: Logger;
  /** A finished request: its reply frame (or none) for the connection behind `token`. */
  readonly deliver: (token: number, group: bigint, frame: Uint8Array | null, completes: boolean) => void;
  /** A poll reply as parts (header, prefix, batch views); `written` once they are no longer referenced. */
  readonly deliverParts: (token: number, parts: readonly Uint8Array[], written: () => void) => void;
  /** On to another thread (DeleteSegments after resolving its offset). */
  readonly forward: (thread: number, message: ClientRequestMessage) => void;
  /** The driver of a partition stopped on an environment failure. */
  readonly fatal: (reason: DriverFatalReason, detail: string) => void;
  /** A group was touched: flush it at the end of the turn. */
  readonly touched: () => void;
  /** A replica-plane frame from a partition driver to a peer (node/replica-links.ts). */
  readonly toReplica: (replica: number, group: bigint, frame: Uint8Array) => void;
  /** The shard's latency histograms (commit, replication round trip). */
  readonly metrics: ThreadMetrics;
}

interface Owned {
  readonly driver: PartitionDriver;
  route: PartitionRoute;
  /** The role last published to the status table. */
  view: number;
  primary: number;
  acting: boolean;
  /** Prepare → PrepareOk per peer (shoal_replication_round_trip_seconds). */
  readonly replication: ReplicationTimer;
  /**
   * Writes forwarded to `forwardPeer` and not answered yet. A write whose target differs (this
   * replica, or another peer after a view change) waits in `held` until they are answered, so a
   * connection's writes to one partition are never applied out of the order it sent them.
   */
  forwardPeer: number;
  forwardedWrites: number;
  readonly held: ClientRequestMessage[];
}

/** Where a request for an owned partition runs: this replica, or the primary on another node. */
const LOCAL = -1;

/**
 * Partition-group view events logged at info (one line each, with group, replica and the core's
 * detail: view, op, peer), so a stalled group is diagnosable without debug: the view change
 * entered or escalated, DoViewChange sent and received, the view started or adopted, probing,
 * hand-back, state transfer. Everything else stays at debug.
 */
const LOGGED_EVENTS = new Set(['view_change', 'view_start', 'view_adopt', 'dvc', 'probe', 'state_transfer', 'journal_truncated']);
const LOGGED_MARKS = ['hand_back_', 'probe_from_primary', 'probe_joins_view_change', 'probe_newer_view', 'probe_give_up'];

function loggedEvent(name: string, detail: string): boolean {
  if (LOGGED_EVENTS.has(name)) return true;
  return name === 'mark' && LOGGED_MARKS.some((m) => detail.startsWith(m));
}

/** One retention pass per partition per minute (the reference cleaner's default interval). */
export const RETENTION_INTERVAL_MS = 60_000;

export class PartitionHost implements ForwardOutcomes {
  readonly #o: PartitionHostOptions;
  readonly #layout: DataDirLayout;
  readonly #owned = new Map<bigint, Owned>();
  readonly #clock = new WallClock();
  #revision = -1n;
  /** closeAll ran (shutdown): nothing is opened again. */
  #closed = false;
  /**
   * The boot latch (docs/cluster.md "Incarnations and the boot latch"): in a multi-replica
   * cluster no partition group opens until the node's metadata replica has been current once
   * since boot and the shard's copy applied that state (`unlatch`). A group deleted and
   * re-created while this node was away (same wire key, new incarnation) must never run here with
   * its old log and old view: its DoViewChange would win the new incarnation's merge.
   */
  #latched: boolean;
  #commits = 0;
  /** Groups that committed since their counters were last published. */
  readonly #dirty = new Set<bigint>();
  #tableFullLogged = false;
  readonly events = new EventCounts();
  readonly #commitTimer: CommitTimer;
  /** This shard's forwarding links to the other nodes (requests for partitions they lead). */
  readonly #links: ForwardLinks;
  /** Fast failover: a dropped link to a group's primary starts its view change (engine/primary-link-watch.ts). */
  readonly #primaryLinks: PrimaryLinkWatch;

  constructor(options: PartitionHostOptions) {
    this.#o = options;
    this.#layout = new DataDirLayout(options.config.system.path);
    this.#commitTimer = new CommitTimer(options.metrics, 'partition');
    this.#links = new ForwardLinks(options.config, this, options.log.child('forwarding'));
    this.#primaryLinks = primaryLinkWatch(options.config, options.status);
    this.#latched = options.config.node.replicaCount > 1;
  }

  /** The boot latch is still closed: no partition group is open on this shard. */
  get latched(): boolean {
    return this.#latched;
  }

  /** Opens the boot latch (once) and reconciles on `state`, the copy that applied the current op. */
  unlatch(state: MetadataState): void {
    if (!this.#latched) return;
    this.#latched = false;
    this.reconcile(state, true);
  }

  /** The forwarding links (metrics, the shard's sweep, shutdown). */
  get links(): ForwardLinks {
    return this.#links;
  }

  get size(): number {
    return this.#owned.size;
  }

  get commits(): number {
    return this.#commits;
  }

  owns(group: bigint): boolean {
    return this.#owned.has(group);
  }

  /** Brings the set of drivers in line with the metadata state (cheap unless the revision moved). */
  reconcile(state: MetadataState, force = false): void {
    // After closeAll: a late metadata commit must not reopen what the shutdown closed.
    if (this.#closed || this.#latched) return;
    if (!force && state.revision === this.#revision) return;
    this.#revision = state.revision;
    const shardCount = this.#o.config.system.sharding.shardCount;
    const wanted = new Map<bigint, PartitionRoute>();
    for (const route of state.partitions()) {
      if (shardOfGroup(route.consensusGroupId, shardCount) === this.#o.shard) wanted.set(route.consensusGroupId, route);
    }
    for (const [group, owned] of this.#owned) {
      const route = wanted.get(group);
      if (route === undefined || route.createdRevision !== owned.route.createdRevision) this.#destroy(group, owned);
    }
    for (const [group, route] of wanted) {
      const owned = this.#owned.get(group);
      if (owned === undefined) {
        this.#open(state, route);
      } else if (owned.route.purgeGeneration !== route.purgeGeneration || owned.route.deletedUpToOffset !== route.deletedUpToOffset) {
        owned.route = route;
        owned.driver.observePartition(route);
        this.#publish(group, owned);
      }
    }
  }

  /** A request for a group this shard owns (the caller has checked the metadata fence). */
  execute(message: ClientRequestMessage): void {
    const owned = this.#owned.get(message.group);
    if (owned === undefined) {
      // Deleted (or not created yet on this copy, which the fence rules out); behind the boot
      // latch, not open yet: 57, nothing happened (the client retries, here or elsewhere).
      const header = new RequestHeaderView(message.header);
      const code = this.#latched ? ErrorCode.TransientNotCommitted : ErrorCode.PartitionNotFound;
      this.#o.deliver(message.token, message.group, codeReply(this.#o.reply, header, code), true);
      return;
    }
    if (owned.held.length > 0) {
      owned.held.push(copyRequest(message));
      return;
    }
    this.#route(owned, message);
  }

  /**
   * Runs the request here or forwards it to the partition's primary (docs/cluster.md
   * "Forwarded partition requests"). False: it is held behind forwarded writes (see `Owned`).
   */
  #route(owned: Owned, message: ClientRequestMessage): boolean {
    const target = this.#targetOf(owned, message);
    const write = isWriteRoute(message.route);
    if (write && owned.forwardedWrites > 0 && target !== owned.forwardPeer) {
      owned.held.push(copyRequest(message));
      return false;
    }
    if (target !== LOCAL) {
      if (write) {
        owned.forwardPeer = target;
        owned.forwardedWrites += 1;
      }
      this.#links.forward(target, message);
      return true;
    }
    this.#runHere(owned, message);
    return true;
  }

  /**
   * | request                     | this replica is the acting primary | a backup in normal status (primary P elsewhere) |
   * |-----------------------------|------------------------------------|--------------------------------------------------|
   * | SendMessages, offset writes | here                               | P (here when carried from another node: 58)      |
   * | GetConsumerOffset           | here                               | P (stored offsets of NoAck writes and poll auto-commit live on P) |
   * | PollMessages                | here                               | here if it needs nothing of P and this replica applied the connection's acknowledged writes, else P |
   *
   * Anything else (a view change, recovery, no channel to P, a request carried here from
   * another node) runs here: the core answers 57 / 58, a poll reads what this replica has.
   */
  #targetOf(owned: Owned, message: ClientRequestMessage): number {
    if (message.forwarded || message.route === RequestRoute.resolve_delete_segments) return LOCAL;
    const c = owned.driver.replica.role;
    if (!c.normal || c.actingPrimary) return LOCAL;
    const primary = c.primaryIndex;
    if (primary === c.replica || !this.#links.reaches(primary)) return LOCAL;
    if (message.route !== RequestRoute.poll) return primary;
    const poll = pollMessagesCommand.decodeRequest(message.body);
    if (!poll.ok) return LOCAL;
    const needsPrimary = poll.value.autoCommit || poll.value.strategy.kind === 'next';
    return needsPrimary || BigInt(c.commitMin) < message.fenceOp ? primary : LOCAL;
  }

  #runHere(owned: Owned, message: ClientRequestMessage): void {
    const o = this.#o;
    const driver = owned.driver;
    const header = new RequestHeaderView(message.header);
    if (message.route === RequestRoute.submit || message.route === RequestRoute.offset_local) {
      // Writes are admitted on the partition's primary only (clustering/client-failover.mdx).
      const refused = notPrimaryCode(driver);
      if (refused !== 0) return o.deliver(message.token, message.group, codeReply(o.reply, header, refused), true);
    }
    switch (message.route) {
      case RequestRoute.submit:
        return this.#submit(message, header, driver);
      case RequestRoute.poll:
        return this.#poll(message, header, driver);
      case RequestRoute.get_offset:
        return this.#getOffset(message, header, driver);
      case RequestRoute.offset_local: {
        const outcome = driver.applyOffsetWriteLocally(header.operation, message.body);
        const body = outcome.ok ? encodeResultSuccess() : encodeResultRejection(outcome.code);
        o.deliver(message.token, message.group, payloadReply(o.reply, header, body), true);
        o.touched();
        return;
      }
      case RequestRoute.resolve_delete_segments:
        return this.#resolveDeleteSegments(message, driver);
    }
  }

  // ---- forwarding outcomes (forwarding/forward-link.ts) ---------------------------------------

  forwardAnswered(request: PendingForward, frame: Uint8Array | null, completes: boolean): void {
    // The frame is a view of the link's receive buffer: the connection keeps a copy.
    this.#o.deliver(request.token, request.group, frame === null ? null : frame.slice(), completes);
    if (completes) this.#forwardEnded(request);
  }

  forwardFailed(request: PendingForward, code: number): void {
    this.#o.deliver(request.token, request.group, codeReply(this.#o.reply, new RequestHeaderView(request.header), code), true);
    this.#forwardEnded(request);
  }

  /** A forwarded write ended: once none is outstanding, the held requests run in order. */
  #forwardEnded(request: PendingForward): void {
    if (!isWriteRoute(request.route)) return;
    const owned = this.#owned.get(request.group);
    if (owned === undefined || owned.forwardedWrites === 0) return;
    owned.forwardedWrites -= 1;
    if (owned.forwardedWrites > 0) return;
    while (owned.held.length > 0) {
      const next = owned.held.shift() as ClientRequestMessage;
      if (!this.#route(owned, next)) {
        // Held again at the front: it is the oldest.
        owned.held.unshift(owned.held.pop() as ClientRequestMessage);
        break;
      }
    }
    this.#o.touched();
  }

  tick(): void {
    this.#primaryLinks.tick();
    for (const [group, owned] of this.#owned) {
      if (this.#primaryLinks.check(group, owned.driver)) {
        this.events.add('partition', PRIMARY_UNREACHABLE_EVENT);
        this.#o.log.info('partition group', { group, replica: this.#o.config.node.replicaId, event: PRIMARY_UNREACHABLE_EVENT, view: owned.driver.replica.role.view });
      }
      owned.driver.tick();
    }
  }

  /**
   * Publishes a group's role when it changed (status table: routing hints, GetClusterMetadata):
   * at open, then on each `role` effect of its core.
   * Requests the replica drops on losing the primary role are answered 57 by its core
   * (`answerDroppedRequests`, consensus answers.ts), not here.
   */
  #observeRole(group: bigint, owned: Owned): void {
    const role = groupRole(owned.driver);
    if (role.view === owned.view && role.primary === owned.primary && role.acting === owned.acting) return;
    owned.view = role.view;
    owned.primary = role.primary;
    owned.acting = role.acting;
    this.#o.status.publishPartitionRole(group, role.view, role.primary);
    const r = owned.driver.replica.role;
    this.#o.log.info('partition role', {
      group, replica: this.#o.config.node.replicaId, view: role.view, status: r.status,
      primary: role.primary === NO_PRIMARY ? null : role.primary, acting: role.acting, ceded: r.ceded,
    });
    // After the core's effect drain: ending them runs the held writes, which enter the core again.
    if (owned.forwardedWrites > 0) queueMicrotask(() => this.#abandonReplacedTarget(group, owned));
  }

  /**
   * This replica is in a newer view whose primary is not where its writes were carried: those
   * cannot commit in the old view any more (a quorum left it), and each is in the new view's log
   * (ordered before anything proposed now) or never committed. So they end at once, 57 (outcome
   * unknown), and the writes held behind them go to the new primary. Before, a primary that was
   * paused or cut off from its peers (but not from this node's channel) held them until the
   * forward deadline (`cluster.forward_timeout`, 10 s), and every later write of the partition
   * through this node waited behind them (cluster-forwarding.test.ts, SIGSTOP).
   */
  #abandonReplacedTarget(group: bigint, owned: Owned): void {
    if (this.#owned.get(group) !== owned || !owned.driver.replica.role.normal) return;
    const primary = groupRole(owned.driver).primary;
    const old = owned.forwardPeer;
    if (primary === NO_PRIMARY || old === LOCAL || old === primary || owned.forwardedWrites === 0) return;
    const ended = this.#links.abandonGroup(old, group);
    this.#o.log.info('forwarded requests ended: a newer view has another primary', { group, old, primary, ended });
  }

  /** A replica-plane frame for a group this shard owns (dropped when the partition is unknown here). */
  onReplicaFrame(group: bigint, frame: Uint8Array, ingress: FrameIngress): void {
    const owned = this.#owned.get(group);
    if (owned === undefined) return;
    owned.replication.received(frame);
    owned.driver.onMessage(frame, ingress);
    this.#o.touched();
  }

  /** End of a turn: group commit for every partition (cheap when nothing is pending), fresh counters. */
  flush(): void {
    for (const owned of this.#owned.values()) owned.driver.flush();
    if (this.#dirty.size === 0) return;
    for (const group of this.#dirty) {
      const owned = this.#owned.get(group);
      if (owned !== undefined) this.#publish(group, owned);
    }
    this.#dirty.clear();
  }

  /** Live counters into the status table (GetStream / GetTopic / GetStats on any shard). */
  publishCounters(): void {
    for (const [group, owned] of this.#owned) this.#publish(group, owned);
  }

  /** One retention pass (message expiry, topic size) over every owned partition. */
  applyRetention(state: MetadataState): void {
    const nowMicros = Date.now() * 1000;
    for (const owned of this.#owned.values()) {
      const found = state.topic({ kind: 'numeric', value: owned.route.streamId }, { kind: 'numeric', value: owned.route.topicId });
      if (found === undefined) continue;
      const settings = topicSettingsOf(found.topic.options);
      const expiry = settings.messageExpiry >= BigInt(Number.MAX_SAFE_INTEGER) || settings.messageExpiry === 0n
        ? RETENTION_NEVER : Number(settings.messageExpiry);
      const maxSize = settings.maxTopicSize >= BigInt(Number.MAX_SAFE_INTEGER) || settings.maxTopicSize === 0n
        ? RETENTION_NEVER : Number(settings.maxTopicSize);
      const budget = partitionShareOfTopicSize(maxSize, Math.max(1, found.topic.partitions.length), Number(settings.segmentSize), this.#o.config.messageBus.maxMessageSizeBytes);
      owned.driver.applyRetention({ messageExpiryMicros: expiry, sealedBytesBudget: budget }, nowMicros);
    }
  }

  stats(): GroupStats[] {
    const out: GroupStats[] = [];
    for (const [group, owned] of this.#owned) {
      const s = owned.driver.status;
      const c = owned.driver.counters();
      out.push({
        group: group.toString(), plane: 'partition', view: s.view, role: s.primary ? 'primary' : 'backup', status: s.status,
        op: s.op, commit: s.commitMax, journalBytes: 0, segmentBytes: Number(c.sizeBytes), segments: c.segmentsCount,
      });
    }
    return out;
  }

  /** Every owned partition with its names (from the shard's metadata copy), for metrics and the dashboard. */
  series(state: MetadataState): PartitionSeries[] {
    const out: PartitionSeries[] = [];
    for (const [group, owned] of this.#owned) {
      const r = owned.route;
      const found = state.topic({ kind: 'numeric', value: r.streamId }, { kind: 'numeric', value: r.topicId });
      if (found === undefined) continue;
      const c = owned.driver.counters();
      const role = owned.driver.replica.role;
      out.push({
        stream: found.stream.name, topic: found.topic.name, partition: r.partitionId, streamId: r.streamId, topicId: r.topicId,
        group: group.toString(), messages: Number(c.messagesCount), appended: Number(owned.driver.state.nextOffset),
        currentOffset: Number(c.currentOffset), bytes: Number(c.sizeBytes), segments: c.segmentsCount,
        primary: owned.acting, primaryReplica: owned.primary === NO_PRIMARY ? null : owned.primary,
        view: role.view, op: role.op, commit: role.commitMax,
      });
    }
    return out;
  }

  /**
   * Every consumer group of every owned partition's topic: its stored offset here and the
   * messages after it (all retained messages when it stored none).
   */
  consumerGroupLags(state: MetadataState): ConsumerGroupLag[] {
    const out: ConsumerGroupLag[] = [];
    for (const owned of this.#owned.values()) {
      const r = owned.route;
      const found = state.topic({ kind: 'numeric', value: r.streamId }, { kind: 'numeric', value: r.topicId });
      if (found === undefined || found.topic.consumerGroups.size === 0) continue;
      const partition = owned.driver.state;
      const retained = Number(owned.driver.counters().messagesCount);
      for (const group of found.topic.consumerGroups.values()) {
        const stored = partition.offsets.get({ kind: 'consumer_group', key: group.id });
        const lag = stored === undefined ? retained : Math.max(0, Number(partition.nextOffset) - 1 - Number(stored));
        out.push({
          stream: found.stream.name, topic: found.topic.name, group: group.name, groupId: group.id, partition: r.partitionId,
          storedOffset: stored === undefined ? null : Number(stored), lag,
        });
      }
    }
    return out;
  }

  /** Clean shutdown: every driver flushes, syncs its log, records its frontier and closes. */
  closeAll(): void {
    this.#closed = true;
    this.#links.close();
    for (const owned of this.#owned.values()) owned.driver.close();
    this.#owned.clear();
  }

  #open(state: MetadataState, route: PartitionRoute): void {
    const o = this.#o;
    const found = state.topic({ kind: 'numeric', value: route.streamId }, { kind: 'numeric', value: route.topicId });
    if (found === undefined) throw new AssertionError('partition host: a routed partition without its topic');
    const settings = topicSettingsOf(found.topic.options);
    const group = route.consensusGroupId;
    const replication = new ReplicationTimer(o.metrics, 'partition');
    const opened = PartitionDriver.open({
      config: partitionConsensusConfig(o.config),
      disk: o.disk,
      ...(o.diskQueue === null ? {} : { diskQueue: o.diskQueue }),
      transport: {
        sendToReplica: (replica, frame) => {
          replication.sent(frame);
          o.toReplica(replica, group, frame);
        },
        sendToClient: (_client, token, frame) => this.#onClientFrame(group, token, frame),
      },
      time: this.#clock,
      prng: randomPrng(),
      peerLinked: (replica) => o.status.replicaOwner(replica) >= 0,
      hooks: {
        fatal: (reason, detail) => o.fatal(reason, `partition ${route.streamId}/${route.topicId}/${route.partitionId}: ${detail}`),
        committed: () => {
          this.#commits += 1;
          this.#dirty.add(group);
        },
        // The core reports role changes as they happen (a `role` effect): no per-tick polling.
        role: () => {
          const owned = this.#owned.get(group);
          if (owned !== undefined) this.#observeRole(group, owned);
        },
        event: (name, detail) => {
          this.events.add('partition', name);
          if (loggedEvent(name, detail)) o.log.info('partition group', { group, replica: this.#o.config.node.replicaId, event: name, detail });
          else o.log.debug('partition event', { group, name, detail });
        },
        installed: (installed) => {
          this.events.add('partition', 'state_transfer_installed');
          this.#dirty.add(group);
          o.log.info('partition state transfer installed', { group, commitOp: installed.commitOp });
        },
      },
      dir: this.#layout.partitionDir(route.streamId, route.topicId, route.partitionId),
      group,
      // After `--fresh` in a cluster every partition this process opens may hold committed data on
      // the peers: probe for the current view instead of leading view 0 with an empty log.
      rejoin: o.config.cluster.enabled && o.config.boot.fresh,
      identity: { streamId: route.streamId, topicId: route.topicId, partitionId: route.partitionId },
      // A leftover of an older incarnation of these ids (deleted and re-created while this node
      // was away, or killed between the metadata commit and #destroy) is wiped, never served.
      createdRevision: route.createdRevision,
      storage: {
        segmentSize: Number(settings.segmentSize),
        enforceFsync: settings.enforceFsync,
        messagesRequiredToSave: settings.messagesRequiredToSave,
        sizeOfMessagesRequiredToSave: Number(settings.sizeOfMessagesRequiredToSave),
        preallocateSegments: settings.preallocateSegments,
        validateChecksum: o.config.system.partition.validateChecksum,
      },
    });
    if (!opened.ok && opened.incarnationAhead !== undefined) {
      // The directory holds a later incarnation of these ids than this copy knows (a boot whose
      // metadata state is behind what this node had applied, e.g. a delete and re-create whose
      // commit it learned from a heartbeat): not opened, nothing removed, and no exit (the same
      // boot state would refuse it again). Every reconcile retries; the copy catches up.
      o.log.warn('partition directory ahead of the metadata copy: not opened yet', {
        partition: `${route.streamId}/${route.topicId}/${route.partitionId}`, committed: route.createdRevision, onDisk: opened.incarnationAhead,
      });
      return;
    }
    if (!opened.ok) {
      o.fatal(opened.reason, `partition ${route.streamId}/${route.topicId}/${route.partitionId}: ${opened.detail}`);
      return;
    }
    const owned: Owned = {
      driver: opened.driver, route, view: -1, primary: NO_PRIMARY, acting: false, forwardPeer: LOCAL,
      forwardedWrites: 0, held: [], replication,
    };
    this.#owned.set(group, owned);
    opened.driver.observePartition(route);
    this.#publish(group, owned);
    this.#observeRole(group, owned);
    o.log.debug('partition opened', { group, stream: route.streamId, topic: route.topicId, partition: route.partitionId });
  }

  #destroy(group: bigint, owned: Owned): void {
    for (const held of owned.held.splice(0)) {
      this.#o.deliver(held.token, group, codeReply(this.#o.reply, new RequestHeaderView(held.header), ErrorCode.PartitionNotFound), true);
    }
    // A disk error on the way is no reason to stop the shard: what is left is finished by a
    // re-creation of these ids or the next boot's sweep (partition-removal.ts).
    const removed = owned.driver.destroy();
    if (!removed.ok) this.#o.log.warn('partition directory removal deferred', { group, error: removed.error.message });
    this.#owned.delete(group);
    this.#primaryLinks.forget(group);
    this.#o.status.retirePartition(group);
    this.#o.log.debug('partition removed', { group });
  }

  #publish(group: bigint, owned: Owned): void {
    if (!this.#o.status.publishPartition(group, owned.driver.counters()) && !this.#tableFullLogged) {
      this.#tableFullLogged = true;
      this.#o.log.warn('status table: partition slots full; some partition counters read as zero', { slots: this.#o.status.partitionSlots });
    }
  }

  #submit(message: ClientRequestMessage, header: RequestHeaderView, driver: PartitionDriver): void {
    const o = this.#o;
    const request: ClientRequest = {
      client: header.client, request: header.request, session: header.session, requestChecksum: header.requestChecksum,
      operation: header.operation, body: message.body, userId: message.userId, timestamp: header.timestamp, token: message.token,
    };
    o.ledger.record(message.token, message.group, request, performance.now());
    // The core parks what it cannot propose yet (its request queue, deep enough for every window
    // the node admits); 'dropped' means it cannot take it at all: nothing happened, retry.
    if (driver.onRequest(request) === 'dropped') {
      o.ledger.forget(message.token, message.group, request.request);
      o.deliver(message.token, message.group, codeReply(o.reply, request, ErrorCode.TransientNotCommitted), true);
    }
    o.touched();
  }

  #poll(message: ClientRequestMessage, header: RequestHeaderView, driver: PartitionDriver): void {
    const o = this.#o;
    const request = pollMessagesCommand.decodeRequest(message.body);
    if (!request.ok) return o.deliver(message.token, message.group, statusReply(o.reply, header, ErrorCode.InvalidCommand), true);
    if (!appliedFence(driver, message.fenceOp)) {
      // This replica has not applied a write this connection was acknowledged: not yet (retry).
      return o.deliver(message.token, message.group, codeReply(o.reply, header, ErrorCode.TransientNotCommitted), true);
    }
    const polled = driver.poll({
      consumer: unpackConsumerRef(message.hostValue), strategy: request.value.strategy, count: request.value.count,
      autoCommit: request.value.autoCommit,
    }, driver.status.primary);
    if (!polled.ok) return o.deliver(message.token, message.group, statusReply(o.reply, header, polled.code), true);
    const reply = polled.reply;
    // The read buffers return to the pool once the socket has written the views (or they were copied).
    o.deliverParts(message.token, payloadReplyParts(o.reply, header, [reply.prefix, ...reply.batches]), reply.release);
    if (request.value.autoCommit) o.touched();
  }

  #getOffset(message: ClientRequestMessage, header: RequestHeaderView, driver: PartitionDriver): void {
    const o = this.#o;
    const stored = driver.state.offsets.get(unpackConsumerRef(message.hostValue));
    const payload = stored === undefined
      ? new Uint8Array(0)
      : getConsumerOffsetCommand.encodeResponse({ partitionId: driver.state.identity.partitionId, currentOffset: driver.state.currentOffset, storedOffset: stored });
    o.deliver(message.token, message.group, payloadReply(o.reply, header, payload), true);
  }

  #resolveDeleteSegments(message: ClientRequestMessage, driver: PartitionDriver): void {
    const request = deleteSegmentsCommand.decodeRequest(message.body);
    let upTo = 0n;
    if (request.ok) {
      let count = 0;
      for (const segment of driver.storage.log.segments) {
        if (!segment.sealed || count >= request.value.segmentsCount) break;
        upTo = BigInt(segment.endOffset + 1);
        count += 1;
      }
    }
    this.#o.forward(METADATA_THREAD, { ...message, route: RequestRoute.submit, group: METADATA_GROUP, hostValue: upTo });
  }

  #onClientFrame(group: bigint, token: number | null, frame: Uint8Array): void {
    if (token === null) return; // the partition plane has no client table: every reply has its token
    // The core echoes each request's own operation and timestamp (consensus answers.ts): the
    // ledger only releases the request and times its commit.
    const settled = this.#o.ledger.settle(token, group, frame);
    this.#commitTimer.replied(frame, settled.recordedMs);
    // Unmatched: a reply the ledger holds no request for (none is expected: the core answers a
    // request at most once, and forgets the ones it answered 57 on losing the primary role).
    if (settled.completes) this.#o.deliver(token, group, frame, true);
  }
}


function isWriteRoute(route: RequestRoute): boolean {
  return route === RequestRoute.submit || route === RequestRoute.offset_local;
}

/** A held request outlives the ring visit (or the socket chunk): copy its bytes. */
export function copyRequest(message: ClientRequestMessage): ClientRequestMessage {
  return { ...message, header: message.header.slice(), body: message.body.slice() };
}

/**
 * Has this replica applied the connection's acknowledged write `fenceOp` of this partition? A
 * fence beyond the head of an acting primary's log was acknowledged by an earlier incarnation of
 * the group (deleted, then created again): nothing of it can be waited for.
 */
function appliedFence(driver: PartitionDriver, fenceOp: bigint): boolean {
  const c = driver.replica.role;
  if (BigInt(c.commitMin) >= fenceOp) return true;
  return c.actingPrimary && (fenceOp === ACKED_UNKNOWN || fenceOp > BigInt(c.op));
}
