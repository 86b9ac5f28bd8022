import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configPathFrom, formatConfigErrors, redactConfig, REDACTED, renderConfig, type ShoalConfig } from '../src/index.js';
import { GROUP_COMMIT_BYTES_MAX, GROUP_COMMIT_REQUESTS_MAX, GROUP_COMMIT_WAIT_DEPTH, partitionCoreConfig } from '@shoal/replica';
import { partitionConsensusConfig } from '../src/engine/consensus-config.js';
import {
  CLUSTER_FILE, CORES, OTHER_SECRET, SECRET, cluster, errorsOf, expectError, load, loadOk, node, rosterFile,
} from './config-fixtures.js';

const SAMPLE = readFileSync(new URL('../../../config/shoal.toml', import.meta.url), 'utf8');

describe('built-in defaults (no file, no env)', () => {
  it('boot a single node on loopback', () => {
    const { config, warnings } = loadOk();
    expect(warnings).toEqual([]);
    expect(config.tcp).toMatchObject({ enabled: true, address: '127.0.0.1:8090' });
    expect(config.http).toMatchObject({ enabled: true, address: '127.0.0.1:3000', metrics: { enabled: true, endpoint: '/metrics' } });
    expect(config.system.path).toBe('local_data');
    expect(config.system.stream.path).toBe('streams');
    expect(config.system.topic.path).toBe('topics');
    expect(config.system.partition.path).toBe('partitions');
    expect(config.root).toEqual({ username: 'iggy', password: null, fromDefaultFlag: false });
    expect(config.cluster.enabled).toBe(false);
    expect(config.cluster.nodes).toEqual([]);
    expect(config.node).toEqual({
      replicaId: 0,
      replicaCount: 1,
      name: 'shoal',
      listeners: { tcp: { host: '127.0.0.1', port: 8090 }, http: { host: '127.0.0.1', port: 3000 }, tcpReplica: null },
    });
    expect(config.boot).toEqual({ replicaId: null, fresh: false, configPath: null });
  });

  it('use the reference defaults for every replica-relevant key (replication-semantics §11)', () => {
    const { config } = loadOk();
    expect(config.cluster).toMatchObject({
      name: 'iggy-cluster',
      heartbeatTimeoutMs: 5_000,
      commitBroadcastIntervalMs: 500,
      prepareRetransmitIntervalMs: 250,
      viewChangeRetransmitIntervalMs: 500,
      viewChangeStatusTimeoutMs: 5_000,
      requestStartViewRetransmitIntervalMs: 1_000,
      viewProbeAttemptsMax: 5,
      repairRetryIntervalMs: 1_000,
      repairChunkMax: 128,
      superblockWedgedFatalTimeoutMs: 120_000,
      auth: { enabled: false, sharedSecret: '', previousSharedSecret: '' },
      tls: { enabled: false, selfSigned: false, certFile: '', keyFile: '', caFile: '' },
      coordinator: { skipShardZeroForReplicas: true, skipShardZeroForClients: false },
    });
    expect(config.messageBus).toEqual({
      maxBatch: 256, maxMessageSizeBytes: 64 * 2 ** 20, peerQueueCapacity: 256, reconnectPeriodMs: 5_000,
      closePeerTimeoutMs: 2_000, closeGraceMs: 2_000, handshakeGraceMs: 10_000,
    });
    expect(config.metadata).toEqual({ prepareQueueDepth: 32, requestQueueDepth: 64, journalSlots: 1024, clientsTableMax: 8192 });
    expect(config.partition).toEqual({
      prepareQueueDepth: 32, requestQueueDepth: 64, groupCommitRequestsMax: 64, groupCommitBytesMax: 2 ** 20, groupCommitWaitDepth: 4, asyncFrontier: true, evictedRingCapacity: 4096, evictedRingBytesMax: 16 * 2 ** 20,
      transferServedCacheBytesMax: 2176 * 2 ** 20, transferArtifactBytesMax: 1088 * 2 ** 20, transferServingConcurrency: 2,
    });
    expect(config.system.sharding).toMatchObject({
      inboxCapacity: 1024, replyInboxCapacity: 1024, shutdownDrainTimeoutMs: 10_000, shutdownPollIntervalMs: 50,
      shutdownJoinTimeoutMs: 30_000, reconcilePeriodicIntervalMs: 1_000,
    });
    expect(config.heartbeat).toEqual({ enabled: true, intervalMs: 30_000, staleAfterMs: 36_000 });
    expect(config.personalAccessToken).toEqual({ maxTokensPerUser: 100, cleaner: { enabled: true, intervalMs: 60_000 } });
    expect(config.consumerGroup).toEqual({ rebalancingTimeoutMs: 30_000 });
    expect(config.system.logging).toMatchObject({ level: 'info', defaultLevel: 'info', directives: [] });
  });

  it('are the group commit defaults the simulator runs (replica partitionCoreConfig)', () => {
    const { config } = loadOk();
    const core = partitionConsensusConfig(config);
    expect([config.partition.groupCommitRequestsMax, config.partition.groupCommitBytesMax, config.partition.groupCommitWaitDepth])
      .toEqual([GROUP_COMMIT_REQUESTS_MAX, GROUP_COMMIT_BYTES_MAX, GROUP_COMMIT_WAIT_DEPTH]);
    expect(core).toMatchObject(partitionCoreConfig({ prepareQueueDepth: config.partition.prepareQueueDepth }));
  });

  it('start one shard per injected core', () => {
    expect(loadOk().config.system.sharding.shardCount).toBe(CORES);
    expect(loadOk({ availableParallelism: 3 }).config.system.sharding.shardCount).toBe(3);
    expect(loadOk({ availableParallelism: 1000 }).config.system.sharding.shardCount).toBe(256);
  });

  it('are plain, frozen, structured-clone safe data', () => {
    const { config } = loadOk(cluster({}, 1));
    const clone = structuredClone(config);
    expect(isDeepStrictEqual(clone, config)).toBe(true);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.cluster.nodes[0]?.ports)).toBe(true);
    expect(() => {
      (config.tcp as { address: string }).address = 'x';
    }).toThrow(TypeError);
  });
});

describe('shard count', () => {
  const sharding = (toml: string): ShoalConfig['system']['sharding'] => loadOk({ file: `[system.sharding]\n${toml}` }).config.system.sharding;

  it('reads `shards` and every `cpu_allocation` form', () => {
    expect(sharding('shards = 2').shardCount).toBe(2);
    expect(sharding('cpu_allocation = "all"').shardCount).toBe(CORES);
    expect(sharding('cpu_allocation = 3').shardCount).toBe(3);
    expect(sharding('cpu_allocation = "3"').shardCount).toBe(3);
    expect(sharding('cpu_allocation = "1..3"').shardCount).toBe(2);
  });

  it('reads "numa:auto" as "all", with a warning', () => {
    const result = loadOk({ file: '[system.sharding]\ncpu_allocation = "numa:auto"' });
    expect(result.config.system.sharding.shardCount).toBe(CORES);
    expect(result.warnings.join('\n')).toContain('numa:auto');
  });

  it('warns about pin_cores and about more shards than cores', () => {
    const result = loadOk({ file: '[system.sharding]\npin_cores = true\ncpu_allocation = "0..8"' });
    expect(result.config.system.sharding.shardCount).toBe(8);
    expect(result.warnings.join('\n')).toContain('pin_cores');
    expect(result.warnings.join('\n')).toContain('8 shards on 4 available cores');
  });

  it('refuses bad allocations', () => {
    expectError({ file: '[system.sharding]\nshards = 2\ncpu_allocation = "all"' }, 'system.sharding.shards', 'not both');
    expectError({ file: '[system.sharding]\ncpu_allocation = "numa:nodes=0,1;cores=4"' }, 'system.sharding.cpu_allocation', 'not supported');
    expectError({ file: '[system.sharding]\ncpu_allocation = "8..5"' }, 'system.sharding.cpu_allocation', 'between 1 and 256', '= -3');
    expectError({ file: '[system.sharding]\ncpu_allocation = "5..5"' }, 'system.sharding.cpu_allocation', 'between 1 and 256');
    expectError({ file: '[system.sharding]\ncpu_allocation = 0' }, 'system.sharding.cpu_allocation', 'between 1 and 256');
    expectError({ file: '[system.sharding]\ncpu_allocation = "most"' }, 'system.sharding.cpu_allocation', 'expected "all"');
    expectError({ file: '[system.sharding]\nshards = 0' }, 'system.sharding.shards', 'between 1 and 256');
  });
});

describe('the file', () => {
  it('is merged over the defaults key by key', () => {
    const { config } = loadOk({ file: '[system]\npath = "/var/lib/shoal"\n\n[tcp]\naddress = "0.0.0.0:7000"\n' });
    expect(config.system.path).toBe('/var/lib/shoal');
    expect(config.system.stream.path).toBe('streams');
    expect(config.tcp.address).toBe('0.0.0.0:7000');
    expect(config.tcp.enabled).toBe(true);
    expect(config.node.listeners.tcp).toEqual({ host: '0.0.0.0', port: 7000 });
  });

  it('accepts IPv6 and ephemeral-port listeners', () => {
    const { config } = loadOk({ file: '[tcp]\naddress = "[::1]:0"\n[http]\nenabled = false\n' });
    expect(config.node.listeners).toEqual({ tcp: { host: '::1', port: 0 }, http: null, tcpReplica: null });
  });

  it('reports a TOML syntax error with its line and nothing else', () => {
    const errors = errorsOf({ file: '[tcp]\naddress = \n', env: { IGGY_CLUSTER_ENABLED: 'true' } });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.kind).toBe('syntax');
    expect(errors[0]?.message).toContain('line 2');
  });

  it('refuses prototype keys', () => {
    expect(errorsOf({ file: '[tcp]\n__proto__ = 1\n' })[0]?.kind).toBe('syntax');
  });
});

describe('unknown keys', () => {
  it('refuse boot with the key path', () => {
    const error = expectError({ file: '[tcp]\naddres = "0.0.0.0:1"\n' }, 'tcp.addres', 'unknown key', 'did you mean tcp.address?');
    expect(error.kind).toBe('unknown_key');
    expectError({ file: '[cluster]\nheartbeat_timeuot = "5s"\n' }, 'cluster.heartbeat_timeuot', 'did you mean cluster.heartbeat_timeout?');
    expectError({ file: 'verbose = true\n' }, 'verbose', 'unknown key');
    expectError({ file: '[storage]\npath = "x"\n' }, 'storage', 'unknown key');
  });

  it('cannot be smuggled in as quoted dotted keys', () => {
    expectError({ file: '"tcp.address" = "10.0.0.1:1"\n' }, '"tcp.address"', 'quoted keys');
  });

  it('are found inside array items and inline tables', () => {
    const file = rosterFile([node(0, 'zone = "a"'), node(1, '', '{ tcp = 8091, http = 3001, tcp_replica = 9091, udp = 1 }')]);
    expectError(cluster({}, 0, file), 'cluster.nodes[0].zone', 'unknown key');
    expectError(cluster({}, 0, file), 'cluster.nodes[1].ports.udp', 'unknown key');
  });

  it('name the reason for sections the reference removed; its live sections are judged (config-reference.test.ts)', () => {
    expectError({ file: '[message_saver]\nenabled = true\n' }, 'message_saver', 'removed from the reference');
    expect(loadOk({ file: '[quic]\nenabled = true\n' }).warnings).toEqual(['[quic]: a reference-server setting accepted and ignored: Shoal serves clients over TCP only']);
    expect(loadOk({ file: '[tcp.tls]\nenabled = false\n' }).config.tcp.tls.enabled).toBe(false);
  });

  it('refuse values of the wrong type', () => {
    expectError({ file: '[tcp]\nenabled = "yes"\n' }, 'tcp.enabled', 'expected a boolean');
    expectError({ file: '[tcp]\naddress = 8090\n' }, 'tcp.address', 'expected an address string');
    expectError({ file: '[tcp]\naddress = "localhost"\n' }, 'tcp.address', 'expected host:port');
    expectError({ file: '[tcp]\naddress = "bad_host!:80"\n' }, 'tcp.address', 'neither an IP address nor a hostname');
    expectError({ file: '[tcp]\naddress = "127.0.0.1:70000"\n' }, 'tcp.address', 'out of range');
    expectError({ file: '[cluster]\nheartbeat_timeout = 5\n' }, 'cluster.heartbeat_timeout', 'duration string with a unit');
    expectError({ file: '[cluster]\nheartbeat_timeout = "5"\n' }, 'cluster.heartbeat_timeout', 'missing unit');
    expectError({ file: '[cluster]\nheartbeat_timeout = "soon"\n' }, 'cluster.heartbeat_timeout', 'invalid duration');
    expectError({ file: '[message_bus]\nmax_message_size = "big"\n' }, 'message_bus.max_message_size', 'invalid size');
    expectError({ file: '[metadata]\njournal_slots = 1.5\n' }, 'metadata.journal_slots', 'expected an integer');
    expectError({ file: '[metadata]\njournal_slots = -4\n' }, 'metadata.journal_slots', 'non-negative');
    expectError({ file: '[metadata]\njournal_slots = 99999999999999999999\n' }, 'metadata.journal_slots', 'out of range');
    expectError({ file: '[system]\npath = 1979-05-27\n' }, 'system.path', 'a date');
    expectError({ file: 'tcp = 1\n' }, 'tcp', 'expected a table');
    expectError({ file: '[tcp.address]\nx = 1\n' }, 'tcp.address', 'expected an address string');
    expectError({ file: '[cluster]\nnodes = 3\n' }, 'cluster.nodes', 'array of tables');
  });
});

describe('relocated keys', () => {
  it.each([
    ['[system.topic]\nmax_size = "1 GB"', 'system.topic.max_size', '`max_topic_size` topic option'],
    ['[system.topic]\nmessage_expiry = "1 day"', 'system.topic.message_expiry', '`message_expiry` topic option'],
    ['[system.partition]\nenforce_fsync = true', 'system.partition.enforce_fsync', '`enforce_fsync` topic option'],
    ['[system.partition]\nmessages_required_to_save = 1000', 'system.partition.messages_required_to_save', '`messages_required_to_save` topic option'],
    ['[system.partition]\nsize_of_messages_required_to_save = 1000', 'system.partition.size_of_messages_required_to_save', '`size_of_messages_required_to_save` topic option'],
    ['[system.segment]\nsize = "1 GiB"', 'system.segment.size', '`segment_size` topic option'],
    ['[system.segment]\npreallocate = true', 'system.segment.preallocate', '`preallocate_segments` topic option'],
    ['[system.message_deduplication]\nenabled = false', 'system.message_deduplication', 'removed with the feature, no replacement'],
    ['[extra]\nanything = 1', 'extra', 'no replacement'],
  ])('%s refuses boot naming the replacement', (file, path, replacement) => {
    const error = expectError({ file }, path, replacement);
    expect(error.kind).toBe('relocated_key');
  });

  it('refuse boot from the environment too', () => {
    expectError({ env: { IGGY_SYSTEM_SEGMENT_SIZE: '1 GiB' } }, 'system.segment.size', 'segment_size', 'IGGY_SYSTEM_SEGMENT_SIZE');
    expectError({ env: { SHOAL_SYSTEM_MESSAGE_DEDUPLICATION_ENABLED: 'true' } }, 'system.message_deduplication', 'removed');
    expectError({ env: { IGGY_EXTRA_FOO: '1' } }, 'extra', 'no replacement');
  });

  it('do not shadow the placeholder keys that share their section', () => {
    expect(load({ file: '[system.segment]\narchive_expired = false\n' }).ok).toBe(true);
  });
});

describe('environment overrides', () => {
  it('override the file, with the reference naming', () => {
    const { config } = loadOk({
      file: '[tcp]\naddress = "127.0.0.1:1111"\n',
      env: {
        IGGY_TCP_ADDRESS: '0.0.0.0:8090',
        IGGY_HTTP_ENABLED: 'FALSE',
        IGGY_SYSTEM_PATH: '/data',
        IGGY_SYSTEM_LOGGING_LEVEL: 'warn,consensus=debug',
        IGGY_SYSTEM_SHARDING_CPU_ALLOCATION: '2',
        IGGY_MESSAGE_BUS_MAX_MESSAGE_SIZE: '32 MiB',
        IGGY_TCP_FRAME_SIZE_MAX: '16777216',
        IGGY_PERSONAL_ACCESS_TOKEN_CLEANER_INTERVAL: '5 m',
        IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET,
      },
    });
    expect(config.tcp.address).toBe('0.0.0.0:8090');
    expect(config.http.enabled).toBe(false);
    expect(config.system.path).toBe('/data');
    expect(config.system.logging).toMatchObject({ defaultLevel: 'warn', directives: [{ target: 'consensus', level: 'debug' }] });
    expect(config.system.sharding.shardCount).toBe(2);
    expect(config.messageBus.maxMessageSizeBytes).toBe(32 * 2 ** 20);
    expect(config.tcp.frameSizeMaxBytes).toBe(16 * 2 ** 20);
    expect(config.personalAccessToken.cleaner.intervalMs).toBe(300_000);
    expect(config.cluster.auth.sharedSecret).toBe(SECRET);
  });

  it('accept SHOAL_ as an alias, and SHOAL_ wins over IGGY_ whatever the order', () => {
    expect(loadOk({ env: { SHOAL_TCP_ADDRESS: '127.0.0.2:1' } }).config.tcp.address).toBe('127.0.0.2:1');
    const both = { SHOAL_TCP_ADDRESS: '127.0.0.2:2', IGGY_TCP_ADDRESS: '127.0.0.3:3' };
    expect(loadOk({ env: both }).config.tcp.address).toBe('127.0.0.2:2');
    const reversed = { IGGY_TCP_ADDRESS: '127.0.0.3:3', SHOAL_TCP_ADDRESS: '127.0.0.2:2' };
    expect(loadOk({ env: reversed }).config.tcp.address).toBe('127.0.0.2:2');
  });

  it('report a bad value with the key and the variable', () => {
    const error = expectError({ env: { IGGY_TCP_ENABLED: 'yes' } }, 'tcp.enabled', 'expected true or false', 'IGGY_TCP_ENABLED');
    expect(error.origin).toBe('IGGY_TCP_ENABLED');
    expectError({ env: { IGGY_METADATA_JOURNAL_SLOTS: '1k' } }, 'metadata.journal_slots', 'non-negative integer');
  });

  it('patch and extend the roster by index', () => {
    const { config } = loadOk(cluster({
      IGGY_CLUSTER_NODES_1_PORTS_TCP: '7001',
      IGGY_CLUSTER_NODES_3_NAME: 'node-3',
      IGGY_CLUSTER_NODES_3_IP: '127.0.0.1',
      IGGY_CLUSTER_NODES_3_REPLICA_ID: '3',
      IGGY_CLUSTER_NODES_3_PORTS_TCP: '8093',
      IGGY_CLUSTER_NODES_3_PORTS_HTTP: '3003',
      IGGY_CLUSTER_NODES_3_PORTS_TCP_REPLICA: '9093',
    }, 3));
    expect(config.cluster.nodes).toHaveLength(4);
    expect(config.cluster.nodes[1]?.ports.tcp).toBe(7001);
    expect(config.cluster.nodes[1]?.ports.tcpReplica).toBe(9091);
    expect(config.node).toMatchObject({ replicaId: 3, replicaCount: 4, name: 'node-3' });
    expect(config.node.listeners.tcpReplica).toEqual({ host: '127.0.0.1', port: 9093 });
  });

  it('build a whole roster with nested arrays (containers)', () => {
    const env: Record<string, string> = { IGGY_CLUSTER_ENABLED: 'true', IGGY_CLUSTER_NAME: 'compose' };
    for (const index of [0, 1]) {
      Object.assign(env, {
        [`IGGY_CLUSTER_NODES_${index}_NAME`]: `node-${index}`,
        [`IGGY_CLUSTER_NODES_${index}_IP`]: `172.28.0.10${index}`,
        [`IGGY_CLUSTER_NODES_${index}_REPLICA_ID`]: String(index),
        [`IGGY_CLUSTER_NODES_${index}_PORTS_TCP`]: '8090',
        [`IGGY_CLUSTER_NODES_${index}_PORTS_HTTP`]: '3000',
        [`IGGY_CLUSTER_NODES_${index}_PORTS_TCP_REPLICA`]: '9090',
      });
    }
    env['IGGY_CLUSTER_NODES_1_ADVERTISED_ADDRESS'] = 'node-1.example.com';
    env['SHOAL_CLUSTER_NODES_1_ADVERTISED_ADDRESSES_0_CLIENT_CIDR'] = '10.0.0.0/16';
    env['SHOAL_CLUSTER_NODES_1_ADVERTISED_ADDRESSES_0_ADDRESS'] = '10.0.1.5';
    const { config } = loadOk({ env, flags: { replicaId: 1 } });
    expect(config.cluster.name).toBe('compose');
    expect(config.cluster.nodes.map((entry) => entry.ip)).toEqual(['172.28.0.100', '172.28.0.101']);
    expect(config.cluster.nodes[1]).toMatchObject({
      advertisedAddress: 'node-1.example.com',
      advertisedAddresses: [{ clientCidr: '10.0.0.0/16', address: '10.0.1.5' }],
    });
    expect(config.node.listeners.tcp).toEqual({ host: '127.0.0.1', port: 8090 });
  });

  it('refuse a gap in the roster and an index past the cap', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_4_NAME: 'late' }), 'cluster.nodes[3]', 'contiguous');
    expectError(cluster({ IGGY_CLUSTER_NODES_32_IP: '127.0.0.1' }), 'cluster.nodes[32]', 'at most 32 entries');
    expectError(cluster({ IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESSES_16_ADDRESS: 'x' }), 'cluster.nodes[0].advertised_addresses[16]', 'at most 16');
  });

  it('warn on unknown IGGY_ names, refuse unknown SHOAL_ names, ignore the rest', () => {
    const result = loadOk({ env: { IGGY_TCP_SERVER_ADDRESS: '127.0.0.1:8090', IGGY_CONFIG_PATH: '/x', PATH: '/bin', SHOAL_LOG_FILE: 'x' } });
    expect(result.warnings).toEqual(['IGGY_TCP_SERVER_ADDRESS: names no configuration key; ignored']);
    const error = expectError({ env: { SHOAL_TCP_ADRESS: '1' } }, 'SHOAL_TCP_ADRESS', 'names no configuration key');
    expect(error.kind).toBe('unknown_key');
  });

  it('read the root credentials as a pair', () => {
    const { config } = loadOk({ env: { IGGY_ROOT_USERNAME: 'admin', IGGY_ROOT_PASSWORD: 'secret-pass' } });
    expect(config.root).toEqual({ username: 'admin', password: 'secret-pass', fromDefaultFlag: false });
    expect(loadOk({ env: { IGGY_ROOT_USERNAME: 'admin', SHOAL_ROOT_PASSWORD: 'secret-pass' } }).config.root.username).toBe('admin');
    expectError({ env: { IGGY_ROOT_USERNAME: 'admin' } }, 'root.password', 'IGGY_ROOT_PASSWORD is not', 'as a pair');
    expectError({ env: { IGGY_ROOT_PASSWORD: 'secret-pass' } }, 'root.username', 'as a pair');
  });

  it('can also come from the [root] section of the file', () => {
    expect(loadOk({ file: '[root]\nusername = "boss"\npassword = "hunter22"\n' }).config.root).toEqual({ username: 'boss', password: 'hunter22', fromDefaultFlag: false });
    // A user without a password: the node generates one when it creates the user.
    expect(loadOk({ file: '[root]\nusername = "boss"\n' }).config.root).toEqual({ username: 'boss', password: null, fromDefaultFlag: false });
  });

  it('default to no password (generated on creation), never to iggy / iggy', () => {
    expect(loadOk().config.root).toEqual({ username: 'iggy', password: null, fromDefaultFlag: false });
  });

  it('--with-default-root-credentials fills what nobody gave with iggy; the environment still wins', () => {
    const flag = { withDefaultRootCredentials: true } as const;
    expect(loadOk({ flags: flag }).config.root).toEqual({ username: 'iggy', password: 'iggy', fromDefaultFlag: true });
    expect(loadOk({ flags: flag, env: { IGGY_ROOT_USERNAME: 'admin', IGGY_ROOT_PASSWORD: 'secret-pass' } }).config.root)
      .toEqual({ username: 'admin', password: 'secret-pass', fromDefaultFlag: false });
    // Half a pair plus the flag: the flag supplies the other half (as the reference).
    expect(loadOk({ flags: flag, env: { IGGY_ROOT_USERNAME: 'admin' } }).config.root).toEqual({ username: 'admin', password: 'iggy', fromDefaultFlag: true });
  });
});

describe('flags', () => {
  it('select this node, and are recorded', () => {
    const { config } = loadOk({ file: CLUSTER_FILE, flags: { replicaId: 2, fresh: true, configPath: '/etc/shoal.toml' } });
    expect(config.boot).toEqual({ replicaId: 2, fresh: true, configPath: '/etc/shoal.toml' });
    expect(config.node).toEqual({
      replicaId: 2,
      replicaCount: 3,
      name: 'node-2',
      listeners: {
        tcp: { host: '127.0.0.1', port: 8092 },
        http: { host: '127.0.0.1', port: 3002 },
        tcpReplica: { host: '127.0.0.1', port: 9092 },
      },
    });
  });

  it('are the last word: --replica-id picks the node whatever the env says about the roster', () => {
    const { config } = loadOk(cluster({ IGGY_CLUSTER_NODES_0_REPLICA_ID: '1', IGGY_CLUSTER_NODES_1_REPLICA_ID: '0' }, 0));
    expect(config.node.name).toBe('node-1');
  });

  it('resolve the config path: --config, then SHOAL_CONFIG_PATH, then IGGY_CONFIG_PATH', () => {
    const env = { SHOAL_CONFIG_PATH: '/shoal.toml', IGGY_CONFIG_PATH: '/iggy.toml' };
    expect(configPathFrom(env, { configPath: '/flag.toml' })).toBe('/flag.toml');
    expect(configPathFrom(env)).toBe('/shoal.toml');
    expect(configPathFrom({ IGGY_CONFIG_PATH: '/iggy.toml' })).toBe('/iggy.toml');
    expect(configPathFrom({})).toBeNull();
  });
});

describe('the sample 3-node cluster (config/shoal.toml)', () => {
  it.each([0, 1, 2])('boots node %i on 809N / 909N / 300N', (replicaId) => {
    const env = { SHOAL_CLUSTER_AUTH_SHARED_SECRET: SECRET, SHOAL_SYSTEM_PATH: `local_data/node-${replicaId}` };
    const { config, warnings } = loadOk({ file: SAMPLE, env, flags: { replicaId } });
    expect(warnings).toEqual([]);
    expect(config.cluster).toMatchObject({ enabled: true, name: 'shoal-dev', auth: { enabled: true } });
    expect(config.system.path).toBe(`local_data/node-${replicaId}`);
    expect(config.system.sharding.shardCount).toBe(1);
    expect(config.node).toEqual({
      replicaId,
      replicaCount: 3,
      name: `shoal-node-${replicaId}`,
      listeners: {
        tcp: { host: '127.0.0.1', port: 8090 + replicaId },
        http: { host: '127.0.0.1', port: 3000 + replicaId },
        tcpReplica: { host: '127.0.0.1', port: 9090 + replicaId },
      },
    });
  });

  it('refuses to boot without the shared secret or the replica id', () => {
    const errors = errorsOf({ file: SAMPLE });
    expect(errors.map((error) => error.path).sort()).toEqual(['--replica-id', 'cluster.auth.shared_secret']);
  });
});

describe('all errors at once', () => {
  it('are collected and formatted one per line', () => {
    const errors = errorsOf({
      file: '[metadata]\nprepare_queue_depth = 200\n[tcp]\nbogus = 1\n',
      env: { IGGY_CLUSTER_HEARTBEAT_TIMEOUT: '1s', IGGY_SYSTEM_SHARDING_INBOX_CAPACITY: '1000' },
      flags: { replicaId: 5 },
    });
    expect(errors.map((error) => error.path).sort()).toEqual([
      '--replica-id', 'cluster.heartbeat_timeout', 'metadata.prepare_queue_depth', 'system.sharding.inbox_capacity', 'tcp.bogus',
    ]);
    expect(formatConfigErrors(errors).split('\n')).toHaveLength(5);
  });
});

describe('rendering for the startup log', () => {
  const secretInput = cluster({
    IGGY_CLUSTER_AUTH_ENABLED: 'true',
    IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET,
    IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: OTHER_SECRET,
    IGGY_ROOT_USERNAME: 'admin',
    IGGY_ROOT_PASSWORD: 'root-password-1',
  }, 1);

  it('masks every secret', () => {
    const { config } = loadOk(secretInput);
    const text = renderConfig(config);
    for (const secret of [SECRET, OTHER_SECRET, 'root-password-1']) expect(text).not.toContain(secret);
    expect(text).toContain(`shared_secret = "${REDACTED}"`);
    expect(text).toContain('heartbeat_timeout = "5s"');
    expect(text).toContain('[[cluster.nodes]]');
    expect(text).toContain('# node "node-1": replica 1 of 3; 4 shard(s)');
    const redacted = redactConfig(config);
    expect(redacted.cluster.auth).toMatchObject({ sharedSecret: REDACTED, previousSharedSecret: REDACTED });
    expect(redacted.root.password).toBe(REDACTED);
    expect(JSON.stringify(redacted)).not.toContain(SECRET);
    expect(config.cluster.auth.sharedSecret).toBe(SECRET);
  });

  it('loads back to the same configuration (secrets aside)', () => {
    const { config } = loadOk(secretInput);
    const reloaded = loadOk({ file: renderConfig(config), flags: { replicaId: 1 }, env: {
      IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET, IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: OTHER_SECRET,
      IGGY_ROOT_USERNAME: 'admin', IGGY_ROOT_PASSWORD: 'root-password-1',
    } }).config;
    expect(reloaded).toEqual(config);
  });

  it('renders the defaults so that they load back unchanged', () => {
    const { config } = loadOk();
    expect(loadOk({ file: renderConfig(redactConfig(config)) }).config).toEqual(config);
  });
});
