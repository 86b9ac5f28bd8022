/**
 * The TOML of a local cluster: one roster on loopback, replica auth with a shared secret, replica
 * TLS optional. `npm start` writes one file for its three nodes (`local_data/cluster.toml`,
 * each node told apart by `--replica-id` and its data directory by `IGGY_SYSTEM_PATH`); the
 * cluster tests render one per node (a test may point a peer's `tcp_replica` at a fault proxy).
 * Key names are the reference's (docs/configuration.md).
 */

export interface LocalNode {
  readonly name: string;
  readonly replicaId: number;
  readonly ip: string;
  /** Client port (Iggy binary protocol over TCP). */
  readonly tcp: number;
  readonly tcpReplica: number;
  /** Metrics / HTTP port; null: HTTP off on every node. */
  readonly http: number | null;
}

export interface LocalClusterSpec {
  readonly name: string;
  readonly nodes: readonly LocalNode[];
  /** Replica auth shared secret (at least 32 bytes); null: auth off. */
  readonly sharedSecret: string | null;
  readonly tls: 'off' | 'self_signed';
  /** Shard workers per node. */
  readonly shards: number;
  /** `system.path`; omitted: the environment (IGGY_SYSTEM_PATH) or the default. */
  readonly dataDir?: string;
  readonly logLevel?: string;
  /** Log to `{system.path}/logs` too (default true). */
  readonly logFile?: boolean;
  /** Extra `[cluster]` keys (timeouts), already rendered as `key = value`. */
  readonly clusterKeys?: readonly string[];
}

const str = (value: string): string => JSON.stringify(value);

export function renderClusterConfig(spec: LocalClusterSpec): string {
  const withHttp = spec.nodes.every((n) => n.http !== null);
  const lines = [
    `# A local ${spec.nodes.length}-node Shoal cluster. Every node reads this file; --replica-id picks its roster entry.`,
    '',
    '[system]',
    ...(spec.dataDir === undefined ? [] : [`path = ${str(spec.dataDir)}`]),
    '',
    '[system.logging]',
    `level = ${str(spec.logLevel ?? 'info')}`,
    `file_enabled = ${spec.logFile ?? true}`,
    '',
    '[system.sharding]',
    `shards = ${spec.shards}`,
    '',
    '[tcp]',
    'address = "127.0.0.1:0"  # the port comes from the roster',
    '',
    '[http]',
    `enabled = ${withHttp}`,
    ...(withHttp ? ['address = "127.0.0.1:0"  # the port comes from the roster'] : []),
    '',
    '[cluster]',
    'enabled = true',
    `name = ${str(spec.name)}`,
    ...(spec.clusterKeys ?? []),
    '',
    '[cluster.auth]',
    `enabled = ${spec.sharedSecret !== null}`,
    ...(spec.sharedSecret === null ? [] : [`shared_secret = ${str(spec.sharedSecret)}`]),
  ];
  if (spec.tls === 'self_signed') lines.push('', '[cluster.tls]', 'enabled = true', 'self_signed = true');
  for (const node of spec.nodes) {
    const ports = [`tcp = ${node.tcp}`, ...(withHttp ? [`http = ${node.http}`] : []), `tcp_replica = ${node.tcpReplica}`];
    lines.push(
      '',
      '[[cluster.nodes]]',
      `name = ${str(node.name)}`,
      `ip = ${str(node.ip)}`,
      `replica_id = ${node.replicaId}`,
      `ports = { ${ports.join(', ')} }`,
    );
  }
  lines.push('');
  return lines.join('\n');
}
