/**
 * A golden test per client reply: the expected bytes are built here field by field, with a
 * builder of its own, from the layout the reference server encodes (apache/iggy
 * core/binary_protocol/src/responses/**, and the server's handlers where the crate is silent:
 * docs/wire-client-commands.md "Replies: the audit"). Shoal's encoder must produce exactly those
 * bytes and its decoder must read them back to the same value.
 */
import { describe, expect, it } from 'vitest';
import {
  type AnyCommandCodec, CLIENT_COMMANDS, COMMANDS, CommandCode, HeaderKind, type Permissions, encodePermissions,
} from '../src/client/index.js';

/** Little-endian bytes, written without the package's own writer. */
class Le {
  readonly #bytes: number[] = [];
  u8(v: number): this {
    this.#bytes.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    return this.u8(v).u8(v >>> 8);
  }
  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.u8(Math.floor(v / 2 ** (8 * i)));
    return this;
  }
  u64(v: bigint): this {
    for (let i = 0n; i < 8n; i++) this.u8(Number((v >> (8n * i)) & 0xffn));
    return this;
  }
  f32(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    return this.raw(b);
  }
  raw(b: Uint8Array): this {
    for (const x of b) this.#bytes.push(x);
    return this;
  }
  /** WireName: `[len: u8][utf8]`. */
  name(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u8(b.length).raw(b);
  }
  /** `[len: u32][utf8]`. */
  long(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).raw(b);
  }
  get hex(): string {
    return Buffer.from(this.#bytes).toString('hex');
  }
}

const le = (): Le => new Le();
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const codec = (code: number): AnyCommandCodec => {
  const c = CLIENT_COMMANDS.get(code);
  if (c === undefined) throw new Error(`no codec for ${code}`);
  return c;
};

function golden(code: number, value: unknown, expected: Le): void {
  const c = codec(code);
  expect(hex(c.encodeResponse(value)), `${c.info.name} encodes the reference layout`).toBe(expected.hex);
  expect(c.decodeResponse(new Uint8Array(Buffer.from(expected.hex, 'hex'))), `${c.info.name} decodes the reference layout`).toEqual({ ok: true, value });
}

/** One options entry as the options block encodes it: `[key_kind][key_len: u32][key][value_kind][value_len: u32][value]`. */
function optionBytes(key: string, valueKind: number, value: Uint8Array): Le {
  const k = new TextEncoder().encode(key);
  return le().u8(HeaderKind.String).u32(k.length).raw(k).u8(valueKind).u32(value.length).raw(value);
}

const T0 = 1_700_000_000_000_000n;
const OPTION = { key: 'segment_size', valueKind: HeaderKind.Uint64, value: Uint8Array.of(0, 0, 0, 8, 0, 0, 0, 0) };
const optionBlock = optionBytes(OPTION.key, OPTION.valueKind, OPTION.value);
const DERIVED = { key: 'enforce_fsync', valueKind: HeaderKind.Bool, value: Uint8Array.of(0) };
const derivedBlock = optionBytes(DERIVED.key, DERIVED.valueKind, DERIVED.value);
const blockLength = (b: Le): number => b.hex.length / 2;

const streamInfo = { id: 3, createdAt: T0, topicsCount: 1, sizeBytes: 2048n, messagesCount: 20n, name: 'orders', options: [] };
const streamBytes = (s: Le, info: typeof streamInfo): Le => s.u32(info.id).u64(info.createdAt).u32(info.topicsCount).u64(info.sizeBytes).u64(info.messagesCount).name(info.name).u32(0);

const topicInfo = {
  id: 1, createdAt: T0 + 1n, partitionsCount: 2, messageExpiry: 0n, compressionAlgorithm: 1, maxTopicSize: 0n, sizeBytes: 2048n,
  messagesCount: 20n, name: 'created', options: [OPTION], derivedOptions: [DERIVED],
};
const topicBytes = (t: Le): Le => t.u32(1).u64(T0 + 1n).u32(2).u64(0n).u8(1).u64(0n).u64(2048n).u64(20n).name('created')
  .u32(blockLength(optionBlock)).raw(Buffer.from(optionBlock.hex, 'hex')).u32(blockLength(derivedBlock)).raw(Buffer.from(derivedBlock.hex, 'hex'));
const partitions = [
  { id: 0, createdAt: T0 + 2n, segmentsCount: 1, currentOffset: 9n, sizeBytes: 1024n, messagesCount: 10n },
  { id: 1, createdAt: T0 + 3n, segmentsCount: 1, currentOffset: 9n, sizeBytes: 1024n, messagesCount: 10n },
];
const partitionBytes = (p: Le, x: (typeof partitions)[number]): Le => p.u32(x.id).u64(x.createdAt).u32(x.segmentsCount).u64(x.currentOffset).u64(x.sizeBytes).u64(x.messagesCount);

const PERMISSIONS: Permissions = {
  global: { manageServers: false, readServers: true, manageUsers: false, readUsers: true, manageStreams: false, readStreams: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false },
  streams: [
    { streamId: 3, manageStream: false, readStream: true, manageTopics: true, readTopics: true, pollMessages: false, sendMessages: true, topics: [
      { topicId: 1, manageTopic: true, readTopic: true, pollMessages: false, sendMessages: true },
      { topicId: 2, manageTopic: false, readTopic: true, pollMessages: true, sendMessages: false },
    ] },
    { streamId: 4, manageStream: true, readStream: true, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [] },
  ],
};
/** primitives/permissions.rs: 10 globals, has_streams, per stream [id][6 flags][has_topics] topics [id][4 flags][has_next_topic], [has_next_stream]. */
const permissionBytes = le()
  .u8(0).u8(1).u8(0).u8(1).u8(0).u8(1).u8(0).u8(1).u8(1).u8(0).u8(1)
  .u32(3).u8(0).u8(1).u8(1).u8(1).u8(0).u8(1).u8(1)
  .u32(1).u8(1).u8(1).u8(0).u8(1).u8(1)
  .u32(2).u8(0).u8(1).u8(1).u8(0).u8(0)
  .u8(1)
  .u32(4).u8(1).u8(1).u8(0).u8(0).u8(0).u8(0).u8(0)
  .u8(0);

const userInfo = { id: 1, createdAt: T0, status: 1, username: 'alice', options: [] };
const userBytes = (u: Le, info: { id: number; createdAt: bigint; status: number; username: string }): Le => u.u32(info.id).u64(info.createdAt).u8(info.status).name(info.username).u32(0);

describe('client replies, byte for byte as the reference encodes them', () => {
  it('permissions (primitives/permissions.rs)', () => {
    expect(hex(encodePermissions(PERMISSIONS))).toBe(permissionBytes.hex);
  });

  it('LOGIN_REGISTER / LOGIN_REGISTER_WITH_PAT: [user_id u32][session u64][server_protocol_version u32][server_version Name] (users/login_register.rs)', () => {
    const reply = { userId: 1, session: 7n, serverProtocolVersion: 11264, serverVersion: '0.11.0' };
    for (const code of [CommandCode.LoginRegister, CommandCode.LoginRegisterWithPat]) golden(code, reply, le().u32(1).u64(7n).u32(11264).name('0.11.0'));
  });

  it('GET_STREAM / CREATE_STREAM: StreamResponse then TopicHeader × topics_count; GET_STREAMS: StreamResponse* (streams/*.rs)', () => {
    const details = { ...streamInfo, topics: [topicInfo] };
    for (const code of [CommandCode.GetStream, CommandCode.CreateStream]) golden(code, details, topicBytes(streamBytes(le(), streamInfo)));
    const bare = { ...streamInfo, topicsCount: 0, topics: [] };
    golden(CommandCode.CreateStream, bare, streamBytes(le(), { ...streamInfo, topicsCount: 0 }));
    const second = { ...streamInfo, id: 4, name: 's2', topicsCount: 0 };
    golden(CommandCode.GetStreams, [{ ...streamInfo, topicsCount: 0 }, second], streamBytes(streamBytes(le(), { ...streamInfo, topicsCount: 0 }), second));
    golden(CommandCode.GetStreams, [], le());
    golden(CommandCode.GetStream, null, le());
  });

  it('GET_TOPIC / CREATE_TOPIC: TopicHeader then PartitionResponse (40 bytes) × partitions_count; GET_TOPICS: [count u32] TopicHeader* (topics/*.rs)', () => {
    const details = { ...topicInfo, partitions };
    const expected = partitionBytes(partitionBytes(topicBytes(le()), partitions[0] as (typeof partitions)[number]), partitions[1] as (typeof partitions)[number]);
    for (const code of [CommandCode.GetTopic, CommandCode.CreateTopic]) golden(code, details, expected);
    golden(CommandCode.GetTopics, [topicInfo], topicBytes(le().u32(1)));
    golden(CommandCode.GetTopics, [], le().u32(0));
    golden(CommandCode.GetTopic, null, le());
  });

  it('GET_USER / CREATE_USER: UserResponse (options u32-prefixed) then u32 0 or [01][len u32][permissions]; GET_USERS: UserResponse* (users/*.rs)', () => {
    for (const code of [CommandCode.GetUser, CommandCode.CreateUser]) {
      golden(code, { ...userInfo, permissions: null }, userBytes(le(), userInfo).u32(0));
      golden(code, { ...userInfo, permissions: PERMISSIONS }, userBytes(le(), userInfo).u8(1).u32(blockLength(permissionBytes)).raw(Buffer.from(permissionBytes.hex, 'hex')));
    }
    const bob = { id: 2, createdAt: T0 + 5n, status: 2, username: 'bob', options: [] };
    golden(CommandCode.GetUsers, [userInfo, bob], userBytes(userBytes(le(), userInfo), bob));
    golden(CommandCode.GetUser, null, le());
  });

  it('GET_CLIENT / GET_ME: ClientResponse then {stream, topic, group u32} × consumer_groups_count; GET_CLIENTS: ClientResponse* (clients/*.rs)', () => {
    const info = { clientId: 42, userId: 0, transport: 1, address: '127.0.0.1:53100', consumerGroupsCount: 1 };
    const clientBytes = (b: Le, c: typeof info): Le => b.u32(c.clientId).u32(c.userId).u8(c.transport).long(c.address).u32(c.consumerGroupsCount);
    const details = { ...info, consumerGroups: [{ streamId: 3, topicId: 1, groupId: 0 }] };
    for (const code of [CommandCode.GetClient, CommandCode.GetMe]) golden(code, details, clientBytes(le(), info).u32(3).u32(1).u32(0));
    const anonymous = { clientId: 43, userId: null, transport: 1, address: '127.0.0.1:53101', consumerGroupsCount: 0 };
    golden(CommandCode.GetClients, [info, anonymous], clientBytes(le(), info).u32(43).u32(0xffff_ffff).u8(1).long('127.0.0.1:53101').u32(0));
    golden(CommandCode.GetClient, null, le());
  });

  it('GET_CONSUMER_GROUP / CREATE_CONSUMER_GROUP: ConsumerGroupResponse then members; GET_CONSUMER_GROUPS: ConsumerGroupResponse*; SYNC_CONSUMER_GROUP (consumer_groups/*.rs)', () => {
    const group = { id: 0, partitionsCount: 3, membersCount: 2, name: 'billing' };
    const details = { ...group, members: [{ id: 1, partitions: [0, 2] }, { id: 2, partitions: [1] }] };
    const expected = le().u32(0).u32(3).u32(2).name('billing').u32(1).u32(2).u32(0).u32(2).u32(2).u32(1).u32(1);
    golden(CommandCode.GetConsumerGroup, details, expected);
    golden(CommandCode.CreateConsumerGroup, { ...group, membersCount: 0, members: [] }, le().u32(0).u32(3).u32(0).name('billing'));
    golden(CommandCode.GetConsumerGroups, [group], le().u32(0).u32(3).u32(2).name('billing'));
    golden(CommandCode.GetConsumerGroups, [], le());
    golden(CommandCode.SyncConsumerGroup, { generation: 12n, partitions: [1, 2] }, le().u64(12n).u32(2).u32(1).u32(2));
    golden(CommandCode.SyncConsumerGroup, null, le());
  });

  it('GET_CONSUMER_OFFSET: [partition_id u32][current_offset u64][stored_offset u64], empty when none (consumer_offsets/get_consumer_offset.rs)', () => {
    golden(CommandCode.GetConsumerOffset, { partitionId: 2, currentOffset: 42n, storedOffset: 41n }, le().u32(2).u64(42n).u64(41n));
    golden(CommandCode.GetConsumerOffset, null, le());
  });

  it('POLL_MESSAGES: [partition_id u32][current_offset u64][messages_count u32][batch records] (messages/poll_messages.rs); SEND_MESSAGES: [count u32] 20-byte confirmations (send_messages.rs)', () => {
    const records = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    golden(CommandCode.PollMessages, { partitionId: 2, currentOffset: 42n, messagesCount: 3, batches: records }, le().u32(2).u64(42n).u32(3).raw(records));
    golden(CommandCode.SendMessages, { confirmations: [{ streamId: 3, topicId: 1, partitionId: 2, baseOffset: 40n }] }, le().u32(1).u32(3).u32(1).u32(2).u64(40n));
    golden(CommandCode.SendMessages, { confirmations: [] }, le().u32(0));
  });

  it('CREATE_PERSONAL_ACCESS_TOKEN: [token Name]; GET_PERSONAL_ACCESS_TOKENS: {[name Name][expiry_at u64, 0 never]}* (personal_access_tokens/*.rs)', () => {
    golden(CommandCode.CreatePersonalAccessToken, { token: 'tok-123' }, le().name('tok-123'));
    golden(CommandCode.GetPersonalAccessTokens, [{ name: 'ci', expiryAt: 0n }, { name: 'deploy', expiryAt: T0 }], le().name('ci').u64(0n).name('deploy').u64(T0));
    golden(CommandCode.GetPersonalAccessTokens, [], le());
  });

  it('GET_STATS: 108 numeric bytes, five u32-prefixed strings, semver u32, cache metrics, threads, disk (system/get_stats.rs)', () => {
    const stats = {
      processId: 4242, cpuUsage: 12.5, totalCpuUsage: 20.25, memoryUsage: 1n << 28n, totalMemory: 1n << 34n, availableMemory: 1n << 33n,
      runTime: 5_000_000n, startTime: T0, readBytes: 1000n, writtenBytes: 2000n, messagesSizeBytes: 3000n, streamsCount: 2, topicsCount: 3,
      partitionsCount: 4, segmentsCount: 5, messagesCount: 60n, clientsCount: 7, consumerGroupsCount: 8, hostname: 'h', osName: 'Linux',
      osVersion: '6.1', kernelVersion: '#1', iggyServerVersion: '0.11.0', iggyServerSemver: 11000,
      cacheMetrics: [{ streamId: 3, topicId: 1, partitionId: 0, hits: 9n, misses: 1n, hitRatio: 0.5 }], threadsCount: 4, freeDiskSpace: 1n << 30n, totalDiskSpace: 1n << 31n,
    };
    const expected = le().u32(4242).f32(12.5).f32(20.25).u64(1n << 28n).u64(1n << 34n).u64(1n << 33n).u64(5_000_000n).u64(T0).u64(1000n).u64(2000n)
      .u64(3000n).u32(2).u32(3).u32(4).u32(5).u64(60n).u32(7).u32(8).long('h').long('Linux').long('6.1').long('#1').long('0.11.0').u32(11000)
      .u32(1).u32(3).u32(1).u32(0).u64(9n).u64(1n).f32(0.5).u32(4).u64(1n << 30n).u64(1n << 31n);
    golden(CommandCode.GetStats, stats, expected);
  });

  it('GET_CLUSTER_METADATA: [name u32 str][nodes u32] nodes [name u32 str][ip u32 str][tcp quic http websocket u16][role u8][status u8] (system/get_cluster_metadata.rs)', () => {
    const meta = { name: 'single-node', nodes: [{ name: 'iggy-node', ip: '127.0.0.1', tcpPort: 8090, quicPort: 0, httpPort: 3000, websocketPort: 0, role: 0, status: 0 }] };
    golden(CommandCode.GetClusterMetadata, meta, le().long('single-node').u32(1).long('iggy-node').long('127.0.0.1').u16(8090).u16(0).u16(3000).u16(0).u8(0).u8(0));
  });

  it('DESCRIBE_OPTIONS: [count u32] {[key Name][kind u8][default u32 bytes][description u32 str]} (system/describe_options.rs)', () => {
    const entries = [{ key: 'enforce_fsync', kind: HeaderKind.Bool, defaultValue: Uint8Array.of(0), description: 'fsync every write' }];
    golden(CommandCode.DescribeOptions, entries, le().u32(1).name('enforce_fsync').u8(HeaderKind.Bool).u32(1).u8(0).long('fsync every write'));
    golden(CommandCode.DescribeOptions, [], le().u32(0));
  });

  it('GET_SNAPSHOT: the archive, raw (system/get_snapshot.rs)', () => {
    golden(CommandCode.GetSnapshot, Uint8Array.of(0x50, 0x4b, 3, 4), le().raw(Uint8Array.of(0x50, 0x4b, 3, 4)));
  });

  it('every other command answers an empty payload (responses/*: EmptyResponse)', () => {
    const withBody = new Set<number>([
      CommandCode.LoginRegister, CommandCode.LoginRegisterWithPat, CommandCode.GetStream, CommandCode.CreateStream, CommandCode.GetStreams,
      CommandCode.GetTopic, CommandCode.CreateTopic, CommandCode.GetTopics, CommandCode.GetUser, CommandCode.CreateUser, CommandCode.GetUsers,
      CommandCode.GetClient, CommandCode.GetMe, CommandCode.GetClients, CommandCode.GetConsumerGroup, CommandCode.CreateConsumerGroup,
      CommandCode.GetConsumerGroups, CommandCode.SyncConsumerGroup, CommandCode.GetConsumerOffset, CommandCode.PollMessages, CommandCode.SendMessages,
      CommandCode.CreatePersonalAccessToken, CommandCode.GetPersonalAccessTokens, CommandCode.GetStats, CommandCode.GetClusterMetadata,
      CommandCode.DescribeOptions, CommandCode.GetSnapshot,
    ]);
    for (const info of COMMANDS) {
      const c = codec(info.code);
      if (withBody.has(info.code)) {
        expect(c.hasResponseBody, info.name).toBe(true);
        continue;
      }
      expect(c.hasResponseBody, info.name).toBe(false);
      expect(hex(c.encodeResponse(null)), info.name).toBe('');
    }
  });
});
