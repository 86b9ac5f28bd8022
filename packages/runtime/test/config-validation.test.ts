import { describe, expect, it } from 'vitest';
import { envNameOf, KEYS, TIMER_MS_MAX, type KeySpec } from '../src/index.js';
import {
  CLUSTER_FILE, OTHER_SECRET, SECRET, cluster, errorsOf, expectError, load, loadOk, node, rosterFile,
} from './config-fixtures.js';

const topLevelKeys = KEYS.filter((key) => !key.path.includes('[]') && key.kind !== 'cpu_allocation');

/** The env text for a number in a key's unit. */
function envText(spec: KeySpec, value: number): string {
  if (spec.kind === 'duration') return `${value}ms`;
  return String(value);
}

function envFor(spec: KeySpec, text: string): Record<string, string> {
  return { [`IGGY_${envNameOf(spec.path)}`]: text };
}

describe('per-key bounds, for every key in the schema', () => {
  it.each(topLevelKeys.filter((key) => key.max !== undefined).map((key) => [key.path, key] as const))(
    '%s above its maximum', (path, spec) => {
      expect(expectError({ env: envFor(spec, envText(spec, (spec.max ?? 0) + 1)) }, path, 'must be').kind).toBe('range');
    });

  it.each(topLevelKeys.filter((key) => (key.min ?? 0) > 0).map((key) => [key.path, key] as const))(
    '%s below its minimum', (path, spec) => {
      expectError({ env: envFor(spec, envText(spec, (spec.min ?? 1) - 1)) }, path, 'must be');
    });

  it.each(topLevelKeys.filter((key) => key.pow2 === true).map((key) => [key.path, key] as const))(
    '%s not a power of two', (path, spec) => {
      const value = spec.kind === 'size' ? 3 * 2 ** 20 : 1000;
      expectError({ env: envFor(spec, envText(spec, value)) }, path, 'must be a power of two', 'got');
    });

  it.each(topLevelKeys.filter((key) => key.nonzero === true).map((key) => [key.path, key] as const))(
    '%s zero', (path, spec) => {
      expectError({ env: envFor(spec, spec.kind === 'duration' ? 'disabled' : '0') }, path, 'must be non-zero');
    });

  it.each(topLevelKeys.filter((key) => key.nonempty === true).map((key) => [key.path, key] as const))(
    '%s empty', (path, spec) => {
      expectError({ env: envFor(spec, '') }, path, 'must not be empty');
    });

  it.each(topLevelKeys.filter((key) => key.kind === 'duration' && key.notTimer !== true && (key.max ?? Infinity) > TIMER_MS_MAX)
    .map((key) => [key.path, key] as const))(
    '%s longer than a Node timer can wait', (path, spec) => {
      expectError({ env: envFor(spec, '25 days') }, path, 'Node timer');
    });

  it('leaves the zero-means-off durations alone', () => {
    const { config } = loadOk({ env: { IGGY_TCP_IDLE_TIMEOUT: '0', IGGY_CLUSTER_SUPERBLOCK_WEDGED_FATAL_TIMEOUT: 'disabled' } });
    expect(config.tcp.idleTimeoutMs).toBe(0);
    expect(config.cluster.superblockWedgedFatalTimeoutMs).toBe(0);
    expect(config.cluster.superblockWedgedFatalWrites).toBe(0);
  });
});

describe('consensus timing (clustering/configuration.mdx)', () => {
  it('heartbeat_timeout >= 2s', () => {
    const error = expectError({ env: { IGGY_CLUSTER_HEARTBEAT_TIMEOUT: '1s' } }, 'cluster.heartbeat_timeout',
      'must be >= 2s and >= 4 × cluster.commit_broadcast_interval (got 1s');
    expect(error.kind).toBe('rule');
  });

  it('heartbeat_timeout >= 4 × commit_broadcast_interval', () => {
    expectError({ env: { IGGY_CLUSTER_HEARTBEAT_TIMEOUT: '3s', IGGY_CLUSTER_COMMIT_BROADCAST_INTERVAL: '1s' } },
      'cluster.heartbeat_timeout', '(got 3s; 4 × 1s = 4s)');
    expect(load({ env: { IGGY_CLUSTER_HEARTBEAT_TIMEOUT: '4s', IGGY_CLUSTER_COMMIT_BROADCAST_INTERVAL: '1s' } }).ok).toBe(true);
  });

  it('view_change_status_timeout >= 4 × view_change_retransmit_interval', () => {
    expectError({ env: { IGGY_CLUSTER_VIEW_CHANGE_STATUS_TIMEOUT: '1s' } }, 'cluster.view_change_status_timeout',
      'must be >= 4 × cluster.view_change_retransmit_interval (got 1s; 4 × 500ms = 2s)');
  });

  it('superblock_wedged_fatal_timeout is 0 or >= 30s', () => {
    expectError({ env: { IGGY_CLUSTER_SUPERBLOCK_WEDGED_FATAL_TIMEOUT: '10s' } }, 'cluster.superblock_wedged_fatal_timeout',
      'must be 0 (disabled) or >= 30s (got 10s)');
    expect(loadOk({ env: { IGGY_CLUSTER_SUPERBLOCK_WEDGED_FATAL_TIMEOUT: '30s' } }).config.cluster.superblockWedgedFatalWrites).toBe(30);
  });

  it('view_probe_attempts_max is 1..=100', () => {
    expectError({ env: { IGGY_CLUSTER_VIEW_PROBE_ATTEMPTS_MAX: '0' } }, 'cluster.view_probe_attempts_max', 'between 1 and 100', 'got 0');
    expectError({ env: { IGGY_CLUSTER_VIEW_PROBE_ATTEMPTS_MAX: '101' } }, 'cluster.view_probe_attempts_max', 'between 1 and 100');
  });

  it('every consensus duration is non-zero', () => {
    expectError({ env: { IGGY_CLUSTER_COMMIT_BROADCAST_INTERVAL: '0' } }, 'cluster.commit_broadcast_interval', 'non-zero');
    expectError({ env: { IGGY_CLUSTER_REPAIR_RETRY_INTERVAL: 'unlimited' } }, 'cluster.repair_retry_interval', 'non-zero');
  });
});

describe('capacities', () => {
  it('repair_chunk_max < message_bus.peer_queue_capacity', () => {
    expectError({ env: { IGGY_CLUSTER_REPAIR_CHUNK_MAX: '256' } }, 'cluster.repair_chunk_max',
      'must be < message_bus.peer_queue_capacity', 'got 256; peer_queue_capacity = 256');
    expectError({ env: { IGGY_MESSAGE_BUS_PEER_QUEUE_CAPACITY: '100' } }, 'cluster.repair_chunk_max', 'got 128; peer_queue_capacity = 100');
  });

  it('repair_chunk_max is 1..=1024', () => {
    expectError({ env: { IGGY_CLUSTER_REPAIR_CHUNK_MAX: '0' } }, 'cluster.repair_chunk_max', 'between 1 and 1024');
  });

  it('journal_slots >= 4 × max(64, prepare_queue_depth)', () => {
    expectError({ env: { IGGY_METADATA_JOURNAL_SLOTS: '255' } }, 'metadata.journal_slots', 'must be >= 4 × max(64, metadata.prepare_queue_depth) = 256 (got 255)');
    expectError({ env: { IGGY_METADATA_PREPARE_QUEUE_DEPTH: '100', IGGY_METADATA_JOURNAL_SLOTS: '256' } }, 'metadata.journal_slots', '= 400 (got 256)');
    expect(load({ env: { IGGY_METADATA_JOURNAL_SLOTS: '256' } }).ok).toBe(true);
  });

  it('queue depths are 1..=127', () => {
    for (const plane of ['METADATA', 'PARTITION']) {
      const path = `${plane.toLowerCase()}.prepare_queue_depth`;
      expectError({ env: { [`IGGY_${plane}_PREPARE_QUEUE_DEPTH`]: '128' } }, path, 'between 1 and 127', 'got 128');
      expectError({ env: { [`IGGY_${plane}_PREPARE_QUEUE_DEPTH`]: '0' } }, path, 'between 1 and 127');
    }
  });

  it('transfer_artifact_bytes_max >= 1 GiB + message_bus.max_message_size', () => {
    expectError({ env: { IGGY_MESSAGE_BUS_MAX_MESSAGE_SIZE: '128 MiB' } }, 'partition.transfer_artifact_bytes_max',
      'must be >= 1 GiB + message_bus.max_message_size = 1152 MiB (got 1088 MiB)');
    const both = { IGGY_MESSAGE_BUS_MAX_MESSAGE_SIZE: '128 MiB', IGGY_PARTITION_TRANSFER_ARTIFACT_BYTES_MAX: '1152 MiB' };
    expect(load({ env: both }).ok).toBe(true);
  });

  it('warns when state transfer can serve only one artifact at a time', () => {
    const { warnings } = loadOk({ env: { IGGY_PARTITION_TRANSFER_SERVED_CACHE_BYTES_MAX: '1 GiB' } });
    expect(warnings.join('\n')).toContain('serves only 1 state transfer');
  });

  it('tcp.frame_size_max <= message_bus.max_message_size', () => {
    expectError({ env: { IGGY_TCP_FRAME_SIZE_MAX: '65 MiB' } }, 'tcp.frame_size_max', 'must be <= message_bus.max_message_size = 64 MiB (got 65 MiB)');
  });

  it('partition.group_commit_bytes_max leaves room for the prepare header', () => {
    expectError({ env: { IGGY_PARTITION_GROUP_COMMIT_BYTES_MAX: '64 MiB' } }, 'partition.group_commit_bytes_max', 'must be <= message_bus.max_message_size - 256');
  });

  it('frames must hold more than a header', () => {
    expectError({ env: { IGGY_MESSAGE_BUS_MAX_MESSAGE_SIZE: '256' } }, 'message_bus.max_message_size', 'between 257 B');
  });
});

describe('sharding and shutdown', () => {
  it('shutdown_poll_interval <= shutdown_drain_timeout', () => {
    expectError({ env: { IGGY_SYSTEM_SHARDING_SHUTDOWN_DRAIN_TIMEOUT: '1s', IGGY_SYSTEM_SHARDING_SHUTDOWN_POLL_INTERVAL: '2s' } },
      'system.sharding.shutdown_poll_interval', 'must be <= system.sharding.shutdown_drain_timeout (got 2s');
  });

  it('shutdown_join_timeout >= shutdown_drain_timeout', () => {
    expectError({ env: { IGGY_SYSTEM_SHARDING_SHUTDOWN_JOIN_TIMEOUT: '5s' } },
      'system.sharding.shutdown_join_timeout', 'must be >= system.sharding.shutdown_drain_timeout (got 5s; drain timeout 10s)');
  });

  it('ring and inbox sizes are powers of two', () => {
    expectError({ file: '[system.sharding]\ninbox_capacity = 1000\n' }, 'system.sharding.inbox_capacity', 'power of two', 'got 1000');
    expectError({ file: '[system.sharding]\nring_size = "5 MiB"\n' }, 'system.sharding.ring_size', 'power of two', 'got 5 MiB');
  });
});

describe('system and logging', () => {
  it('refuses the unsupported placeholders', () => {
    expectError({ file: '[system.segment]\narchive_expired = true\n' }, 'system.segment.archive_expired', 'unsupported placeholder');
    expectError({ file: '[system.recovery]\nrecreate_missing_state = true\n' }, 'system.recovery.recreate_missing_state', 'unsupported placeholder');
  });

  it('checks the log level and directives', () => {
    expectError({ env: { IGGY_SYSTEM_LOGGING_LEVEL: 'loud' } }, 'system.logging.level', '"loud" is not a level');
    expectError({ env: { IGGY_SYSTEM_LOGGING_LEVEL: 'info,=debug' } }, 'system.logging.level', '"=debug"');
    const { config } = loadOk({ env: { IGGY_SYSTEM_LOGGING_LEVEL: 'consensus=trace, WARN ,ring=off' } });
    expect(config.system.logging.defaultLevel).toBe('warn');
    expect(config.system.logging.directives).toEqual([{ target: 'consensus', level: 'trace' }, { target: 'ring', level: 'off' }]);
  });

  it('the metrics endpoint starts with a slash', () => {
    expectError({ file: '[http.metrics]\nendpoint = "metrics"\n' }, 'http.metrics.endpoint', 'must start with "/"');
  });

  it('a static metrics token is empty or 32 to 512 bytes, and never echoed', () => {
    const short = expectError({ env: { SHOAL_HTTP_METRICS_TOKEN: 'guessable-token' } }, 'http.metrics.token', 'must be empty or 32 to 512 bytes (got 15 bytes)');
    expect(short.message).not.toContain('guessable');
    expectError({ env: { SHOAL_HTTP_METRICS_TOKEN: 't'.repeat(513) } }, 'http.metrics.token', '(got 513 bytes)');
    expect(loadOk({ env: { SHOAL_HTTP_METRICS_TOKEN: 't'.repeat(32) } }).config.http.metrics.token).toBe('t'.repeat(32));
    expect(loadOk({}).config.http.metrics.token).toBe('');
  });

  it('root credentials follow the Iggy user rules', () => {
    expectError({ file: '[root]\nusername = "ab"\n' }, 'root.username', 'must be 3 to 50 characters (got "ab")');
    const long = expectError({ file: `[root]\npassword = "${'p'.repeat(101)}"\n` }, 'root.password', 'must be 3 to 100 characters', '101 characters');
    expect(long.message).not.toContain('ppp');
    expectError({ file: `[root]\npassword = "${'€'.repeat(90)}"\n` }, 'root.password', 'at most 255 UTF-8 bytes (got 270)');
  });

  it('cluster.name is at most 255 bytes', () => {
    expectError({ env: { IGGY_CLUSTER_NAME: 'n'.repeat(256) } }, 'cluster.name', 'at most 255 bytes');
  });
});

describe('--replica-id', () => {
  it('is 0 or absent without a cluster', () => {
    expect(load({ flags: { replicaId: 0 } }).ok).toBe(true);
    expectError({ flags: { replicaId: 3 } }, '--replica-id', 'must be 0 (or absent) when cluster.enabled = false', 'got 3');
  });

  it('is a small non-negative integer', () => {
    expectError({ flags: { replicaId: -1 } }, '--replica-id', 'integer between 0 and 255');
    expectError({ flags: { replicaId: 1.5 } }, '--replica-id', 'integer between 0 and 255');
  });

  it('is required with a cluster, and must be in the roster', () => {
    expectError(cluster({}, null), '--replica-id', 'required when cluster.enabled = true');
    expectError(cluster({}, 7), '--replica-id', 'must match a cluster.nodes replica_id (got 7; roster ids: 0, 1, 2)');
  });
});

describe('roster', () => {
  it('accepts the 3-node fixture for every replica', () => {
    for (const replicaId of [0, 1, 2]) expect(loadOk(cluster({}, replicaId)).warnings).toEqual([]);
  });

  it('must not be empty when the cluster is enabled', () => {
    expectError({ file: '[cluster]\nenabled = true\n', flags: { replicaId: 0 } }, 'cluster.nodes', 'at least one node');
  });

  it('holds at most 32 replicas', () => {
    const file = rosterFile(Array.from({ length: 33 }, (_, index) => node(index, '', `{ tcp = ${10_000 + index}, http = ${20_000 + index}, tcp_replica = ${30_000 + index} }`)));
    expectError(cluster({}, 0, file), 'cluster.nodes', 'at most 32 entries (got 33)');
    const full = rosterFile(Array.from({ length: 32 }, (_, index) => node(index, '', `{ tcp = ${10_000 + index}, http = ${20_000 + index}, tcp_replica = ${30_000 + index} }`)));
    expect(loadOk(cluster({}, 31, full)).config.node.replicaCount).toBe(32);
  });

  it('requires name, ip, replica_id and ports.tcp_replica', () => {
    const file = rosterFile(['replica_id = 0\nports = { tcp = 8090, http = 3000 }', node(1)]);
    const paths = errorsOf(cluster({}, 0, file)).filter((error) => error.kind === 'required').map((error) => error.path);
    expect(paths).toEqual(expect.arrayContaining(['cluster.nodes[0].name', 'cluster.nodes[0].ip', 'cluster.nodes[0].ports.tcp_replica']));
    const noId = rosterFile(['name = "a"\nip = "127.0.0.1"\nports = { tcp = 8090, http = 3000, tcp_replica = 9090 }']);
    expectError(cluster({}, 0, noId), 'cluster.nodes[0].replica_id', 'required');
  });

  it('names are unique', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_2_NAME: 'node-0' }), 'cluster.nodes[2].name', 'must be unique', 'cluster.nodes[0]');
  });

  it('ip is a literal address', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_1_IP: 'node-1.local' }), 'cluster.nodes[1].ip', 'literal IPv4 or IPv6', 'not a hostname');
  });

  it('replica ids are unique and below the roster size', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_2_REPLICA_ID: '3' }), 'cluster.nodes[2].replica_id', 'must be < the roster size 3', 'got 3');
    expectError(cluster({ IGGY_CLUSTER_NODES_2_REPLICA_ID: '1' }), 'cluster.nodes[2].replica_id', 'must be unique', 'cluster.nodes[1]');
  });

  it('ports are required for every enabled transport', () => {
    const file = rosterFile([node(0, '', '{ tcp_replica = 9090 }')]);
    expectError(cluster({}, 0, file), 'cluster.nodes[0].ports.tcp', 'required when tcp.enabled = true');
    expectError(cluster({}, 0, file), 'cluster.nodes[0].ports.http', 'required when http.enabled = true');
    const noHttp = loadOk(cluster({ IGGY_HTTP_ENABLED: 'false', IGGY_TCP_ENABLED: 'false' }, 0, file)).config;
    expect(noHttp.node.listeners).toEqual({ tcp: null, http: null, tcpReplica: { host: '127.0.0.1', port: 9090 } });
  });

  it('ports are non-zero', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_0_PORTS_TCP: '0' }), 'cluster.nodes[0].ports.tcp', 'between 1 and 65535', 'got 0');
    expectError(cluster({ IGGY_CLUSTER_NODES_0_PORTS_TCP_REPLICA: '70000' }), 'cluster.nodes[0].ports.tcp_replica', 'between 1 and 65535');
  });

  it('no two roster ports share one ip:port', () => {
    expectError(cluster({ IGGY_CLUSTER_NODES_1_PORTS_TCP_REPLICA: '9090' }), 'cluster.nodes[1].ports.tcp_replica',
      '127.0.0.1:9090 is already claimed by cluster.nodes[0].ports.tcp_replica');
    expectError(cluster({ IGGY_CLUSTER_NODES_0_PORTS_HTTP: '8090' }), 'cluster.nodes[0].ports.http', 'already claimed by cluster.nodes[0].ports.tcp');
    expectError(cluster({ IGGY_CLUSTER_NODES_1_IP: '::1', IGGY_CLUSTER_NODES_2_IP: '0:0:0:0:0:0:0:1', IGGY_CLUSTER_NODES_2_PORTS_TCP: '8091' }),
      'cluster.nodes[2].ports.tcp', 'already claimed by cluster.nodes[1].ports.tcp');
    // The same port on different hosts is fine.
    const spread = { IGGY_CLUSTER_NODES_1_IP: '127.0.0.2', IGGY_CLUSTER_NODES_1_PORTS_TCP: '8090' };
    expect(load(cluster(spread)).ok).toBe(true);
  });

  it('advertised_address is an IP or a hostname without a port', () => {
    expect(load(cluster({ IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESS: 'shoal-0.example.com' })).ok).toBe(true);
    expect(load(cluster({ IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESS: '203.0.113.10' })).ok).toBe(true);
    expectError(cluster({ IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESS: 'shoal-0:8090' }), 'cluster.nodes[0].advertised_address', 'no port');
    expectError(cluster({ IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESS: 'shoal-0.example.com.' }), 'cluster.nodes[0].advertised_address', 'no trailing dot');
  });

  it('advertised_addresses: valid, unique per node, at most 16, no conflicting advertisements', () => {
    const selector = (cidr: string, address: string): string =>
      `[[cluster.nodes.advertised_addresses]]\nclient_cidr = "${cidr}"\naddress = "${address}"\n`;
    const withSelectors = (selectors0: string, selectors1 = ''): string =>
      rosterFile([`${node(0)}\n${selectors0}`, `${node(1)}\n${selectors1}`]);
    expect(load(cluster({}, 0, withSelectors(selector('10.0.0.0/16', '10.0.1.5') + selector('::/0', 'fd00::5')))).ok).toBe(true);
    expectError(cluster({}, 0, withSelectors(selector('10.0.0.0/33', '10.0.1.5'))), 'cluster.nodes[0].advertised_addresses[0].client_cidr', 'longer than 32 bits');
    expectError(cluster({}, 0, withSelectors(selector('nonsense', '10.0.1.5'))), 'cluster.nodes[0].advertised_addresses[0].client_cidr', 'invalid CIDR');
    expectError(cluster({}, 0, withSelectors(selector('10.0.0.0/8', 'a:1'))), 'cluster.nodes[0].advertised_addresses[0].address', 'no port');
    expectError(cluster({}, 0, withSelectors(selector('10.0.0.0/16', '10.0.1.5') + selector('10.0.1.0/16', '10.0.1.6'))),
      'cluster.nodes[0].advertised_addresses[1].client_cidr', 'duplicates cluster.nodes[0].advertised_addresses[0].client_cidr');
    const seventeen = Array.from({ length: 17 }, (_, index) => selector(`10.${index}.0.0/16`, '10.0.1.5')).join('');
    expectError(cluster({}, 0, withSelectors(seventeen)), 'cluster.nodes[0].advertised_addresses', 'at most 16 entries');
    // Both nodes hand 10.9.9.9 with the same tcp port to overlapping client sets.
    const sharedPorts = rosterFile([
      `${node(0, '', '{ tcp = 8090, http = 3000, tcp_replica = 9090 }')}\n${selector('10.0.0.0/8', '10.9.9.9')}`,
      `${node(1, '', '{ tcp = 8090, http = 3001, tcp_replica = 9091 }').replace('127.0.0.1', '127.0.0.2')}\n${selector('10.1.0.0/16', '10.9.9.9')}`,
    ]);
    expectError(cluster({}, 0, sharedPorts), 'cluster.nodes[1].advertised_addresses[0].address', 'advertises 10.9.9.9:8090',
      'cluster.nodes[0].advertised_addresses[0].address');
    // Disjoint client sets may share an advertised host:port.
    expect(load(cluster({}, 0, sharedPorts.replace('10.1.0.0/16', '192.168.0.0/16'))).ok).toBe(true);
  });
});

describe('cluster security (clustering/security.mdx)', () => {
  it('auth requires a shared secret', () => {
    expectError(cluster({ IGGY_CLUSTER_AUTH_ENABLED: 'true' }), 'cluster.auth.shared_secret', 'required when cluster.auth.enabled = true');
  });

  it('a shared secret is at least 32 bytes, even with auth disabled', () => {
    const error = expectError(cluster({ IGGY_CLUSTER_AUTH_SHARED_SECRET: 'short-secret' }), 'cluster.auth.shared_secret',
      'at least 32 bytes', 'got 12 bytes');
    expect(error.message).not.toContain('short-secret');
    expect(load(cluster({ IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET })).ok).toBe(true);
  });

  it('the previous secret is at least 32 bytes and differs from the current one', () => {
    const base = { IGGY_CLUSTER_AUTH_ENABLED: 'true', IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET };
    expectError(cluster({ ...base, IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: 'old' }), 'cluster.auth.previous_shared_secret', 'at least 32 bytes');
    expectError(cluster({ ...base, IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: SECRET }), 'cluster.auth.previous_shared_secret',
      'must differ from cluster.auth.shared_secret');
    expect(load(cluster({ ...base, IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: OTHER_SECRET })).ok).toBe(true);
  });

  it('TLS requires auth', () => {
    expectError(cluster({ IGGY_CLUSTER_TLS_ENABLED: 'true', IGGY_CLUSTER_TLS_SELF_SIGNED: 'true' }), 'cluster.tls.enabled',
      'TLS requires cluster.auth.enabled = true');
  });

  it('TLS needs cert, key and CA files unless self-signed', () => {
    const tls = { IGGY_CLUSTER_AUTH_ENABLED: 'true', IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET, IGGY_CLUSTER_TLS_ENABLED: 'true' };
    const paths = errorsOf(cluster(tls)).map((error) => error.path);
    expect(paths).toEqual(['cluster.tls.cert_file', 'cluster.tls.key_file', 'cluster.tls.ca_file']);
    expect(load(cluster({ ...tls, IGGY_CLUSTER_TLS_SELF_SIGNED: 'true' })).ok).toBe(true);
    const files = { IGGY_CLUSTER_TLS_CERT_FILE: 'n.crt', IGGY_CLUSTER_TLS_KEY_FILE: 'n.key', IGGY_CLUSTER_TLS_CA_FILE: 'ca.crt' };
    expect(load(cluster({ ...tls, ...files })).ok).toBe(true);
  });

  it('security rules are inert without a cluster', () => {
    expect(load({ env: { IGGY_CLUSTER_AUTH_SHARED_SECRET: 'short', IGGY_CLUSTER_TLS_ENABLED: 'true' } }).ok).toBe(true);
  });

  it('no error message ever contains a secret', () => {
    const errors = errorsOf({ file: CLUSTER_FILE, env: {
      IGGY_CLUSTER_AUTH_SHARED_SECRET: 'short-secret-value',
      IGGY_CLUSTER_AUTH_PREVIOUS_SHARED_SECRET: 'short-secret-value',
      IGGY_ROOT_USERNAME: 'root-user', IGGY_ROOT_PASSWORD: 'pw',
    }, flags: { replicaId: 0 } });
    expect(errors.length).toBeGreaterThanOrEqual(3);
    for (const error of errors) {
      expect(error.message).not.toContain('short-secret-value');
      expect(error.message).not.toContain('"pw"');
    }
  });
});

describe('bind warnings', () => {
  it('warn when a loopback bind cannot serve a non-loopback roster ip', () => {
    const { warnings } = loadOk(cluster({ IGGY_CLUSTER_NODES_0_IP: '10.0.0.5' }));
    expect(warnings.join('\n')).toContain('tcp.address binds 127.0.0.1, which cannot serve roster ip 10.0.0.5');
    expect(loadOk(cluster({ IGGY_CLUSTER_NODES_0_IP: '10.0.0.5', IGGY_TCP_ADDRESS: '0.0.0.0:8090', IGGY_HTTP_ADDRESS: '0.0.0.0:3000' })).warnings).toEqual([]);
  });
});
