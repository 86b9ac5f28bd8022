import {
  ErrorCode,
  AckLevel, type ClientDetails, type ClientInfo, type CommandCodec, type ConsumerGroupAssignment, type ConsumerGroupDetails,
  type ConsumerGroupInfo, type ConsumerOffsetInfo, type HeaderValue, HeaderKind, type Identifier, type LoginReply,
  type OptionDescriptor, type OptionEntry, OptionsScope, type Partitioning, type Permissions, type PersonalAccessTokenInfo,
  type SendMessagesResponse, type Stats, type StreamDetails, type StreamInfo, TOPIC_OPTION_CATALOG, type TopicDetails,
  type TopicInfo, type UserDetails, type UserInfo, UserStatus, changePasswordCommand, createConsumerGroupCommand,
  createPartitionsCommand, createPersonalAccessTokenCommand, createStreamCommand, createTopicCommand, createUserCommand,
  deleteConsumerGroupCommand, deleteConsumerOffsetCommand, deletePartitionsCommand, deletePersonalAccessTokenCommand,
  deleteSegmentsCommand, deleteStreamCommand, deleteTopicCommand, deleteUserCommand, describeOptionsCommand,
  encodeHeaderValue, flushUnsavedBufferCommand, getClientCommand, getClientsCommand, getClusterMetadataCommand,
  getConsumerGroupCommand, getConsumerGroupsCommand, getConsumerOffsetCommand, getMeCommand,
  getPersonalAccessTokensCommand, getSnapshotCommand, getStatsCommand, getStreamCommand, getStreamsCommand,
  getTopicCommand, getTopicsCommand, getUserCommand, getUsersCommand, headerValueKindCode,
  joinConsumerGroupCommand, leaveConsumerGroupCommand, pingCommand, pollMessagesCommand, purgeStreamCommand,
  purgeTopicCommand, sendMessagesCommand, storeConsumerOffsetCommand, syncConsumerGroupCommand,
  updatePermissionsCommand, updateStreamCommand, updateTopicCommand, updateUserCommand,
} from '@shoal/protocol';
import { type NodeAddress, parseAddress } from './address.js';
import {
  type ClusterOptions, ClusterRouter, type ClusterView, type Route, clusterView, decodeClusterMetadata,
} from './cluster.js';
import { type ConnectionStringOptions, isConnectionString, parseConnectionString } from './connection-string.js';
import { ShoalInvalidArgumentError, ShoalProtocolError } from './errors.js';
import { type ClientEvent, type ClientEventOf, type ClientEventType, ClientEvents, type ShoalLogger } from './events.js';
import {
  type ConsumerInput, type Id, type PollingStrategyInput, identifierKey, toConsumer, toIdentifier, toPollingStrategy, toU32,
  toU64,
} from './identifiers.js';
import {
  type DecodePolledOptions, type Message, type ReceivedMessage, decodePolledMessages, encodeBatch,
} from './messages.js';
import { keyBytes } from './partitioner.js';
import type { Scheduler } from './scheduler.js';
import type { Credentials, RandomSource } from './session.js';
import { type ConnectionOptions, type Reply, TcpConnection, type TlsOptions } from './transport/tcp.js';
import { readCaFile } from './transport/tls-files.js';
import { nodeRandom, nodeScheduler } from './transport/node-scheduler.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import { Producer, type ProducerOptions } from './producer.js';

/**
 * The Shoal client: typed async methods for every command of commands.mdx, grouped the way the
 * Node SDK groups them (`client.stream.create(…)`, `client.topic.list(…)`, …), over a cluster
 * router that sends reads to the connected node and writes to the right primary.
 *
 *   const client = new ShoalClient({ url: 'iggy://iggy:iggy@127.0.0.1:8090' });
 *   const stream = await client.stream.create({ name: 'orders' });
 *   await client.close();
 *
 * Every method takes an optional last argument `{ signal, timeoutMs }`.
 */
export interface ClientOptions extends ConnectionOptions {
  /** A connection string (`iggy://user:pass@host:port?…`), or use `address`. */
  readonly url?: string;
  /** `host:port` (or several: the first reachable is the home node). Default 127.0.0.1:8090. */
  readonly address?: string | NodeAddress | readonly (string | NodeAddress)[];
  /** Logged in on connect (and on every reconnect). */
  readonly credentials?: Credentials | { readonly username: string; readonly password: string } | { readonly token: string };
  readonly cluster?: ClusterOptions;
  /**
   * Logs every client event (connects, losses, reconnects, replays, retries, redirects, leader
   * changes, give-ups) at its level: `console`, or any object with debug/info/warn/error.
   */
  readonly logger?: ShoalLogger;
  readonly scheduler?: Scheduler;
  readonly random?: RandomSource & { readonly float?: () => number };
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export type TopicOptionValue = string | boolean | number | bigint | HeaderValue;

/** Topic settings; each rides the options block (server/topic-options.mdx). */
export interface TopicSettings {
  readonly compressionAlgorithm?: 'none' | 'gzip';
  /** µs; 0 = never expire. */
  readonly messageExpiry?: bigint | number;
  /** bytes; 0 = unlimited. */
  readonly maxTopicSize?: bigint | number;
  /** Any other catalog key (`segment_size`, `enforce_fsync`, …); strings are parsed by the server ("128MiB"). */
  readonly options?: Readonly<Record<string, TopicOptionValue>>;
}

export type PartitioningInput = 'balanced' | { readonly partitionId: number } | { readonly key: string | Uint8Array };

export interface PolledBatch {
  readonly partitionId: number;
  /** The partition's newest offset at poll time. */
  readonly currentOffset: bigint;
  /** The reply's `messages_count` as the server sent it (poll_messages.rs); `messages.length` once decoded. */
  readonly messagesCount: number;
  readonly messages: readonly ReceivedMessage[];
}

export type UserStatusName = 'active' | 'inactive';

const DEFAULT_ADDRESS: NodeAddress = { host: '127.0.0.1', port: 8090 };

export class ShoalClient {
  readonly #router: ClusterRouter;
  readonly #scheduler: Scheduler;
  readonly #random: RandomSource & { readonly float?: () => number };
  readonly #events: ClientEvents;
  #closed = false;

  readonly stream: StreamApi;
  readonly topic: TopicApi;
  readonly partition: PartitionApi;
  readonly segment: SegmentApi;
  readonly user: UserApi;
  readonly token: TokenApi;
  readonly group: GroupApi;
  readonly offset: OffsetApi;
  readonly message: MessageApi;

  static fromConnectionString(url: string, options: Omit<ClientOptions, 'url'> = {}): ShoalClient {
    return new ShoalClient({ ...options, url });
  }

  constructor(options: ClientOptions = {}) {
    this.#scheduler = options.scheduler ?? nodeScheduler;
    this.#random = options.random ?? nodeRandom;
    let addresses = toAddresses(options.address);
    let credentials = toCredentials(options.credentials);
    let fromUrl: ConnectionStringOptions = {};
    if (options.url !== undefined) {
      if (!isConnectionString(options.url)) throw new ShoalInvalidArgumentError(`'${options.url}' is not a connection string`);
      const parsed = parseConnectionString(options.url);
      addresses = options.address === undefined ? [parsed.address] : addresses;
      credentials = credentials ?? parsed.credentials;
      fromUrl = parsed.options;
    }
    const reconnect = {
      ...(fromUrl.reconnectionRetries === undefined ? {} : { maxRetries: fromUrl.reconnectionRetries }),
      ...(fromUrl.reconnectionIntervalMs === undefined ? {} : { intervalMs: fromUrl.reconnectionIntervalMs }),
      ...(fromUrl.reestablishAfterMs === undefined ? {} : { reestablishAfterMs: fromUrl.reestablishAfterMs }),
      ...options.reconnect,
    };
    const connectionOptions: ConnectionOptions = {
      ...(fromUrl.tls === true ? { tls: tlsFromUrl(fromUrl) } : {}),
      ...(fromUrl.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: fromUrl.heartbeatIntervalMs }),
      ...(fromUrl.noDelay === undefined ? {} : { noDelay: fromUrl.noDelay }),
      ...stripClientOnly(options),
      reconnect,
    };
    this.#events = new ClientEvents(options.logger ?? null);
    const deps = { scheduler: this.#scheduler, random: this.#random, events: this.#events };
    this.#router = new ClusterRouter(addresses.length === 0 ? [DEFAULT_ADDRESS] : addresses, connectionOptions, options.cluster ?? {}, {
      scheduler: this.#scheduler,
      random: this.#random.float ?? (() => 0.5),
      factory: (address, opts) => new TcpConnection(address, opts, deps),
      events: this.#events,
    });
    if (credentials !== null) this.#router.setCredentials(credentials);
    this.stream = new StreamApi(this);
    this.topic = new TopicApi(this);
    this.partition = new PartitionApi(this);
    this.segment = new SegmentApi(this);
    this.user = new UserApi(this);
    this.token = new TokenApi(this);
    this.group = new GroupApi(this);
    this.offset = new OffsetApi(this);
    this.message = new MessageApi(this);
  }

  /**
   * Subscribes to client events (events.ts): `'connected'`, `'disconnected'`, `'reconnecting'`,
   * `'reconnect_failed'`, `'replay'`, `'evicted'`, `'retry'`, `'redirect'`, `'leader_changed'`,
   * `'gave_up'`, or `'*'` for all. Returns the unsubscribe function.
   */
  on<T extends ClientEventType>(type: T, listener: (event: ClientEventOf<T>) => void): () => void;
  on(type: '*', listener: (event: ClientEvent) => void): () => void;
  on(type: ClientEventType | '*', listener: (event: never) => void): () => void {
    return this.#events.on(type as '*', listener as (event: ClientEvent) => void);
  }

  /** The router (connections, cluster view): for diagnostics and tests. */
  get router(): ClusterRouter {
    return this.#router;
  }

  get scheduler(): Scheduler {
    return this.#scheduler;
  }

  /** A random u128 (message ids). */
  randomId(): bigint {
    return this.#random.u128();
  }

  /** Dials the first reachable node and logs in when credentials are configured. Optional: calls connect lazily. */
  async connect(options: CallOptions = {}): Promise<void> {
    await this.#router.connect(options.signal);
  }

  /** LOGIN_REGISTER (40): a fresh session on the home node; other nodes log in with the same credentials. */
  async login(username: string, password: string, options: CallOptions = {}): Promise<LoginReply> {
    return this.#router.login({ kind: 'password', username, password }, options);
  }

  /** LOGIN_REGISTER_WITH_PAT (45). */
  async loginWithToken(token: string, options: CallOptions = {}): Promise<LoginReply> {
    return this.#router.login({ kind: 'token', token }, options);
  }

  /** LOGOUT_USER (39) on every open connection; credentials are forgotten. */
  async logout(options: CallOptions = {}): Promise<void> {
    await this.#router.logout(options);
  }

  async ping(options: CallOptions = {}): Promise<void> {
    await this.call(pingCommand, {}, READ, options);
  }

  async getStats(options: CallOptions = {}): Promise<Stats> {
    return this.call(getStatsCommand, {}, READ, options);
  }

  async getMe(options: CallOptions = {}): Promise<ClientDetails> {
    return this.call(getMeCommand, {}, READ, options);
  }

  async getClient(clientId: number, options: CallOptions = {}): Promise<ClientDetails | null> {
    return this.call(getClientCommand, { clientId: toU32(clientId, 'client id') }, READ, options);
  }

  async getClients(options: CallOptions = {}): Promise<ClientInfo[]> {
    return this.call(getClientsCommand, {}, READ, options);
  }

  /** GET_CLUSTER_METADATA (12), with roles and statuses named. */
  async getClusterMetadata(options: CallOptions = {}): Promise<ClusterView> {
    const reply = await this.execute(getClusterMetadataCommand.code, new Uint8Array(0), READ, options);
    return clusterView(decodeClusterMetadata(reply.payload));
  }

  /** DESCRIBE_OPTIONS (13): the option catalog of a scope. */
  async describeOptions(scope: 'topic' | 'stream' | 'user', options: CallOptions = {}): Promise<OptionDescriptor[]> {
    const code = scope === 'topic' ? OptionsScope.Topic : scope === 'stream' ? OptionsScope.Stream : OptionsScope.User;
    return this.call(describeOptionsCommand, { scope: code }, READ, options);
  }

  /** GET_SNAPSHOT (11): the troubleshooting archive bytes. */
  async getSnapshot(request: { readonly compression?: number; readonly types?: readonly number[] } = {}, options: CallOptions = {}): Promise<Uint8Array> {
    return this.call(getSnapshotCommand, { compression: request.compression ?? 1, types: request.types ?? [100] }, READ, options);
  }

  /** SEND_MESSAGES (101): one batch; resolves once the batch is committed. Partitioning is sent as given. */
  async sendMessages(request: {
    readonly streamId: Id;
    readonly topicId: Id;
    readonly partitioning?: PartitioningInput;
    readonly messages: readonly Message[];
  }, options: CallOptions = {}): Promise<SendMessagesResponse> {
    const streamId = toIdentifier(request.streamId, 'stream id');
    const topicId = toIdentifier(request.topicId, 'topic id');
    const partitioning = toPartitioning(request.partitioning ?? 'balanced');
    return this.sendBatch(streamId, topicId, partitioning, encodeBatch(request.messages, this.#encodeOptions()), request.messages.length, options);
  }

  /** Sends a batch already built with `encodeBatch` (the producer's path). */
  async sendBatch(
    streamId: Identifier, topicId: Identifier, partitioning: Partitioning, batch: Uint8Array, messagesCount: number, options: CallOptions = {},
  ): Promise<SendMessagesResponse> {
    const partitionId = partitioning.kind === 'partition_id' ? partitioning.partitionId : null;
    return this.call(sendMessagesCommand, { streamId, topicId, partitioning, messagesCount, batch }, partitionRoute(streamId, topicId, partitionId), options);
  }

  /** POLL_MESSAGES (100), decoded into messages with absolute offsets. */
  async pollMessages(request: {
    readonly streamId: Id;
    readonly topicId: Id;
    readonly consumer?: ConsumerInput;
    /** Required for a single consumer; omit for a consumer group (the server resolves it). */
    readonly partitionId?: number | null;
    readonly strategy?: PollingStrategyInput;
    readonly count?: number;
    readonly autoCommit?: boolean;
  } & DecodePolledOptions, options: CallOptions = {}): Promise<PolledBatch> {
    const polled = await this.call(pollMessagesCommand, {
      consumer: toConsumer(request.consumer ?? 0),
      streamId: toIdentifier(request.streamId, 'stream id'),
      topicId: toIdentifier(request.topicId, 'topic id'),
      partitionId: request.partitionId ?? null,
      strategy: toPollingStrategy(request.strategy ?? 'next'),
      count: toU32(request.count ?? 10, 'count'),
      autoCommit: request.autoCommit ?? false,
    }, READ, options);
    const decodeOptions = request.verifyChecksums === undefined ? {} : { verifyChecksums: request.verifyChecksums };
    return { partitionId: polled.partitionId, currentOffset: polled.currentOffset, messagesCount: polled.messagesCount, messages: decodePolledMessages(polled, decodeOptions) };
  }

  /** FLUSH_UNSAVED_BUFFER (102): the server always answers FeatureUnavailable (use enforce_fsync). */
  async flushUnsavedBuffer(request: { readonly streamId: Id; readonly topicId: Id; readonly partitionId: number; readonly fsync?: boolean }, options: CallOptions = {}): Promise<void> {
    await this.call(flushUnsavedBufferCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id'),
      partitionId: toU32(request.partitionId, 'partition id'), fsync: request.fsync ?? false,
    }, READ, options);
  }

  producer(options: ProducerOptions): Producer {
    return new Producer(this, options);
  }

  consumer(options: ConsumerOptions): Consumer {
    return new Consumer(this, options);
  }

  /** Closes every connection; pending calls fail with ShoalClosedError. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#router.close();
  }

  /** Alias of `close` (Node SDK name). */
  async destroy(): Promise<void> {
    await this.close();
  }

  /** Encodes, routes, sends and decodes one command. */
  async call<Req, Res>(codec: CommandCodec<Req, Res>, request: Req, route: Route, options: CallOptions = {}): Promise<Res> {
    const reply = await this.execute(codec.code, codec.encodeRequest(request), route, options);
    const decoded = codec.decodeResponse(reply.payload);
    if (!decoded.ok) throw new ShoalProtocolError(decoded.reason, `${codec.info.name} reply`);
    return decoded.value;
  }

  /** Sends raw bytes for a command code through the router (escape hatch). */
  async execute(code: number, body: Uint8Array, route: Route, options: CallOptions = {}): Promise<Reply> {
    return this.#router.execute({ code, body }, route, { ...options, idempotent: route.kind === 'read' });
  }

  #encodeOptions(): { readonly randomId: () => bigint; readonly nowMicros: () => bigint } {
    return { randomId: () => this.#random.u128(), nowMicros: () => this.#scheduler.nowMicros() };
  }

  /** Message encoding defaults (ids, timestamps) for producers built on this client. */
  get encodeOptions(): { readonly randomId: () => bigint; readonly nowMicros: () => bigint } {
    return this.#encodeOptions();
  }
}

const READ: Route = { kind: 'read' };
const METADATA: Route = { kind: 'metadata' };

/** Partition-plane writes go to that partition's primary when the partition is known. */
export function partitionRoute(streamId: Identifier, topicId: Identifier, partitionId: number | null): Route {
  if (partitionId === null) return METADATA;
  return { kind: 'partition', key: `${identifierKey(streamId)}/${identifierKey(topicId)}/${partitionId}` };
}

export function toPartitioning(input: PartitioningInput): Partitioning {
  if (input === 'balanced') return { kind: 'balanced' };
  if ('partitionId' in input) return { kind: 'partition_id', partitionId: toU32(input.partitionId, 'partition id') };
  return { kind: 'messages_key', key: keyBytes(input.key) };
}

/** Topic settings → options block entries, values in the catalog's canonical kinds. */
export function topicOptionEntries(settings: TopicSettings): OptionEntry[] {
  const entries: OptionEntry[] = [];
  const add = (key: string, value: TopicOptionValue): void => {
    const typed = typedOption(key, value);
    entries.push({ key, valueKind: headerValueKindCode(typed), value: encodeHeaderValue(typed) });
  };
  if (settings.compressionAlgorithm !== undefined) add('compression_algorithm', settings.compressionAlgorithm);
  if (settings.messageExpiry !== undefined) add('message_expiry', BigInt(settings.messageExpiry));
  if (settings.maxTopicSize !== undefined) add('max_topic_size', BigInt(settings.maxTopicSize));
  for (const [key, value] of Object.entries(settings.options ?? {})) add(key, value);
  return entries;
}

function typedOption(key: string, value: TopicOptionValue): HeaderValue {
  if (typeof value === 'string') {
    if (value.length === 0) throw new ShoalInvalidArgumentError(`option '${key}' needs a value`);
    return { kind: 'string', value };
  }
  if (typeof value === 'boolean') return { kind: 'bool', value };
  if (typeof value === 'object') return value;
  const kind = TOPIC_OPTION_CATALOG.find((s) => s.key === key)?.kind ?? HeaderKind.Uint64;
  if (kind === HeaderKind.Uint32) return { kind: 'uint32', value: toU32(Number(value), key) };
  if (kind === HeaderKind.Bool) return { kind: 'bool', value: value !== 0 && value !== 0n };
  return { kind: 'uint64', value: toU64(value, key) };
}

/** `tls=true&tls_domain=…&tls_ca_file=…` → TLS options (the CA file is read now, once). */
function tlsFromUrl(options: ConnectionStringOptions): TlsOptions {
  let ca: Buffer | undefined;
  if (options.tlsCaFile !== undefined) {
    try {
      ca = readCaFile(options.tlsCaFile);
    } catch (error) {
      throw new ShoalInvalidArgumentError(`invalid connection string: tls_ca_file ${options.tlsCaFile}: ${error instanceof Error ? error.message : String(error)}`, ErrorCode.InvalidConnectionString);
    }
  }
  return { ...(options.tlsDomain === undefined ? {} : { servername: options.tlsDomain }), ...(ca === undefined ? {} : { ca }) };
}

function toAddresses(input: ClientOptions['address']): NodeAddress[] {
  if (input === undefined) return [];
  const list = Array.isArray(input) ? input : [input];
  return (list as readonly (string | NodeAddress)[]).map((a) => (typeof a === 'string' ? parseAddress(a) : a));
}

function toCredentials(input: ClientOptions['credentials']): Credentials | null {
  if (input === undefined) return null;
  if ('kind' in input) return input;
  if ('token' in input) return { kind: 'token', token: input.token };
  return { kind: 'password', username: input.username, password: input.password };
}

function stripClientOnly(options: ClientOptions): ConnectionOptions {
  const { url: _url, address: _address, credentials: _credentials, cluster: _cluster, scheduler: _scheduler, random: _random, reconnect: _reconnect, ...rest } = options;
  return rest;
}

function statusCode(status: UserStatusName | undefined): number {
  return status === 'inactive' ? UserStatus.Inactive : UserStatus.Active;
}

// ── grouped APIs ──────────────────────────────────────────────────────────────────────────────

class StreamApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_STREAM (200); null when it does not exist. */
  async get(request: { readonly streamId: Id }, options?: CallOptions): Promise<StreamDetails | null> {
    return this.#client.call(getStreamCommand, { streamId: toIdentifier(request.streamId, 'stream id') }, READ, options);
  }

  /** GET_STREAMS (201). */
  async list(options?: CallOptions): Promise<StreamInfo[]> {
    return this.#client.call(getStreamsCommand, {}, READ, options);
  }

  /** CREATE_STREAM (202). */
  async create(request: { readonly name: string }, options?: CallOptions): Promise<StreamDetails> {
    return this.#client.call(createStreamCommand, { name: request.name, options: [] }, METADATA, options);
  }

  /** UPDATE_STREAM (204): rename. */
  async update(request: { readonly streamId: Id; readonly name: string }, options?: CallOptions): Promise<void> {
    await this.#client.call(updateStreamCommand, { streamId: toIdentifier(request.streamId, 'stream id'), name: request.name, options: [] }, METADATA, options);
  }

  /** DELETE_STREAM (203). */
  async delete(request: { readonly streamId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(deleteStreamCommand, { streamId: toIdentifier(request.streamId, 'stream id') }, METADATA, options);
  }

  /** PURGE_STREAM (205): removes every message of every topic. */
  async purge(request: { readonly streamId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(purgeStreamCommand, { streamId: toIdentifier(request.streamId, 'stream id') }, METADATA, options);
  }
}

class TopicApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_TOPIC (300); null when it does not exist. */
  async get(request: { readonly streamId: Id; readonly topicId: Id }, options?: CallOptions): Promise<TopicDetails | null> {
    return this.#client.call(getTopicCommand, { streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id') }, READ, options);
  }

  /** GET_TOPICS (301). */
  async list(request: { readonly streamId: Id }, options?: CallOptions): Promise<TopicInfo[]> {
    return this.#client.call(getTopicsCommand, { streamId: toIdentifier(request.streamId, 'stream id') }, READ, options);
  }

  /** CREATE_TOPIC (302): settings not given take the server defaults. */
  async create(request: { readonly streamId: Id; readonly name: string; readonly partitionsCount: number } & TopicSettings, options?: CallOptions): Promise<TopicDetails> {
    return this.#client.call(createTopicCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'),
      partitionsCount: toU32(request.partitionsCount, 'partitions count'),
      name: request.name,
      options: topicOptionEntries(request),
    }, METADATA, options);
  }

  /** UPDATE_TOPIC (304): rename and patch compression, expiry, max size (absent = unchanged). */
  async update(request: { readonly streamId: Id; readonly topicId: Id; readonly name: string } & TopicSettings, options?: CallOptions): Promise<void> {
    await this.#client.call(updateTopicCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'),
      topicId: toIdentifier(request.topicId, 'topic id'),
      name: request.name,
      options: topicOptionEntries(request),
    }, METADATA, options);
  }

  /** DELETE_TOPIC (303). */
  async delete(request: { readonly streamId: Id; readonly topicId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(deleteTopicCommand, { streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id') }, METADATA, options);
  }

  /** PURGE_TOPIC (305). */
  async purge(request: { readonly streamId: Id; readonly topicId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(purgeTopicCommand, { streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id') }, METADATA, options);
  }
}

class PartitionApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** CREATE_PARTITIONS (402): adds partitions. */
  async create(request: { readonly streamId: Id; readonly topicId: Id; readonly partitionsCount: number }, options?: CallOptions): Promise<void> {
    await this.#client.call(createPartitionsCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id'),
      partitionsCount: toU32(request.partitionsCount, 'partitions count'),
    }, METADATA, options);
  }

  /** DELETE_PARTITIONS (403): removes the last partitions. */
  async delete(request: { readonly streamId: Id; readonly topicId: Id; readonly partitionsCount: number }, options?: CallOptions): Promise<void> {
    await this.#client.call(deletePartitionsCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id'),
      partitionsCount: toU32(request.partitionsCount, 'partitions count'),
    }, METADATA, options);
  }
}

class SegmentApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** DELETE_SEGMENTS (503): deletes the oldest sealed segments of a partition. */
  async delete(request: { readonly streamId: Id; readonly topicId: Id; readonly partitionId: number; readonly segmentsCount: number }, options?: CallOptions): Promise<void> {
    const streamId = toIdentifier(request.streamId, 'stream id');
    const topicId = toIdentifier(request.topicId, 'topic id');
    const partitionId = toU32(request.partitionId, 'partition id');
    await this.#client.call(deleteSegmentsCommand, {
      streamId, topicId, partitionId, segmentsCount: toU32(request.segmentsCount, 'segments count'),
    }, partitionRoute(streamId, topicId, partitionId), options);
  }
}

class UserApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_USER (31); null when it does not exist. */
  async get(request: { readonly userId: Id }, options?: CallOptions): Promise<UserDetails | null> {
    return this.#client.call(getUserCommand, { userId: toIdentifier(request.userId, 'user id') }, READ, options);
  }

  /** GET_USERS (32). */
  async list(options?: CallOptions): Promise<UserInfo[]> {
    return this.#client.call(getUsersCommand, {}, READ, options);
  }

  /** CREATE_USER (33). */
  async create(request: { readonly username: string; readonly password: string; readonly status?: UserStatusName; readonly permissions?: Permissions | null }, options?: CallOptions): Promise<UserDetails> {
    return this.#client.call(createUserCommand, {
      username: request.username, password: request.password, status: statusCode(request.status),
      permissions: request.permissions ?? null, options: [],
    }, METADATA, options);
  }

  /** UPDATE_USER (35): rename and/or (de)activate. */
  async update(request: { readonly userId: Id; readonly username?: string; readonly status?: UserStatusName }, options?: CallOptions): Promise<void> {
    await this.#client.call(updateUserCommand, {
      userId: toIdentifier(request.userId, 'user id'),
      username: request.username ?? null,
      status: request.status === undefined ? null : statusCode(request.status),
      options: [],
    }, METADATA, options);
  }

  /** DELETE_USER (34). */
  async delete(request: { readonly userId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(deleteUserCommand, { userId: toIdentifier(request.userId, 'user id') }, METADATA, options);
  }

  /** CHANGE_PASSWORD (37). */
  async changePassword(request: { readonly userId: Id; readonly currentPassword: string; readonly newPassword: string }, options?: CallOptions): Promise<void> {
    await this.#client.call(changePasswordCommand, {
      userId: toIdentifier(request.userId, 'user id'), currentPassword: request.currentPassword, newPassword: request.newPassword,
    }, METADATA, options);
  }

  /** UPDATE_PERMISSIONS (36): replaces them (null removes all). */
  async updatePermissions(request: { readonly userId: Id; readonly permissions: Permissions | null }, options?: CallOptions): Promise<void> {
    await this.#client.call(updatePermissionsCommand, { userId: toIdentifier(request.userId, 'user id'), permissions: request.permissions }, METADATA, options);
  }
}

class TokenApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_PERSONAL_ACCESS_TOKENS (41). */
  async list(options?: CallOptions): Promise<PersonalAccessTokenInfo[]> {
    return this.#client.call(getPersonalAccessTokensCommand, {}, READ, options);
  }

  /** CREATE_PERSONAL_ACCESS_TOKEN (42): `expiry` in µs (0 server default, u64::MAX never). Returns the secret, once. */
  async create(request: { readonly name: string; readonly expiry?: bigint }, options?: CallOptions): Promise<string> {
    const raw = await this.#client.call(createPersonalAccessTokenCommand, { name: request.name, expiry: request.expiry ?? 0n }, METADATA, options);
    return raw.token;
  }

  /** DELETE_PERSONAL_ACCESS_TOKEN (43). */
  async delete(request: { readonly name: string }, options?: CallOptions): Promise<void> {
    await this.#client.call(deletePersonalAccessTokenCommand, { name: request.name }, METADATA, options);
  }
}

class GroupApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_CONSUMER_GROUP (600); null when it does not exist. */
  async get(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }, options?: CallOptions): Promise<ConsumerGroupDetails | null> {
    return this.#client.call(getConsumerGroupCommand, groupIds(request), READ, options);
  }

  /** GET_CONSUMER_GROUPS (601). */
  async list(request: { readonly streamId: Id; readonly topicId: Id }, options?: CallOptions): Promise<ConsumerGroupInfo[]> {
    return this.#client.call(getConsumerGroupsCommand, { streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id') }, READ, options);
  }

  /** CREATE_CONSUMER_GROUP (602). */
  async create(request: { readonly streamId: Id; readonly topicId: Id; readonly name: string }, options?: CallOptions): Promise<ConsumerGroupDetails> {
    return this.#client.call(createConsumerGroupCommand, {
      streamId: toIdentifier(request.streamId, 'stream id'), topicId: toIdentifier(request.topicId, 'topic id'), name: request.name,
    }, METADATA, options);
  }

  /** DELETE_CONSUMER_GROUP (603). */
  async delete(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(deleteConsumerGroupCommand, groupIds(request), METADATA, options);
  }

  /** JOIN_CONSUMER_GROUP (604). */
  async join(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(joinConsumerGroupCommand, groupIds(request), METADATA, options);
  }

  /** LEAVE_CONSUMER_GROUP (605). */
  async leave(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }, options?: CallOptions): Promise<void> {
    await this.#client.call(leaveConsumerGroupCommand, groupIds(request), METADATA, options);
  }

  /** SYNC_CONSUMER_GROUP (606): this member's generation and partitions; null when not a member. */
  async sync(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }, options?: CallOptions): Promise<ConsumerGroupAssignment | null> {
    return this.#client.call(syncConsumerGroupCommand, groupIds(request), READ, options);
  }

  /** Gets the group by name, creating it when missing (Node SDK's ensure), then joins it. */
  async ensureAndJoin(request: { readonly streamId: Id; readonly topicId: Id; readonly name: string }, options?: CallOptions): Promise<ConsumerGroupDetails> {
    const existing = await this.get({ streamId: request.streamId, topicId: request.topicId, groupId: request.name }, options);
    const group = existing ?? await this.create(request, options);
    await this.join({ streamId: request.streamId, topicId: request.topicId, groupId: group.id }, options);
    return group;
  }
}

function groupIds(request: { readonly streamId: Id; readonly topicId: Id; readonly groupId: Id }): { readonly streamId: Identifier; readonly topicId: Identifier; readonly groupId: Identifier } {
  return {
    streamId: toIdentifier(request.streamId, 'stream id'),
    topicId: toIdentifier(request.topicId, 'topic id'),
    groupId: toIdentifier(request.groupId, 'group id'),
  };
}

interface OffsetTarget {
  readonly consumer: ConsumerInput;
  readonly streamId: Id;
  readonly topicId: Id;
  /** null / absent for a consumer group (the server resolves it). */
  readonly partitionId?: number | null;
}

class OffsetApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** GET_CONSUMER_OFFSET (120); null when none is stored. */
  async get(request: OffsetTarget, options?: CallOptions): Promise<ConsumerOffsetInfo | null> {
    return this.#client.call(getConsumerOffsetCommand, offsetTarget(request), READ, options);
  }

  /** STORE_CONSUMER_OFFSET (121), ack Quorum by default. */
  async store(request: OffsetTarget & { readonly offset: bigint | number; readonly ack?: 'none' | 'quorum' }, options?: CallOptions): Promise<void> {
    const target = offsetTarget(request);
    await this.#client.call(storeConsumerOffsetCommand, {
      ...target, offset: toU64(request.offset, 'offset'), ack: request.ack === 'none' ? AckLevel.NoAck : AckLevel.Quorum,
    }, partitionRoute(target.streamId, target.topicId, target.partitionId), options);
  }

  /** DELETE_CONSUMER_OFFSET (122). */
  async delete(request: OffsetTarget & { readonly ack?: 'none' | 'quorum' }, options?: CallOptions): Promise<void> {
    const target = offsetTarget(request);
    await this.#client.call(deleteConsumerOffsetCommand, {
      ...target, ack: request.ack === 'none' ? AckLevel.NoAck : AckLevel.Quorum,
    }, partitionRoute(target.streamId, target.topicId, target.partitionId), options);
  }
}

function offsetTarget(request: OffsetTarget): { readonly consumer: ReturnType<typeof toConsumer>; readonly streamId: Identifier; readonly topicId: Identifier; readonly partitionId: number | null } {
  return {
    consumer: toConsumer(request.consumer),
    streamId: toIdentifier(request.streamId, 'stream id'),
    topicId: toIdentifier(request.topicId, 'topic id'),
    partitionId: request.partitionId === undefined || request.partitionId === null ? null : toU32(request.partitionId, 'partition id'),
  };
}

class MessageApi {
  readonly #client: ShoalClient;

  constructor(client: ShoalClient) {
    this.#client = client;
  }

  /** Same as `client.sendMessages`. */
  async send(request: Parameters<ShoalClient['sendMessages']>[0], options?: CallOptions): Promise<SendMessagesResponse> {
    return this.#client.sendMessages(request, options);
  }

  /** Same as `client.pollMessages`. */
  async poll(request: Parameters<ShoalClient['pollMessages']>[0], options?: CallOptions): Promise<PolledBatch> {
    return this.#client.pollMessages(request, options);
  }

  /** Same as `client.flushUnsavedBuffer`. */
  async flush(request: Parameters<ShoalClient['flushUnsavedBuffer']>[0], options?: CallOptions): Promise<void> {
    return this.#client.flushUnsavedBuffer(request, options);
  }
}
