import {
  ByteReader, CLUSTER_METADATA, type ClusterGroups, type ClusterMetadata, CommandCode, ErrorCode, GROUP_PRIMARY_UNKNOWN, type LoginReply,
  readClusterGroups,
} from '@shoal/protocol';
import { type NodeAddress, addressKey, formatAddress } from './address.js';
import {
  ShoalAbortError, ShoalConnectionError, ShoalConnectionLostError, type ShoalError, ShoalProtocolError, ShoalResponseError,
  ShoalRetryExhaustedError, ShoalTimeoutError, asShoalError,
} from './errors.js';
import { type ClientEvents, commandName } from './events.js';
import { type Scheduler, backoffDelay } from './scheduler.js';
import type { Credentials, SessionCall } from './session.js';
import type { ConnectionOptions, Reply, RequestOptions, TcpConnection } from './transport/tcp.js';

/**
 * Leader redirection (clustering/client-failover.mdx, issue 7 item 5):
 *
 *   route          goes to                                        learned from
 *   read           whichever node is connected (home first)       -
 *   metadata       the metadata primary (role Leader)             GetClusterMetadata
 *   partition      that partition's primary                       GetClusterMetadata's Shoal extension
 *                                                                 (per-partition primaries), else the
 *                                                                 last node that accepted a write for
 *                                                                 it; 58 from a node rules it out
 *
 * The 0.11.0 GetClusterMetadata reply lists nodes with a role (Leader / Follower) and a status,
 * not per-partition primaries. A Shoal server appends an extension section after the standard
 * payload with the primary of every partition (protocol `readClusterGroups`; stock servers send
 * none and stock SDKs ignore it). Without it, partition primaries are learned: a write goes to
 * the node that last accepted a write for that partition, else to the metadata leader; a node
 * answering 58 TransientNotAccepted is ruled out for that partition until the roster changes.
 *
 * Retries: a retriable failure (57 after the session's own same-connection replays, 58, a lost or
 * refused connection, a timeout, a session eviction) marks the metadata stale and retries after
 * an exponential back-off with jitter, within `attemptsMax` attempts and `budgetMs` of time.
 * Switching target node counts as a redirect; more than `redirectsMax` (3, as the Rust SDK)
 * fails the call. While the cluster has no leader (a view change in progress) write routes poll
 * the metadata every `metadataPollIntervalMs` until one appears or the budget runs out. A node
 * that let a request time out (a call's own `timeoutMs` included) is suspect for `nodeSuspectMs`:
 * skipped for reads, metadata fetches and partition writes (another node carries those to the
 * primary) while any unmarked node is left; metadata writes still go to the leader the others
 * name. A paused or cut-off node keeps its sockets open and still names itself primary.
 * Definitive errors (validation, permissions, not found) are never retried, with one exception:
 * read-your-writes across nodes. Every node answers from its own copy of the metadata, which
 * applies a committed change a moment after the primary acknowledged it. A "not found" answered
 * by another node within `readYourWritesMs` (default 3000 ms) of a metadata write this client saw
 * acknowledged is that lag, not an answer: the call is retried (same back-off and budget).
 *
 * Writes in flight when their connection died, or that timed out, may have been applied. They are
 * retried too (`retryUncertainWrites`, default true): partition writes are at-least-once anyway;
 * a retried metadata write runs in a new session, so if the first attempt had committed, the retry
 * reports the resulting business error (for example StreamNameAlreadyExists).
 */
export type Route =
  | { readonly kind: 'read' }
  | { readonly kind: 'metadata' }
  | { readonly kind: 'partition'; readonly key: string };

export interface RetryOptions {
  /** Attempts per call, the first included (default 10). */
  readonly attemptsMax?: number;
  /** Time budget per call across attempts (default 15000 ms). */
  readonly budgetMs?: number;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** Retry writes whose outcome is unknown (lost connection, timeout). Default true. */
  readonly retryUncertainWrites?: boolean;
}

export interface ClusterOptions {
  /** Follow the metadata leader and partition primaries (default true). */
  readonly leaderAware?: boolean;
  /** Node switches per call at most (default 3). */
  readonly redirectsMax?: number;
  /** Metadata polling period while the cluster has no leader (default 200 ms). */
  readonly metadataPollIntervalMs?: number;
  /** A node that refused a connection is skipped for this long (default 1000 ms). */
  readonly nodeDownMs?: number;
  /**
   * A node that let a request time out is skipped for this long, for routing and for metadata
   * (default 10000 ms): a paused (SIGSTOP) or cut-off node keeps its sockets open and answers
   * nothing, and it still names itself primary; the other nodes take its partitions' requests
   * and forward them until its replacement is elected.
   */
  readonly nodeSuspectMs?: number;
  /** After an acknowledged metadata write, "not found" from another node is retried for this long (default 3000 ms; 0 = never). */
  readonly readYourWritesMs?: number;
  readonly retry?: RetryOptions;
}

/** What a node whose metadata copy lags answers for an object that was just created elsewhere. */
const CATCH_UP_CODES: ReadonlySet<number> = new Set([
  ErrorCode.ResourceNotFound, ErrorCode.StreamIdNotFound, ErrorCode.StreamNameNotFound, ErrorCode.TopicIdNotFound,
  ErrorCode.TopicNameNotFound, ErrorCode.PartitionNotFound, ErrorCode.ConsumerGroupIdNotFound, ErrorCode.ConsumerGroupNameNotFound,
]);

/** Node roles and statuses as the reference encodes them (ClusterNodeRole, ClusterNodeStatus, repr(u8)). */
export const ClusterNodeRole = { Leader: 0, Follower: 1 } as const;
export const ClusterNodeStatus = { Healthy: 0, Starting: 1, Stopping: 2, Unreachable: 3, Maintenance: 4, Unknown: 5 } as const;
const ROLE_NAMES = ['leader', 'follower'] as const;
const STATUS_NAMES = ['healthy', 'starting', 'stopping', 'unreachable', 'maintenance', 'unknown'] as const;

export type NodeRoleName = (typeof ROLE_NAMES)[number] | 'unknown';
export type NodeStatusName = (typeof STATUS_NAMES)[number];

export interface ClusterNodeView {
  readonly name: string;
  readonly address: NodeAddress;
  readonly role: NodeRoleName;
  readonly status: NodeStatusName;
  readonly raw: ClusterMetadata['nodes'][number];
}

export interface ClusterView {
  readonly name: string;
  readonly nodes: readonly ClusterNodeView[];
  /** The metadata primary, or null while leaderless. */
  readonly leader: ClusterNodeView | null;
  /**
   * Each partition's primary from the Shoal extension, keyed like partition routes (stream and
   * topic by id and by name); empty from a server without the extension.
   */
  readonly partitionPrimaries: ReadonlyMap<string, ClusterNodeView>;
  /** The extension as received (null: none). */
  readonly groups: ClusterGroups | null;
}

/** The standard GetClusterMetadata payload plus Shoal's extension, when present. */
export interface DecodedClusterMetadata extends ClusterMetadata {
  readonly groups: ClusterGroups | null;
}

export function roleName(role: number): NodeRoleName {
  return ROLE_NAMES[role] ?? 'unknown';
}

export function statusName(status: number): NodeStatusName {
  return STATUS_NAMES[status] ?? 'unknown';
}

/**
 * Decodes a GetClusterMetadata payload leniently: the 0.11.0 layout, with any trailing bytes a
 * newer server appends (per-group primaries, say) ignored rather than fatal.
 */
export function decodeClusterMetadata(payload: Uint8Array): DecodedClusterMetadata {
  const reader = new ByteReader(payload);
  const metadata = CLUSTER_METADATA.read(reader);
  if (reader.reason !== null) throw new ShoalProtocolError(reader.reason, 'cluster metadata');
  return { ...metadata, groups: readClusterGroups(reader) };
}

export function clusterView(metadata: ClusterMetadata & { readonly groups?: ClusterGroups | null }): ClusterView {
  const nodes = metadata.nodes.map((n): ClusterNodeView => ({
    name: n.name, address: { host: n.ip, port: n.tcpPort }, role: roleName(n.role), status: statusName(n.status), raw: n,
  }));
  const leader = nodes.find((n) => n.role === 'leader' && n.status !== 'unreachable' && n.status !== 'stopping') ?? null;
  const groups = metadata.groups ?? null;
  const partitionPrimaries = new Map<string, ClusterNodeView>();
  if (groups !== null) {
    const byReplica = new Map<number, ClusterNodeView>();
    groups.nodeReplicaIds.forEach((id, index) => {
      const node = nodes[index];
      if (node !== undefined) byReplica.set(id, node);
    });
    for (const t of groups.topics) {
      const streams = [`#${t.streamId}`, `'${t.streamName}'`];
      const topics = [`#${t.topicId}`, `'${t.topicName}'`];
      for (const p of t.partitions) {
        const node = p.primary === GROUP_PRIMARY_UNKNOWN ? undefined : byReplica.get(p.primary);
        if (node === undefined) continue;
        for (const stream of streams) for (const topic of topics) partitionPrimaries.set(`${stream}/${topic}/${p.partitionId}`, node);
      }
    }
  }
  return { name: metadata.name, nodes, leader, partitionPrimaries, groups };
}

export type ConnectionFactory = (address: NodeAddress, options: ConnectionOptions) => TcpConnection;

export interface ExecuteOptions extends RequestOptions {
  /** Reads are safe to repeat; writes may be uncertain (see retryUncertainWrites). */
  readonly idempotent?: boolean;
}

const DEFAULT_RETRY = { attemptsMax: 10, budgetMs: 15_000, backoffBaseMs: 25, backoffMaxMs: 1000 } as const;

export class ClusterRouter {
  readonly #bootstrap: readonly NodeAddress[];
  readonly #connectionOptions: ConnectionOptions;
  readonly #options: ClusterOptions;
  readonly #scheduler: Scheduler;
  readonly #random: () => number;
  readonly #factory: ConnectionFactory;
  readonly #events: ClientEvents | null;
  readonly #pool = new Map<string, TcpConnection>();
  readonly #down = new Map<string, number>();
  #homeKey: string;
  #credentials: Credentials | null = null;
  #view: ClusterView | null = null;
  #viewStale = true;
  #leaderAware: boolean;
  #refreshing: Promise<ClusterView | null> | null = null;
  /** Partition key → address key of the node that last accepted a write for it. */
  readonly #learned = new Map<string, string>();
  /** Partition key → address keys that answered "not accepted" for it since the last roster change. */
  readonly #ruledOut = new Map<string, Set<string>>();
  /** The last metadata write this client saw acknowledged: when, and by which node. */
  #metadataWrite: { readonly at: number; readonly target: string } | null = null;
  #closed = false;

  constructor(bootstrap: readonly NodeAddress[], connectionOptions: ConnectionOptions, options: ClusterOptions, deps: {
    readonly scheduler: Scheduler;
    readonly random: () => number;
    readonly factory: ConnectionFactory;
    readonly events?: ClientEvents;
  }) {
    if (bootstrap.length === 0) throw new ShoalConnectionError('no server address given', '');
    this.#bootstrap = bootstrap;
    this.#connectionOptions = connectionOptions;
    this.#options = options;
    this.#scheduler = deps.scheduler;
    this.#random = deps.random;
    this.#factory = deps.factory;
    this.#events = deps.events ?? null;
    this.#leaderAware = options.leaderAware ?? true;
    this.#homeKey = addressKey(bootstrap[0] as NodeAddress);
  }

  /** The connection reads go to (the first bootstrap node that answered). */
  get home(): TcpConnection {
    return this.#connection(this.#addressOf(this.#homeKey));
  }

  get view(): ClusterView | null {
    return this.#view;
  }

  get leaderAware(): boolean {
    return this.#leaderAware;
  }

  /** Every connection the router holds (open or not), keyed by `host:port`. */
  get connections(): ReadonlyMap<string, TcpConnection> {
    return this.#pool;
  }

  setCredentials(credentials: Credentials | null): void {
    this.#credentials = credentials;
    for (const connection of this.#pool.values()) connection.setCredentials(credentials);
  }

  /** Connects to the first reachable bootstrap node (and logs in when credentials are set). */
  async connect(signal?: AbortSignal): Promise<void> {
    let lastError: ShoalError | null = null;
    for (const address of this.#bootstrap) {
      try {
        const connection = this.#connection(address);
        await connection.connect(signal);
        this.#homeKey = addressKey(address);
        return;
      } catch (error) {
        lastError = asShoalError(error);
        if (!lastError.retriable || lastError instanceof ShoalAbortError) throw lastError;
        this.#markDown(addressKey(address));
      }
    }
    throw lastError ?? new ShoalConnectionError('no server reachable', '');
  }

  /** Logs in on the home node; other nodes log in with the same credentials when first used. */
  async login(credentials: Credentials, options: RequestOptions = {}): Promise<LoginReply> {
    this.setCredentials(credentials);
    const reply = await this.home.authenticate(credentials, options);
    await Promise.all([...this.#pool.values()]
      .filter((c) => c !== this.home && c.state === 'open')
      .map((c) => c.authenticate(credentials, options).catch(() => undefined)));
    return reply;
  }

  async logout(options: RequestOptions = {}): Promise<void> {
    this.#credentials = null;
    const results = await Promise.allSettled([...this.#pool.values()].map((c) => c.logout(options)));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) throw asShoalError(failure.reason);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pool.values()].map((c) => c.close()));
  }

  /** Fetches cluster metadata (from any reachable node) and updates the view. */
  async refresh(signal?: AbortSignal): Promise<ClusterView | null> {
    if (this.#refreshing === null) {
      this.#refreshing = this.#fetchView(signal).finally(() => {
        this.#refreshing = null;
      });
    }
    return this.#refreshing;
  }

  /** Runs one call with routing, retries and redirects. */
  async execute(call: SessionCall, route: Route, options: ExecuteOptions = {}): Promise<Reply> {
    try {
      return await this.#execute(call, route, options);
    } catch (error) {
      if (error instanceof ShoalRetryExhaustedError && this.#events !== null) {
        this.#events.emit({ type: 'gave_up', command: commandName(call.code), reason: error.reason, attempts: error.attempts, error });
      }
      throw error;
    }
  }

  async #execute(call: SessionCall, route: Route, options: ExecuteOptions): Promise<Reply> {
    const retry = { ...DEFAULT_RETRY, ...this.#options.retry };
    const redirectsMax = this.#options.redirectsMax ?? 3;
    const started = this.#scheduler.now();
    const deadline = started + retry.budgetMs;
    const isWrite = route.kind !== 'read';
    let attempts = 0;
    let redirects = 0;
    let lastError: ShoalError | null = null;
    let lastTarget: string | null = null;
    for (;;) {
      throwIfAborted(options.signal);
      const target = await this.#target(route, deadline, attempts, redirects, lastError, options.signal);
      if (lastTarget !== null && target !== lastTarget) {
        redirects++;
        if (redirects > redirectsMax) throw new ShoalRetryExhaustedError('redirects', attempts, redirects - 1, lastError);
        this.#events?.emit({ type: 'redirect', command: commandName(call.code), from: lastTarget, to: target, redirects });
      }
      lastTarget = target;
      attempts++;
      const connection = this.#connection(this.#addressOf(target));
      try {
        const reply = await connection.request(call, options);
        this.#down.delete(target);
        if (route.kind === 'partition') this.#learned.set(route.key, target);
        else if (route.kind === 'metadata') this.#metadataWrite = { at: this.#scheduler.now(), target };
        return reply;
      } catch (thrown) {
        const error = asShoalError(thrown);
        if (error instanceof ShoalAbortError || !(error.retriable || this.#lagging(error, target))) throw error;
        // A lagging node is still the right target: only a retriable failure re-routes. Noted
        // before an uncertain write is handed back too, so the next call does not go to a
        // learned target that just failed.
        if (error.retriable) this.#noteFailure(route, target, error);
        const uncertain = isUncertain(error);
        if (isWrite && uncertain && options.idempotent !== true && retry.retryUncertainWrites === false) throw error;
        lastError = error;
        if (attempts >= retry.attemptsMax) throw new ShoalRetryExhaustedError('attempts', attempts, redirects, error);
        const pause = backoffDelay(attempts - 1, retry.backoffBaseMs, retry.backoffMaxMs, this.#random);
        if (this.#scheduler.now() + pause >= deadline) throw new ShoalRetryExhaustedError('time', attempts, redirects, error);
        this.#events?.emit({ type: 'retry', command: commandName(call.code), node: target, attempt: attempts, delayMs: pause, error });
        await this.#scheduler.sleep(pause, options.signal);
      }
    }
  }

  /** A "not found" from a node other than the one that just acknowledged a metadata write. */
  #lagging(error: ShoalError, target: string): boolean {
    const write = this.#metadataWrite;
    if (write === null || write.target === target || !(error instanceof ShoalResponseError) || !CATCH_UP_CODES.has(error.code)) return false;
    return this.#scheduler.now() - write.at < (this.#options.readYourWritesMs ?? 3000);
  }

  // ── targets ──────────────────────────────────────────────────────────────────────────────

  async #target(
    route: Route, deadline: number, attempts: number, redirects: number, lastError: ShoalError | null, signal?: AbortSignal,
  ): Promise<string> {
    if (route.kind === 'read' || !this.#leaderAware) return this.#readTarget();
    for (;;) {
      if (this.#viewStale || this.#view === null) await this.refresh(signal);
      if (!this.#leaderAware) return this.#readTarget();
      const view = this.#view;
      if (view !== null && view.leader !== null) {
        if (view.nodes.length === 1) return this.#readTarget();
        // A suspect leader is still the leader while the others (asked first) name it: only the
        // metadata primary can take a metadata write, and it may just have been slow once.
        return route.kind === 'partition' ? this.#partitionTarget(route.key, view) : addressKey(view.leader.address);
      }
      // Leaderless: a view change is under way. Poll until a leader appears.
      const pause = this.#options.metadataPollIntervalMs ?? 200;
      if (this.#scheduler.now() + pause >= deadline) throw new ShoalRetryExhaustedError('leaderless', attempts, redirects, lastError);
      await this.#scheduler.sleep(pause, signal);
      this.#viewStale = true;
    }
  }

  #readTarget(): string {
    for (const [key, connection] of this.#pool) if (connection.state === 'open' && !this.#isDown(key)) return key;
    if (!this.#isDown(this.#homeKey)) return this.#homeKey;
    const candidates = [...this.#bootstrap.map(addressKey), ...(this.#view?.nodes ?? []).map((n) => addressKey(n.address))];
    return candidates.find((key) => !this.#isDown(key)) ?? this.#homeKey;
  }

  #partitionTarget(key: string, view: ClusterView): string {
    const excluded = this.#ruledOut.get(key) ?? new Set<string>();
    const advertised = view.partitionPrimaries.get(key);
    if (advertised !== undefined && advertised.status !== 'unreachable') {
      const target = addressKey(advertised.address);
      if (!excluded.has(target) && !this.#isDown(target)) return target;
    }
    const learned = this.#learned.get(key);
    if (learned !== undefined && !this.#isDown(learned)) return learned;
    const leader = view.leader === null ? null : addressKey(view.leader.address);
    const ordered = [leader, ...view.nodes.filter((n) => n.status !== 'unreachable').map((n) => addressKey(n.address))]
      .filter((k): k is string => k !== null);
    const choice = ordered.find((k) => !excluded.has(k) && !this.#isDown(k));
    if (choice !== undefined) return choice;
    this.#ruledOut.delete(key);
    return leader ?? this.#homeKey;
  }

  #noteFailure(route: Route, target: string, error: ShoalError): void {
    this.#viewStale = true;
    if (error instanceof ShoalConnectionError) this.#markDown(target);
    else if (error instanceof ShoalTimeoutError) this.#markDown(target, this.#options.nodeSuspectMs ?? 10_000);
    if (route.kind === 'partition') {
      if (this.#learned.get(route.key) === target) this.#learned.delete(route.key);
      if (error instanceof ShoalResponseError || error instanceof ShoalConnectionError) {
        const set = this.#ruledOut.get(route.key) ?? new Set<string>();
        set.add(target);
        this.#ruledOut.set(route.key, set);
      }
    }
  }

  async #fetchView(signal?: AbortSignal): Promise<ClusterView | null> {
    const order = [this.#readTarget(), ...[...this.#pool.keys()], ...this.#bootstrap.map(addressKey), ...(this.#view?.nodes ?? []).map((n) => addressKey(n.address))];
    const tried = new Set<string>();
    // Down and suspect nodes are asked last, and only when every node is marked.
    const skipMarked = order.some((key) => !this.#isDown(key));
    let lastError: ShoalError | null = null;
    for (const key of order) {
      if (tried.has(key) || (skipMarked && this.#isDown(key))) continue;
      tried.add(key);
      try {
        const reply = await this.#connection(this.#addressOf(key)).request({ code: CommandCode.GetClusterMetadata, body: new Uint8Array(0) }, {
          ...(signal === undefined ? {} : { signal }),
          ...(this.#connectionOptions.requestTimeoutMs === undefined ? {} : { timeoutMs: this.#connectionOptions.requestTimeoutMs }),
        });
        const view = clusterView(decodeClusterMetadata(reply.payload));
        this.#install(view);
        return view;
      } catch (thrown) {
        lastError = asShoalError(thrown);
        if (lastError instanceof ShoalAbortError) throw lastError;
        if (!lastError.retriable) {
          // A server without cluster metadata: route everything to the node we are connected to.
          const denied = lastError.code === ErrorCode.Unauthenticated || lastError.code === ErrorCode.Unauthorized;
          if (!denied && (lastError instanceof ShoalResponseError || lastError instanceof ShoalProtocolError)) {
            this.#leaderAware = false;
            this.#viewStale = false;
            return null;
          }
          throw lastError;
        }
        if (lastError instanceof ShoalConnectionError) this.#markDown(key);
        else if (lastError instanceof ShoalTimeoutError) this.#markDown(key, this.#options.nodeSuspectMs ?? 10_000);
      }
    }
    if (lastError !== null) throw lastError;
    return null;
  }

  #install(view: ClusterView): void {
    const previousLeader = this.#view?.leader === null || this.#view === null ? null : addressKey(this.#view.leader.address);
    const leader = view.leader === null ? null : addressKey(view.leader.address);
    if (previousLeader !== leader) {
      this.#ruledOut.clear();
      this.#learned.clear();
      if (this.#view !== null) this.#events?.emit({ type: 'leader_changed', from: previousLeader, to: leader });
    } else {
      // A partition whose advertised primary moved: what was ruled out for it may lead now.
      for (const key of [...this.#ruledOut.keys()]) {
        const before = this.#view?.partitionPrimaries.get(key);
        const after = view.partitionPrimaries.get(key);
        if ((before === undefined ? null : addressKey(before.address)) !== (after === undefined ? null : addressKey(after.address))) {
          this.#ruledOut.delete(key);
        }
      }
    }
    this.#view = view;
    this.#viewStale = false;
  }

  // ── pool ─────────────────────────────────────────────────────────────────────────────────

  #addressOf(key: string): NodeAddress {
    const fromPool = this.#pool.get(key);
    if (fromPool !== undefined) return fromPool.address;
    const known = [...this.#bootstrap, ...(this.#view?.nodes ?? []).map((n) => n.address)].find((a) => addressKey(a) === key);
    if (known === undefined) throw new ShoalConnectionError(`unknown node ${key}`, key);
    return known;
  }

  #connection(address: NodeAddress): TcpConnection {
    const key = addressKey(address);
    let connection = this.#pool.get(key);
    if (connection === undefined) {
      if (this.#closed) throw new ShoalConnectionError('client is closed', formatAddress(address));
      connection = this.#factory(address, this.#connectionOptions);
      connection.setCredentials(this.#credentials);
      this.#pool.set(key, connection);
    }
    connection.reconnectInPlace = !this.#otherNodesKnown();
    return connection;
  }

  /** More than one node to go to: the router, not the connection, retries (TcpConnection.reconnectInPlace). */
  #otherNodesKnown(): boolean {
    return this.#leaderAware && (this.#bootstrap.length > 1 || (this.#view?.nodes.length ?? 0) > 1);
  }

  #markDown(key: string, forMs = this.#options.nodeDownMs ?? 1000): void {
    const until = this.#scheduler.now() + forMs;
    this.#down.set(key, Math.max(until, this.#down.get(key) ?? 0));
  }

  #isDown(key: string): boolean {
    const until = this.#down.get(key);
    if (until === undefined) return false;
    if (this.#scheduler.now() >= until) {
      this.#down.delete(key);
      return false;
    }
    return true;
  }
}

function isUncertain(error: ShoalError): boolean {
  return (error instanceof ShoalConnectionLostError && error.written) || error instanceof ShoalTimeoutError;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ShoalAbortError(signal.reason);
}
