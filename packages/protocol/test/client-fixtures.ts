import {
  AckLevel, CommandCode, HeaderKind, type OptionEntry, type Permissions, SHOAL_PROTOCOL_VERSION, numericIdentifier,
  stringIdentifier,
} from '../src/client/index.js';

/**
 * Sample requests and responses for every command of commands.mdx, used by the round-trip tests
 * and as fuzz seeds. Values exercise both identifier kinds, optional fields set and unset, options
 * blocks, permissions trees and multi-element lists.
 */
const te = new TextEncoder();
const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

export const SAMPLE_OPTIONS: readonly OptionEntry[] = [
  { key: 'segment_size', valueKind: HeaderKind.Uint64, value: bytes(0, 0, 0, 8, 0, 0, 0, 0) },
  { key: 'message_expiry', valueKind: HeaderKind.String, value: te.encode('7 days') },
  { key: 'future_option', valueKind: 200, value: te.encode('opaque') },
];

export const SAMPLE_PERMISSIONS: Permissions = {
  global: {
    manageServers: false, readServers: true, manageUsers: false, readUsers: true, manageStreams: true,
    readStreams: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false,
  },
  streams: [
    {
      streamId: 1, manageStream: true, readStream: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false,
      topics: [
        { topicId: 10, manageTopic: true, readTopic: true, pollMessages: false, sendMessages: true },
        { topicId: 20, manageTopic: false, readTopic: true, pollMessages: true, sendMessages: false },
      ],
    },
    { streamId: 2, manageStream: false, readStream: true, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: true, topics: [] },
  ],
};

const s1 = numericIdentifier(1);
const sName = stringIdentifier('orders');
const t1 = numericIdentifier(7);
const tName = stringIdentifier('événements');
const g1 = numericIdentifier(3);

const topicInfo = {
  id: 7, createdAt: 1_700_000_000_123_456n, partitionsCount: 2, messageExpiry: 0n, compressionAlgorithm: 1,
  maxTopicSize: 1_073_741_824n, sizeBytes: 2048n, messagesCount: 20n, name: 'test-topic',
  options: [SAMPLE_OPTIONS[0] as OptionEntry], derivedOptions: [SAMPLE_OPTIONS[1] as OptionEntry],
};
const partitions = [
  { id: 1, createdAt: 1_700_000_000_000_001n, segmentsCount: 1, currentOffset: 9n, sizeBytes: 1024n, messagesCount: 10n },
  { id: 2, createdAt: 1_700_000_000_000_002n, segmentsCount: 3, currentOffset: 0xffff_ffff_ffff_ffffn, sizeBytes: 0n, messagesCount: 0n },
];
const topicDetails = { ...topicInfo, partitions };
const streamInfo = { id: 1, createdAt: 1_700_000_000_000_000n, topicsCount: 0, sizeBytes: 0n, messagesCount: 0n, name: 'test-stream', options: [] };
const streamDetails = { ...streamInfo, topicsCount: 1, topics: [topicInfo] };
const user = { id: 5, createdAt: 1_700_000_000_000_000n, status: 1, username: 'alice', options: [] as OptionEntry[] };
const clientInfo = { clientId: 42, userId: 5, transport: 1, address: '127.0.0.1:53100', consumerGroupsCount: 2 };
const clientDetails = { ...clientInfo, consumerGroups: [{ streamId: 1, topicId: 7, groupId: 3 }, { streamId: 2, topicId: 1, groupId: 9 }] };
const group = { id: 3, partitionsCount: 6, membersCount: 2, name: 'workers' };
const groupDetails = { ...group, members: [{ id: 1, partitions: [1, 3, 5] }, { id: 2, partitions: [] }] };
const batch = new Uint8Array(256 + 60).map((_, i) => (i * 7) & 0xff);
const versionInfo = { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'shoal-sdk', sdkVersion: '0.1.0-edge.1' };
const target = { consumer: { kind: 'consumer' as const, id: s1 }, streamId: s1, topicId: t1, partitionId: 1 };
const groupTarget = { consumer: { kind: 'consumer_group' as const, id: stringIdentifier('workers') }, streamId: sName, topicId: tName, partitionId: null };

export interface CommandSamples {
  readonly requests: readonly unknown[];
  readonly responses: readonly unknown[];
}

export const COMMAND_SAMPLES: ReadonlyMap<number, CommandSamples> = new Map<number, CommandSamples>([
  [CommandCode.Ping, { requests: [{}], responses: [null] }],
  [CommandCode.GetStats, {
    requests: [{}],
    responses: [{
      processId: 1234, cpuUsage: 25.5, totalCpuUsage: 50, memoryUsage: 1_073_741_824n, totalMemory: 8_589_934_592n,
      availableMemory: 4_294_967_296n, runTime: 3600n, startTime: 1_710_000_000_000n, readBytes: 1_000_000n, writtenBytes: 500_000n,
      messagesSizeBytes: 2_000_000n, streamsCount: 3, topicsCount: 10, partitionsCount: 30, segmentsCount: 90, messagesCount: 50_000n,
      clientsCount: 5, consumerGroupsCount: 2, hostname: 'node-1', osName: 'Linux', osVersion: '6.1', kernelVersion: '6.1.0',
      iggyServerVersion: '0.11.0', iggyServerSemver: 11264,
      cacheMetrics: [{ streamId: 1, topicId: 1, partitionId: 0, hits: 1000n, misses: 50n, hitRatio: 0.5 }],
      threadsCount: 16, freeDiskSpace: 107_374_182_400n, totalDiskSpace: 512_110_190_592n,
    }],
  }],
  [CommandCode.GetSnapshot, { requests: [{ compression: 2, types: [1, 3, 100] }, { compression: 6, types: [] }], responses: [bytes(0x50, 0x4b, 3, 4, 0, 0), new Uint8Array(0)] }],
  [CommandCode.GetClusterMetadata, {
    requests: [{}],
    responses: [{ name: 'shoal', nodes: [
      { name: 'node-0', ip: '10.0.0.1', tcpPort: 8090, quicPort: 8080, httpPort: 3000, websocketPort: 8092, role: 1, status: 1 },
      { name: 'node-1', ip: '10.0.0.2', tcpPort: 8090, quicPort: 8080, httpPort: 3000, websocketPort: 8092, role: 2, status: 0 },
    ] }, { name: '', nodes: [] }],
  }],
  [CommandCode.DescribeOptions, {
    requests: [{ scope: 1 }, { scope: 3 }],
    responses: [[
      { key: 'segment_size', kind: HeaderKind.Uint64, defaultValue: bytes(0, 0, 0, 64, 0, 0, 0, 0), description: 'Soft size limit per segment.' },
      { key: 'max_topic_size', kind: HeaderKind.Uint64, defaultValue: new Uint8Array(0), description: '' },
    ], []],
  }],
  [CommandCode.GetMe, { requests: [{}], responses: [clientDetails] }],
  [CommandCode.GetClient, { requests: [{ clientId: 42 }], responses: [clientDetails, { ...clientInfo, userId: null, consumerGroupsCount: 0, consumerGroups: [] }, null] }],
  [CommandCode.GetClients, { requests: [{}], responses: [[clientInfo, { ...clientInfo, clientId: 43, userId: null, address: '' }], []] }],
  [CommandCode.GetUser, { requests: [{ userId: numericIdentifier(5) }, { userId: stringIdentifier('alice') }], responses: [{ ...user, permissions: null }, { ...user, permissions: SAMPLE_PERMISSIONS }, null] }],
  [CommandCode.GetUsers, { requests: [{}], responses: [[user, { ...user, id: 6, status: 2, username: 'bob', options: [SAMPLE_OPTIONS[2] as OptionEntry] }], []] }],
  [CommandCode.CreateUser, {
    requests: [
      { username: 'alice', password: 'secret', status: 1, permissions: SAMPLE_PERMISSIONS, options: [] },
      { username: 'bob', password: '', status: 2, permissions: null, options: [SAMPLE_OPTIONS[2] as OptionEntry] },
    ],
    responses: [{ ...user, permissions: SAMPLE_PERMISSIONS }],
  }],
  [CommandCode.DeleteUser, { requests: [{ userId: numericIdentifier(5) }], responses: [null] }],
  [CommandCode.UpdateUser, {
    requests: [
      { userId: numericIdentifier(5), username: 'alice2', status: 2, options: [] },
      { userId: stringIdentifier('bob'), username: null, status: null, options: SAMPLE_OPTIONS },
    ],
    responses: [null],
  }],
  [CommandCode.UpdatePermissions, { requests: [{ userId: numericIdentifier(5), permissions: SAMPLE_PERMISSIONS }, { userId: stringIdentifier('bob'), permissions: null }], responses: [null] }],
  [CommandCode.ChangePassword, { requests: [{ userId: numericIdentifier(5), currentPassword: 'old', newPassword: 'n3w-pässword' }], responses: [null] }],
  [CommandCode.LoginUser, { requests: [{ username: 'iggy', password: 'iggy', version: '0.9.0', context: '' }], responses: [null] }],
  [CommandCode.LogoutUser, { requests: [{}], responses: [null] }],
  [CommandCode.LoginRegister, {
    requests: [{ versionInfo, username: 'iggy', password: 'iggy', context: '' }, { versionInfo, username: 'ü', password: '', context: 'ctx' }],
    responses: [{ userId: 1, session: 7n, serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: '0.11.0' }],
  }],
  [CommandCode.GetPersonalAccessTokens, { requests: [{}], responses: [[{ name: 'ci', expiryAt: 0n }, { name: 'deploy', expiryAt: 1_800_000_000_000_000n }], []] }],
  [CommandCode.CreatePersonalAccessToken, { requests: [{ name: 'ci', expiry: 0n }, { name: 'forever', expiry: 0xffff_ffff_ffff_ffffn }], responses: [{ token: 'a'.repeat(50) }] }],
  [CommandCode.DeletePersonalAccessToken, { requests: [{ name: 'ci' }], responses: [null] }],
  [CommandCode.LoginWithPersonalAccessToken, { requests: [{ token: 'tok' }], responses: [null] }],
  [CommandCode.LoginRegisterWithPat, {
    requests: [{ versionInfo, token: 'b'.repeat(50), context: '' }, { versionInfo, token: 't', context: 'c' }],
    responses: [{ userId: 2, session: 9n, serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: 'shoal-0.1.0' }],
  }],
  [CommandCode.PollMessages, {
    requests: [
      { ...target, strategy: { kind: 'offset', value: 0n }, count: 10, autoCommit: false },
      { ...groupTarget, strategy: { kind: 'next', value: 0n }, count: 1000, autoCommit: true },
      { ...target, partitionId: null, strategy: { kind: 'timestamp', value: 1_700_000_000_000_000n }, count: 1, autoCommit: false },
    ],
    responses: [{ partitionId: 1, currentOffset: 99n, messagesCount: 2, batches: batch }, { partitionId: 1, currentOffset: 0n, messagesCount: 0, batches: new Uint8Array(0) }],
  }],
  [CommandCode.SendMessages, {
    requests: [
      { streamId: s1, topicId: t1, partitioning: { kind: 'partition_id', partitionId: 1 }, messagesCount: 3, batch },
      { streamId: sName, topicId: tName, partitioning: { kind: 'messages_key', key: te.encode('user-42') }, messagesCount: 1, batch: batch.subarray(0, 256) },
      { streamId: s1, topicId: t1, partitioning: { kind: 'balanced' }, messagesCount: 0, batch: batch.subarray(0, 256) },
    ],
    responses: [{ confirmations: [{ streamId: 1, topicId: 7, partitionId: 1, baseOffset: 42n }] }, { confirmations: [] }],
  }],
  [CommandCode.FlushUnsavedBuffer, { requests: [{ streamId: s1, topicId: t1, partitionId: 1, fsync: true }, { streamId: sName, topicId: tName, partitionId: 0, fsync: false }], responses: [null] }],
  [CommandCode.GetConsumerOffset, {
    requests: [target, groupTarget],
    responses: [{ partitionId: 1, currentOffset: 9n, storedOffset: 2n }, null],
  }],
  [CommandCode.StoreConsumerOffset, { requests: [{ ...target, offset: 2n, ack: AckLevel.Quorum }, { ...groupTarget, offset: 0n, ack: AckLevel.NoAck }], responses: [null] }],
  [CommandCode.DeleteConsumerOffset, { requests: [{ ...target, ack: AckLevel.Quorum }, { ...groupTarget, ack: AckLevel.NoAck }], responses: [null] }],
  [CommandCode.GetStream, { requests: [{ streamId: s1 }, { streamId: sName }], responses: [streamDetails, { ...streamInfo, topics: [] }, null] }],
  [CommandCode.GetStreams, { requests: [{}], responses: [[streamInfo, { ...streamInfo, id: 2, name: 's2', topicsCount: 3, options: SAMPLE_OPTIONS }], []] }],
  [CommandCode.CreateStream, { requests: [{ name: 'test-stream', options: [] }, { name: 'opts', options: SAMPLE_OPTIONS }], responses: [{ ...streamInfo, topics: [] }, streamDetails] }],
  [CommandCode.DeleteStream, { requests: [{ streamId: s1 }], responses: [null] }],
  [CommandCode.UpdateStream, { requests: [{ streamId: sName, name: 'renamed', options: [] }, { streamId: s1, name: 'x', options: SAMPLE_OPTIONS }], responses: [null] }],
  [CommandCode.PurgeStream, { requests: [{ streamId: s1 }], responses: [null] }],
  [CommandCode.GetTopic, { requests: [{ streamId: s1, topicId: t1 }, { streamId: sName, topicId: tName }], responses: [topicDetails, { ...topicInfo, partitionsCount: 0, partitions: [] }, null] }],
  [CommandCode.GetTopics, { requests: [{ streamId: s1 }], responses: [[topicInfo, { ...topicInfo, id: 8, name: 't8', options: [], derivedOptions: [] }], []] }],
  [CommandCode.CreateTopic, {
    requests: [{ streamId: s1, partitionsCount: 3, name: 'test-topic', options: [] }, { streamId: sName, partitionsCount: 0, name: 't', options: SAMPLE_OPTIONS }],
    responses: [topicDetails],
  }],
  [CommandCode.DeleteTopic, { requests: [{ streamId: s1, topicId: t1 }], responses: [null] }],
  [CommandCode.UpdateTopic, { requests: [{ streamId: s1, topicId: tName, name: 'renamed', options: [SAMPLE_OPTIONS[1] as OptionEntry] }], responses: [null] }],
  [CommandCode.PurgeTopic, { requests: [{ streamId: sName, topicId: t1 }], responses: [null] }],
  [CommandCode.CreatePartitions, { requests: [{ streamId: s1, topicId: t1, partitionsCount: 4 }], responses: [null] }],
  [CommandCode.DeletePartitions, { requests: [{ streamId: sName, topicId: tName, partitionsCount: 1 }], responses: [null] }],
  [CommandCode.DeleteSegments, { requests: [{ streamId: s1, topicId: t1, partitionId: 2, segmentsCount: 5 }], responses: [null] }],
  [CommandCode.GetConsumerGroup, { requests: [{ streamId: s1, topicId: t1, groupId: g1 }], responses: [groupDetails, null] }],
  [CommandCode.GetConsumerGroups, { requests: [{ streamId: s1, topicId: tName }], responses: [[group, { ...group, id: 4, name: 'g4', membersCount: 0 }], []] }],
  [CommandCode.CreateConsumerGroup, { requests: [{ streamId: s1, topicId: t1, name: 'workers' }], responses: [{ ...group, membersCount: 0, members: [] }] }],
  [CommandCode.DeleteConsumerGroup, { requests: [{ streamId: s1, topicId: t1, groupId: stringIdentifier('workers') }], responses: [null] }],
  [CommandCode.JoinConsumerGroup, { requests: [{ streamId: s1, topicId: t1, groupId: g1 }], responses: [null] }],
  [CommandCode.LeaveConsumerGroup, { requests: [{ streamId: s1, topicId: t1, groupId: g1 }], responses: [null] }],
  [CommandCode.SyncConsumerGroup, { requests: [{ streamId: s1, topicId: t1, groupId: g1 }], responses: [{ generation: 12n, partitions: [1, 2, 5] }, { generation: 1n, partitions: [] }, null] }],
]);
