import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import {
  type ClusterMetadata, type ClusterNode, CommandCode, type ConsumerGroupAssignment, type ConsumerGroupDetails, ErrorCode,
  FrameDecoder, type Identifier, Operation, type OptionEntry, type PartitionInfo, type RequestHeader, type StreamDetails,
  type TopicDetails, type TopicInfo, TOPIC_OPTION_CATALOG, commandCodec, decodeRequestFrame, encodeEvictionHeader,
  encodeLoginReply, encodeReplyFrame, encodeResultRejection, encodeResultSuccess, isResultFramed, readBatchHeader,
  requestCommandCode, sliceBatch, stampBatch, validateBatch, type Permissions,
} from '@shoal/protocol';
import { loadXxh32 } from '../../src/partitioner.js';

/**
 * An in-test Shoal/Iggy server on a real loopback socket: speaks the client plane of framing.mdx
 * (register, request numbering with a per-client watermark, result sections, evictions) over an
 * in-memory model of streams, topics, partitions, messages, offsets, groups, users and tokens.
 * It can misbehave on demand through `intercept`: delay, drop, answer an error (57/58/…), evict,
 * close. Ids are 0-based, like the reference.
 */
export type FakeAction =
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'drop' }
  | { readonly kind: 'close' }
  | { readonly kind: 'evict'; readonly reason: number }
  /** Answer with an error: `status` (pre-commit) or a result-section rejection. */
  | { readonly kind: 'reject'; readonly code: number; readonly via?: 'status' | 'result' };

export interface RecordedRequest {
  readonly connection: number;
  readonly code: number;
  readonly header: RequestHeader;
  readonly body: Uint8Array;
  readonly frame: Uint8Array;
}

export type Interceptor = (request: RecordedRequest, server: FakeServer) => FakeAction | undefined | null;

interface FakePartition {
  readonly id: number;
  readonly createdAt: bigint;
  readonly batches: { readonly baseOffset: bigint; readonly count: number; readonly bytes: Uint8Array; readonly timestamp: bigint }[];
  nextOffset: bigint;
  readonly offsets: Map<string, bigint>;
}

interface FakeGroup {
  readonly id: number;
  readonly name: string;
  /** client id → assigned partitions, in join order. */
  readonly members: Map<bigint, number[]>;
  generation: bigint;
}

interface FakeTopic {
  readonly id: number;
  name: string;
  readonly createdAt: bigint;
  readonly partitions: FakePartition[];
  readonly groups: Map<number, FakeGroup>;
  nextGroupId: number;
  options: OptionEntry[];
  roundRobin: number;
}

interface FakeStream {
  readonly id: number;
  name: string;
  readonly createdAt: bigint;
  readonly topics: Map<number, FakeTopic>;
  nextTopicId: number;
}

interface FakeUser {
  readonly id: number;
  username: string;
  password: string;
  status: number;
  permissions: Permissions | null;
  readonly createdAt: bigint;
}

interface ClientEntry {
  epoch: bigint;
  userId: number;
  watermark: bigint;
}

interface Conn {
  readonly id: number;
  readonly socket: Socket;
  readonly decoder: FrameDecoder;
}

const NOW = 1_700_000_000_000_000n;

class Reject extends Error {
  constructor(readonly code: number) {
    super(`error ${code}`);
  }
}

export interface FakeServerOptions {
  readonly metadata?: (server: FakeServer) => ClusterMetadata | null;
  readonly name?: string;
}

export class FakeServer {
  readonly #server: Server;
  readonly #conns = new Set<Conn>();
  #nextConn = 1;
  #op = 100n;
  readonly streams = new Map<number, FakeStream>();
  #nextStreamId = 0;
  readonly users = new Map<number, FakeUser>();
  #nextUserId = 1;
  readonly tokens = new Map<string, { readonly name: string; readonly userId: number; readonly expiry: bigint }>();
  readonly clients = new Map<bigint, ClientEntry>();
  readonly requests: RecordedRequest[] = [];
  intercept: Interceptor | null = null;
  /** When set, the next logins bind this session epoch (to reproduce vectors). */
  forceEpoch: bigint | null = null;
  metadata: ((server: FakeServer) => ClusterMetadata | null) | null;
  readonly name: string;
  port = 0;

  private constructor(server: Server, options: FakeServerOptions) {
    this.#server = server;
    this.metadata = options.metadata ?? null;
    this.name = options.name ?? 'node-0';
    this.users.set(0, { id: 0, username: 'iggy', password: 'iggy', status: 1, permissions: null, createdAt: NOW });
  }

  static async start(options: FakeServerOptions = {}): Promise<FakeServer> {
    let fake: FakeServer | null = null;
    const server = createServer((socket) => fake?.accept(socket));
    fake = new FakeServer(server, options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake.port = (server.address() as AddressInfo).port;
    await loadXxh32();
    return fake;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  url(credentials = 'iggy:iggy', query = ''): string {
    return `iggy://${credentials}@127.0.0.1:${this.port}${query === '' ? '' : `?${query}`}`;
  }

  /** The node as it appears in cluster metadata. */
  node(role: number, status = 0): ClusterNode {
    return { name: this.name, ip: '127.0.0.1', tcpPort: this.port, quicPort: 0, httpPort: 0, websocketPort: 0, role, status };
  }

  get connectionCount(): number {
    return this.#conns.size;
  }

  /** Requests of one command code, in arrival order. */
  requestsOf(code: number): RecordedRequest[] {
    return this.requests.filter((r) => r.code === code);
  }

  /** Stops reading from every client socket (the clients' writes back up). */
  pauseReading(): void {
    for (const conn of this.#conns) conn.socket.pause();
  }

  resumeReading(): void {
    for (const conn of this.#conns) conn.socket.resume();
  }

  dropConnections(): void {
    for (const conn of this.#conns) conn.socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  accept(socket: Socket): void {
    const conn: Conn = { id: this.#nextConn++, socket, decoder: new FrameDecoder() };
    this.#conns.add(conn);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (!conn.decoder.push(chunk)) return;
      for (let frame = conn.decoder.pull(); frame !== null; frame = conn.decoder.pull()) this.#onFrame(conn, new Uint8Array(frame));
      if (conn.decoder.error !== null) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.#conns.delete(conn));
  }

  #onFrame(conn: Conn, frame: Uint8Array): void {
    const decoded = decodeRequestFrame(frame);
    if (!decoded.ok) {
      conn.socket.destroy();
      return;
    }
    const { header, body } = decoded.value;
    const code = requestCommandCode(header, body);
    const recorded: RecordedRequest = { connection: conn.id, code: code.ok ? code.value : -1, header, body, frame };
    this.requests.push(recorded);
    const action = this.intercept?.(recorded, this) ?? null;
    if (action === null || action === undefined) {
      this.#answer(conn, recorded);
      return;
    }
    switch (action.kind) {
      case 'delay':
        setTimeout(() => this.#answer(conn, recorded), action.ms);
        return;
      case 'drop':
        return;
      case 'close':
        conn.socket.destroy();
        return;
      case 'evict':
        this.#write(conn, encodeEvictionHeader({ client: header.client, reason: action.reason }));
        return;
      case 'reject':
        this.#reject(conn, header, action.code, action.via ?? 'status');
        return;
    }
  }

  #write(conn: Conn, frame: Uint8Array): void {
    if (!conn.socket.destroyed) conn.socket.write(frame);
  }

  #reply(conn: Conn, header: RequestHeader, body: Uint8Array, status = 0): void {
    const op = status === 0 ? ++this.#op : 0n;
    this.#write(conn, encodeReplyFrame({
      client: header.client, request: header.request, operation: header.operation, timestamp: header.timestamp,
      requestChecksum: header.requestChecksum, op, commit: op, status,
    }, body));
  }

  #reject(conn: Conn, header: RequestHeader, code: number, via: 'status' | 'result'): void {
    if (via === 'result' && isResultFramed(header.operation, 1)) this.#reply(conn, header, encodeResultRejection(code));
    else this.#reply(conn, header, new Uint8Array(0), code);
  }

  #answer(conn: Conn, request: RecordedRequest): void {
    const { header, body, code } = request;
    if (conn.socket.destroyed) return;
    if (header.operation === Operation.Register) {
      this.#login(conn, header, code, body);
      return;
    }
    const entry = this.clients.get(header.client);
    if (code !== CommandCode.Ping) {
      if (entry === undefined) {
        if (header.session === 0n) this.#reply(conn, header, new Uint8Array(0), ErrorCode.Unauthenticated);
        else this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 1 }));
        return;
      }
      if (header.session !== entry.epoch) {
        this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 7 }));
        return;
      }
      if (header.operation !== Operation.NonReplicated && header.operation < 160 && header.operation !== Operation.DeleteSegments) {
        if (header.request <= entry.watermark) {
          this.#reject(conn, header, ErrorCode.RequestAlreadyApplied, 'result');
          return;
        }
        entry.watermark = header.request;
      }
    }
    const codec = commandCodec(code);
    if (codec === null) {
      this.#reply(conn, header, new Uint8Array(0), ErrorCode.InvalidCommand);
      return;
    }
    const parsed = codec.decodeRequest(body);
    if (!parsed.ok) {
      this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 5 }));
      return;
    }
    try {
      const payload = this.#execute(code, parsed.value, header, conn);
      const framed = isResultFramed(header.operation, 1) ? encodeResultSuccess(payload) : payload;
      this.#reply(conn, header, framed);
      if (code === CommandCode.LogoutUser) this.clients.delete(header.client);
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      this.#reject(conn, header, error.code, 'result');
    }
  }

  #login(conn: Conn, header: RequestHeader, code: number, body: Uint8Array): void {
    const codec = commandCodec(code);
    const parsed = codec?.decodeRequest(body);
    if (parsed === undefined || !parsed.ok) {
      this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 15 }));
      return;
    }
    const req = parsed.value as { username?: string; password?: string; token?: string };
    let user: FakeUser | undefined;
    if (req.token !== undefined) {
      const token = this.tokens.get(req.token);
      user = token === undefined ? undefined : this.users.get(token.userId);
      if (user === undefined) {
        this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 10 }));
        return;
      }
    } else {
      user = [...this.users.values()].find((u) => u.username === req.username && u.password === req.password);
      if (user === undefined) {
        this.#write(conn, encodeEvictionHeader({ client: header.client, reason: 9 }));
        return;
      }
    }
    const epoch = this.forceEpoch ?? ++this.#op;
    const existing = this.clients.get(header.client);
    this.clients.set(header.client, { epoch, userId: user.id, watermark: existing?.watermark ?? 0n });
    const payload = encodeLoginReply({ userId: user.id, session: epoch, serverProtocolVersion: 11264, serverVersion: '0.11.0' });
    this.#write(conn, encodeReplyFrame({
      client: header.client, request: 0n, operation: Operation.Register, timestamp: header.timestamp, op: epoch, commit: epoch,
    }, encodeResultSuccess(payload)));
  }

  /** Seeds a stream (with topics of the given partition counts) directly in the model. */
  addStream(name: string, topics: readonly (readonly [string, number])[] = []): number {
    const stream: FakeStream = { id: this.#nextStreamId++, name, createdAt: NOW, topics: new Map(), nextTopicId: 0 };
    this.streams.set(stream.id, stream);
    for (const [topicName, partitions] of topics) {
      const topic: FakeTopic = {
        id: stream.nextTopicId++, name: topicName, createdAt: NOW, partitions: Array.from({ length: partitions }, (_, i) => this.#newPartition(i)),
        groups: new Map(), nextGroupId: 0, options: [], roundRobin: 0,
      };
      stream.topics.set(topic.id, topic);
    }
    return stream.id;
  }

  /** Offsets stored for a consumer key (`consumer:numeric:1`, `consumer_group:numeric:0`) on one partition. */
  storedOffset(streamId: number, topicId: number, partitionId: number, key: string): bigint | undefined {
    return this.streams.get(streamId)?.topics.get(topicId)?.partitions[partitionId]?.offsets.get(key);
  }

  /** Messages appended to one partition. */
  messageCount(streamId: number, topicId: number, partitionId: number): bigint {
    return this.streams.get(streamId)?.topics.get(topicId)?.partitions[partitionId]?.nextOffset ?? 0n;
  }

  // ── the model ────────────────────────────────────────────────────────────────────────────

  stream(id: Identifier): FakeStream {
    const found = id.kind === 'numeric' ? this.streams.get(id.value) : [...this.streams.values()].find((s) => s.name === id.value);
    if (found === undefined) throw new Reject(id.kind === 'numeric' ? ErrorCode.StreamIdNotFound : ErrorCode.StreamNameNotFound);
    return found;
  }

  topic(streamId: Identifier, topicId: Identifier): FakeTopic {
    const stream = this.stream(streamId);
    const found = topicId.kind === 'numeric' ? stream.topics.get(topicId.value) : [...stream.topics.values()].find((t) => t.name === topicId.value);
    if (found === undefined) throw new Reject(topicId.kind === 'numeric' ? ErrorCode.TopicIdNotFound : ErrorCode.TopicNameNotFound);
    return found;
  }

  #group(topic: FakeTopic, groupId: Identifier): FakeGroup {
    const found = groupId.kind === 'numeric' ? topic.groups.get(groupId.value) : [...topic.groups.values()].find((g) => g.name === groupId.value);
    if (found === undefined) throw new Reject(groupId.kind === 'numeric' ? ErrorCode.ConsumerGroupIdNotFound : ErrorCode.ConsumerGroupNameNotFound);
    return found;
  }

  #user(id: Identifier): FakeUser {
    const found = id.kind === 'numeric' ? this.users.get(id.value) : [...this.users.values()].find((u) => u.username === id.value);
    if (found === undefined) throw new Reject(ErrorCode.ResourceNotFound);
    return found;
  }

  #topicInfo(t: FakeTopic): TopicInfo {
    const messages = t.partitions.reduce((sum, p) => sum + p.nextOffset, 0n);
    return {
      id: t.id, createdAt: t.createdAt, partitionsCount: t.partitions.length, messageExpiry: 0n, compressionAlgorithm: 1,
      maxTopicSize: 0n, sizeBytes: t.partitions.reduce((sum, p) => sum + BigInt(p.batches.reduce((s, b) => s + b.bytes.length, 0)), 0n),
      messagesCount: messages, name: t.name, options: t.options, derivedOptions: [],
    };
  }

  #topicDetails(t: FakeTopic): TopicDetails {
    const partitions: PartitionInfo[] = t.partitions.map((p) => ({
      id: p.id, createdAt: p.createdAt, segmentsCount: 1, currentOffset: p.nextOffset === 0n ? 0n : p.nextOffset - 1n,
      sizeBytes: BigInt(p.batches.reduce((s, b) => s + b.bytes.length, 0)), messagesCount: p.nextOffset,
    }));
    return { ...this.#topicInfo(t), partitions };
  }

  #streamDetails(s: FakeStream): StreamDetails {
    const topics = [...s.topics.values()].map((t) => this.#topicInfo(t));
    return {
      id: s.id, createdAt: s.createdAt, topicsCount: topics.length, sizeBytes: topics.reduce((sum, t) => sum + t.sizeBytes, 0n),
      messagesCount: topics.reduce((sum, t) => sum + t.messagesCount, 0n), name: s.name, options: [], topics,
    };
  }

  #groupDetails(g: FakeGroup, topic: FakeTopic): ConsumerGroupDetails {
    return {
      id: g.id, name: g.name, partitionsCount: topic.partitions.length, membersCount: g.members.size,
      members: [...g.members.values()].map((partitions, i) => ({ id: i, partitions })),
    };
  }

  #rebalance(g: FakeGroup, topic: FakeTopic): void {
    const members = [...g.members.keys()];
    for (const m of members) g.members.set(m, []);
    topic.partitions.forEach((p, i) => {
      if (members.length > 0) (g.members.get(members[i % members.length] as bigint) as number[]).push(p.id);
    });
    g.generation++;
  }

  #newPartition(id: number): FakePartition {
    return { id, createdAt: NOW, batches: [], nextOffset: 0n, offsets: new Map() };
  }

  #partition(topic: FakeTopic, id: number | null, client: bigint, consumerKind: string): FakePartition {
    let partitionId = id;
    if (partitionId === null && consumerKind === 'consumer_group') {
      for (const g of topic.groups.values()) {
        const assigned = g.members.get(client);
        if (assigned !== undefined && assigned.length > 0) partitionId = assigned[0] as number;
      }
    }
    const found = partitionId === null ? undefined : topic.partitions[partitionId];
    if (found === undefined) throw new Reject(ErrorCode.PartitionNotFound);
    return found;
  }

  #execute(code: number, req: unknown, header: RequestHeader, conn: Conn): Uint8Array {
    const codec = commandCodec(code);
    if (codec === null) throw new Reject(ErrorCode.InvalidCommand);
    const r = req as Record<string, unknown> & Record<'streamId' | 'topicId' | 'groupId' | 'userId', Identifier>;
    const encode = codec.encodeResponse as (value: unknown) => Uint8Array;
    const respond = (value: unknown): Uint8Array => encode(value);
    switch (code) {
      case CommandCode.Ping:
      case CommandCode.LogoutUser:
        return new Uint8Array(0);
      case CommandCode.GetClusterMetadata: {
        const metadata = this.metadata?.(this) ?? { name: 'shoal', nodes: [this.node(0)] };
        return respond(metadata);
      }
      case CommandCode.GetStats:
        return respond({
          processId: 42, cpuUsage: 1.5, totalCpuUsage: 3, memoryUsage: 1024n, totalMemory: 4096n, availableMemory: 2048n, runTime: 10n,
          startTime: NOW, readBytes: 0n, writtenBytes: 0n, messagesSizeBytes: 0n, streamsCount: this.streams.size, topicsCount: 0,
          partitionsCount: 0, segmentsCount: 0, messagesCount: 0n, clientsCount: this.clients.size, consumerGroupsCount: 0,
          hostname: 'fake', osName: 'linux', osVersion: '1', kernelVersion: '6', iggyServerVersion: '0.11.0', iggyServerSemver: 11264,
          cacheMetrics: [], threadsCount: 2, freeDiskSpace: 1n, totalDiskSpace: 2n,
        });
      case CommandCode.GetMe:
      case CommandCode.GetClient: {
        const entry = this.clients.get(header.client);
        return respond({ clientId: conn.id, userId: entry?.userId ?? null, transport: 1, address: `127.0.0.1:${conn.socket.remotePort ?? 0}`, consumerGroupsCount: 0, consumerGroups: [] });
      }
      case CommandCode.GetClients:
        return respond([...this.#conns].map((c) => ({ clientId: c.id, userId: 0, transport: 1, address: `127.0.0.1:${c.socket.remotePort ?? 0}`, consumerGroupsCount: 0 })));
      case CommandCode.DescribeOptions:
        return respond((r['scope'] === 1 ? TOPIC_OPTION_CATALOG : []).map((spec) => ({ key: spec.key, kind: spec.kind, defaultValue: new Uint8Array(0), description: spec.description })));
      case CommandCode.GetSnapshot:
      case CommandCode.FlushUnsavedBuffer:
        throw new Reject(ErrorCode.FeatureUnavailable);
      // streams
      case CommandCode.GetStreams:
        return respond([...this.streams.values()].map((s) => this.#streamDetails(s)));
      case CommandCode.GetStream: {
        try {
          return respond(this.#streamDetails(this.stream(r.streamId)));
        } catch {
          return respond(null);
        }
      }
      case CommandCode.CreateStream: {
        const name = r['name'] as string;
        if ([...this.streams.values()].some((s) => s.name === name)) throw new Reject(ErrorCode.StreamNameAlreadyExists);
        const stream: FakeStream = { id: this.#nextStreamId++, name, createdAt: NOW, topics: new Map(), nextTopicId: 0 };
        this.streams.set(stream.id, stream);
        return respond(this.#streamDetails(stream));
      }
      case CommandCode.UpdateStream:
        this.stream(r.streamId).name = r['name'] as string;
        return new Uint8Array(0);
      case CommandCode.DeleteStream:
        this.streams.delete(this.stream(r.streamId).id);
        return new Uint8Array(0);
      case CommandCode.PurgeStream:
        for (const t of this.stream(r.streamId).topics.values()) for (const p of t.partitions) p.batches.length = 0;
        return new Uint8Array(0);
      // topics
      case CommandCode.GetTopics:
        return respond([...this.stream(r.streamId).topics.values()].map((t) => this.#topicInfo(t)));
      case CommandCode.GetTopic: {
        try {
          return respond(this.#topicDetails(this.topic(r.streamId, r.topicId)));
        } catch {
          return respond(null);
        }
      }
      case CommandCode.CreateTopic: {
        const stream = this.stream(r.streamId);
        const name = r['name'] as string;
        if ([...stream.topics.values()].some((t) => t.name === name)) throw new Reject(ErrorCode.TopicNameAlreadyExists);
        const count = r['partitionsCount'] as number;
        const topic: FakeTopic = {
          id: stream.nextTopicId++, name, createdAt: NOW, partitions: Array.from({ length: count }, (_, i) => this.#newPartition(i)),
          groups: new Map(), nextGroupId: 0, options: r['options'] as OptionEntry[], roundRobin: 0,
        };
        stream.topics.set(topic.id, topic);
        return respond(this.#topicDetails(topic));
      }
      case CommandCode.UpdateTopic: {
        const topic = this.topic(r.streamId, r.topicId);
        topic.name = r['name'] as string;
        topic.options = r['options'] as OptionEntry[];
        return new Uint8Array(0);
      }
      case CommandCode.DeleteTopic: {
        const topic = this.topic(r.streamId, r.topicId);
        this.stream(r.streamId).topics.delete(topic.id);
        return new Uint8Array(0);
      }
      case CommandCode.PurgeTopic:
        for (const p of this.topic(r.streamId, r.topicId).partitions) p.batches.length = 0;
        return new Uint8Array(0);
      case CommandCode.CreatePartitions: {
        const topic = this.topic(r.streamId, r.topicId);
        for (let i = 0; i < (r['partitionsCount'] as number); i++) topic.partitions.push(this.#newPartition(topic.partitions.length));
        return new Uint8Array(0);
      }
      case CommandCode.DeletePartitions: {
        const topic = this.topic(r.streamId, r.topicId);
        topic.partitions.splice(Math.max(0, topic.partitions.length - (r['partitionsCount'] as number)));
        return new Uint8Array(0);
      }
      case CommandCode.DeleteSegments:
        this.#partition(this.topic(r.streamId, r.topicId), r['partitionId'] as number, header.client, 'consumer');
        return new Uint8Array(0);
      // messages
      case CommandCode.SendMessages:
        return this.#send(r as unknown as { streamId: Identifier; topicId: Identifier; partitioning: { kind: string; partitionId?: number; key?: Uint8Array }; batch: Uint8Array });
      case CommandCode.PollMessages:
        return this.#poll(r as unknown as PollArgs, header.client);
      case CommandCode.GetConsumerOffset: {
        const consumer = r['consumer'] as { kind: string; id: Identifier };
        const partition = this.#partition(this.topic(r.streamId, r.topicId), r['partitionId'] as number | null, header.client, consumer.kind);
        const stored = partition.offsets.get(consumerKey(consumer));
        if (stored === undefined) return respond(null);
        return respond({ partitionId: partition.id, currentOffset: partition.nextOffset === 0n ? 0n : partition.nextOffset - 1n, storedOffset: stored });
      }
      case CommandCode.StoreConsumerOffset: {
        const consumer = r['consumer'] as { kind: string; id: Identifier };
        const partition = this.#partition(this.topic(r.streamId, r.topicId), r['partitionId'] as number | null, header.client, consumer.kind);
        partition.offsets.set(consumerKey(consumer), r['offset'] as bigint);
        return new Uint8Array(0);
      }
      case CommandCode.DeleteConsumerOffset: {
        const consumer = r['consumer'] as { kind: string; id: Identifier };
        const partition = this.#partition(this.topic(r.streamId, r.topicId), r['partitionId'] as number | null, header.client, consumer.kind);
        if (!partition.offsets.delete(consumerKey(consumer))) throw new Reject(ErrorCode.ConsumerOffsetNotFound);
        return new Uint8Array(0);
      }
      // groups
      case CommandCode.GetConsumerGroups: {
        const topic = this.topic(r.streamId, r.topicId);
        return respond([...topic.groups.values()].map((g) => ({ id: g.id, name: g.name, partitionsCount: topic.partitions.length, membersCount: g.members.size })));
      }
      case CommandCode.GetConsumerGroup: {
        try {
          const topic = this.topic(r.streamId, r.topicId);
          return respond(this.#groupDetails(this.#group(topic, r.groupId), topic));
        } catch {
          return respond(null);
        }
      }
      case CommandCode.CreateConsumerGroup: {
        const topic = this.topic(r.streamId, r.topicId);
        const name = r['name'] as string;
        if ([...topic.groups.values()].some((g) => g.name === name)) throw new Reject(ErrorCode.ConsumerGroupNameAlreadyExists);
        const group: FakeGroup = { id: topic.nextGroupId++, name, members: new Map(), generation: 0n };
        topic.groups.set(group.id, group);
        return respond(this.#groupDetails(group, topic));
      }
      case CommandCode.DeleteConsumerGroup: {
        const topic = this.topic(r.streamId, r.topicId);
        topic.groups.delete(this.#group(topic, r.groupId).id);
        return new Uint8Array(0);
      }
      case CommandCode.JoinConsumerGroup: {
        const topic = this.topic(r.streamId, r.topicId);
        const group = this.#group(topic, r.groupId);
        if (!group.members.has(header.client)) {
          group.members.set(header.client, []);
          this.#rebalance(group, topic);
        }
        return new Uint8Array(0);
      }
      case CommandCode.LeaveConsumerGroup: {
        const topic = this.topic(r.streamId, r.topicId);
        const group = this.#group(topic, r.groupId);
        if (group.members.delete(header.client)) this.#rebalance(group, topic);
        return new Uint8Array(0);
      }
      case CommandCode.SyncConsumerGroup: {
        const topic = this.topic(r.streamId, r.topicId);
        const group = this.#group(topic, r.groupId);
        const assigned = group.members.get(header.client);
        const assignment: ConsumerGroupAssignment | null = assigned === undefined ? null : { generation: group.generation, partitions: assigned };
        return respond(assignment);
      }
      // users and tokens
      case CommandCode.GetUsers:
        return respond([...this.users.values()].map(({ id, createdAt, status, username }) => ({ id, createdAt, status, username, options: [] })));
      case CommandCode.GetUser: {
        try {
          const u = this.#user(r.userId);
          return respond({ id: u.id, createdAt: u.createdAt, status: u.status, username: u.username, options: [], permissions: u.permissions });
        } catch {
          return respond(null);
        }
      }
      case CommandCode.CreateUser: {
        const username = r['username'] as string;
        if ([...this.users.values()].some((u) => u.username === username)) throw new Reject(ErrorCode.UserAlreadyExists);
        const user: FakeUser = { id: this.#nextUserId++, username, password: r['password'] as string, status: r['status'] as number, permissions: r['permissions'] as Permissions | null, createdAt: NOW };
        this.users.set(user.id, user);
        return respond({ id: user.id, createdAt: user.createdAt, status: user.status, username, options: [], permissions: user.permissions });
      }
      case CommandCode.UpdateUser: {
        const user = this.#user(r.userId);
        if (r['username'] !== null) user.username = r['username'] as string;
        if (r['status'] !== null) user.status = r['status'] as number;
        return new Uint8Array(0);
      }
      case CommandCode.DeleteUser:
        this.users.delete(this.#user(r.userId).id);
        return new Uint8Array(0);
      case CommandCode.ChangePassword: {
        const user = this.#user(r.userId);
        if (user.password !== r['currentPassword']) throw new Reject(ErrorCode.InvalidCredentials);
        user.password = r['newPassword'] as string;
        return new Uint8Array(0);
      }
      case CommandCode.UpdatePermissions:
        this.#user(r.userId).permissions = r['permissions'] as Permissions | null;
        return new Uint8Array(0);
      case CommandCode.GetPersonalAccessTokens:
        return respond([...this.tokens.values()].map((t) => ({ name: t.name, expiryAt: t.expiry })));
      case CommandCode.CreatePersonalAccessToken: {
        const name = r['name'] as string;
        if ([...this.tokens.values()].some((t) => t.name === name)) throw new Reject(ErrorCode.PersonalAccessTokenAlreadyExists);
        const token = `tok${this.tokens.size}${name.replace(/[^a-z0-9]/gi, '')}`;
        this.tokens.set(token, { name, userId: this.clients.get(header.client)?.userId ?? 0, expiry: r['expiry'] as bigint });
        return respond({ token });
      }
      case CommandCode.DeletePersonalAccessToken: {
        const name = r['name'] as string;
        const found = [...this.tokens.entries()].find(([, t]) => t.name === name);
        if (found === undefined) throw new Reject(ErrorCode.ResourceNotFound);
        this.tokens.delete(found[0]);
        return new Uint8Array(0);
      }
      default:
        throw new Reject(ErrorCode.FeatureUnavailable);
    }
  }

  #send(req: { streamId: Identifier; topicId: Identifier; partitioning: { kind: string; partitionId?: number; key?: Uint8Array }; batch: Uint8Array }): Uint8Array {
    const topic = this.topic(req.streamId, req.topicId);
    const verdict = validateBatch(req.batch);
    if (!verdict.ok) throw new Reject(ErrorCode.InvalidBatchChecksum);
    let partitionId: number;
    if (req.partitioning.kind === 'partition_id') partitionId = req.partitioning.partitionId as number;
    else if (req.partitioning.kind === 'balanced') partitionId = topic.roundRobin++ % topic.partitions.length;
    else throw new Reject(ErrorCode.FeatureUnavailable);
    const partition = topic.partitions[partitionId];
    if (partition === undefined) throw new Reject(ErrorCode.PartitionNotFound);
    const bytes = new Uint8Array(req.batch);
    const baseOffset = partition.nextOffset;
    const timestamp = NOW + baseOffset;
    const stamped = stampBatch(bytes, { partitionId: BigInt(partitionId), baseOffset, baseTimestamp: timestamp });
    if (!stamped.ok) throw new Reject(ErrorCode.InvalidBatchChecksum);
    partition.batches.push({ baseOffset, count: verdict.value.messageCount, bytes, timestamp });
    partition.nextOffset += BigInt(verdict.value.messageCount);
    return commandCodec(CommandCode.SendMessages)?.encodeResponse({
      confirmations: [{ streamId: this.stream(req.streamId).id, topicId: topic.id, partitionId, baseOffset }],
    }) ?? new Uint8Array(0);
  }

  #poll(req: PollArgs, client: bigint): Uint8Array {
    const topic = this.topic(req.streamId, req.topicId);
    const partition = this.#partition(topic, req.partitionId, client, req.consumer.kind);
    const key = consumerKey(req.consumer);
    let from: bigint;
    switch (req.strategy.kind) {
      case 'offset': from = req.strategy.value; break;
      case 'first': from = 0n; break;
      case 'last': from = partition.nextOffset > BigInt(req.count) ? partition.nextOffset - BigInt(req.count) : 0n; break;
      case 'next': { const stored = partition.offsets.get(key); from = stored === undefined ? 0n : stored + 1n; break; }
      default: from = partition.batches.find((b) => b.timestamp >= req.strategy.value)?.baseOffset ?? partition.nextOffset;
    }
    const parts: Uint8Array[] = [];
    let remaining = req.count;
    let last = -1n;
    for (const batch of partition.batches) {
      if (remaining <= 0) break;
      const end = batch.baseOffset + BigInt(batch.count);
      if (end <= from) continue;
      const start = from > batch.baseOffset ? Number(from - batch.baseOffset) : 0;
      const stop = Math.min(batch.count, start + remaining);
      const slice = start === 0 && stop === batch.count ? batch.bytes : sliceBatch(batch.bytes, start, stop);
      if (slice instanceof Uint8Array) parts.push(slice);
      else if (slice.ok) parts.push(slice.value);
      remaining -= stop - start;
      last = batch.baseOffset + BigInt(stop - 1);
    }
    if (req.autoCommit && last >= 0n) partition.offsets.set(key, last);
    const records = concat(parts);
    const count = parts.reduce((sum, p) => sum + (readBatchHeader(p)?.messageCount ?? 0), 0);
    return commandCodec(CommandCode.PollMessages)?.encodeResponse({
      partitionId: partition.id, currentOffset: partition.nextOffset === 0n ? 0n : partition.nextOffset - 1n, messagesCount: count, batches: records,
    }) ?? new Uint8Array(0);
  }
}

interface PollArgs {
  readonly consumer: { readonly kind: string; readonly id: Identifier };
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionId: number | null;
  readonly strategy: { readonly kind: string; readonly value: bigint };
  readonly count: number;
  readonly autoCommit: boolean;
}

function consumerKey(consumer: { readonly kind: string; readonly id: Identifier }): string {
  return `${consumer.kind}:${consumer.id.kind}:${String(consumer.id.value)}`;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
