/**
 * The node-local facts non-replicated reads need (state's `ReadHost`), read from the shared
 * status table so any shard answers them without asking another thread: every connection of
 * the node (GetClients, GetClient, GetMe), process and traffic figures (GetStats), live partition
 * counters (GetStream, GetTopic, GetStats) and the roster with roles (GetClusterMetadata).
 */
import { statfsSync } from 'node:fs';
import { cpus, freemem, hostname, release, totalmem, type as osType, version as osVersion } from 'node:os';
import {
  type ClusterGroups, type ClusterMetadata, type ClusterTopicPrimaries, GROUP_PRIMARY_UNKNOWN, packPartitionGroup,
} from '@shoal/protocol';
import { type ClientSession, type HostStats, type MetadataState, type PartitionCounters, type PartitionCountersSource } from '@shoal/state';
import type { ShoalConfig } from '../config/index.js';
import { SocketAddress, isIP } from 'node:net';
import { type Cidr, cidrContains, parseCidr } from '../config/address.js';
import type { StatusTable } from '../status/status-table.js';
import { SERVER_VERSION } from '@shoal/gateway';

/** ClusterNodeRole / ClusterNodeStatus of the reference (the SDK decodes them by these values). */
export const ClusterNodeRole = { leader: 0, follower: 1 } as const;
export const ClusterNodeStatus = { healthy: 0, starting: 1, stopping: 2, unreachable: 3, maintenance: 4, unknown: 5 } as const;

export function sessionsOf(status: StatusTable): ClientSession[] {
  return status.sessions().map((s) => ({
    clientId: s.clientId, vsrClient: s.vsrClient, userId: s.userId, transport: s.transport, address: s.address,
  }));
}

export function partitionCounters(status: StatusTable): PartitionCountersSource {
  return (streamId: number, topicId: number, partitionId: number): PartitionCounters | null => {
    const group = packPartitionGroup(streamId, topicId, partitionId);
    return group.ok ? status.partition(group.value) : null;
  };
}

/**
 * Without a cluster the reference synthesizes one self node under fixed names
 * (core/server/src/cluster_meta.rs `SINGLE_NODE_CLUSTER_NAME`, `SELF_NODE_NAME`); stock clients
 * and the official SDK's suite expect them.
 */
export const SINGLE_NODE_CLUSTER_NAME = 'single-node';
export const SINGLE_NODE_NAME = 'iggy-node';

export class NodeFacts {
  readonly #config: ShoalConfig;
  readonly #status: StatusTable;
  readonly #threadsCount: number;
  #cpuAt = process.cpuUsage();
  #cpuAtMs = Date.now();
  #cpuPercent = 0;
  readonly #selectorCache = new Map<number, readonly { readonly cidr: Cidr; readonly address: string }[]>();

  constructor(config: ShoalConfig, status: StatusTable) {
    this.#config = config;
    this.#status = status;
    // main + metadata worker + shards
    this.#threadsCount = config.system.sharding.shardCount + 2;
  }

  /** Cluster mode: GetClusterMetadata carries the per-group extension. */
  get clustered(): boolean {
    return this.#config.cluster.enabled;
  }

  stats(): HostStats {
    const status = this.#status;
    let readBytes = 0n;
    let writtenBytes = 0n;
    for (let thread = 0; thread < status.threadCount; thread++) {
      const traffic = status.traffic(thread);
      readBytes += traffic.bytesIn;
      writtenBytes += traffic.bytesOut;
    }
    const nowMicros = BigInt(Date.now()) * 1000n;
    const start = status.startTimeMicros;
    const disk = diskSpace(this.#config.system.path);
    return {
      processId: process.pid,
      cpuUsage: this.#cpuUsage(),
      totalCpuUsage: this.#cpuUsage(),
      memoryUsage: BigInt(process.memoryUsage.rss()),
      totalMemory: BigInt(totalmem()),
      availableMemory: BigInt(freemem()),
      runTime: nowMicros > start ? nowMicros - start : 0n,
      startTime: start,
      readBytes,
      writtenBytes,
      clientsCount: status.connectionsOpen,
      hostname: hostname(),
      osName: osType(),
      osVersion: release(),
      kernelVersion: osVersion(),
      iggyServerVersion: SERVER_VERSION,
      iggyServerSemver: numericVersion(SERVER_VERSION),
      cacheMetrics: [],
      threadsCount: this.#threadsCount,
      freeDiskSpace: disk.free,
      totalDiskSpace: disk.total,
    };
  }

  /**
   * The roster with roles, in replica-id order (the extension's primaries index it). A single
   * node is the leader and healthy, under the reference's fixed single-node names; a transport
   * Shoal does not serve (QUIC, WebSocket) reports port 0, as the reference does for a disabled
   * one (docs/compat.md). In a cluster the metadata primary of this node's view is the
   * leader while its metadata group is in status normal (none during a view change: clients poll
   * until one appears); this node is healthy, a peer is healthy while its replica link is up and
   * unreachable otherwise.
   */
  cluster(clientAddress?: string): ClusterMetadata {
    const config = this.#config;
    const node = config.node;
    if (!config.cluster.enabled) {
      return {
        name: SINGLE_NODE_CLUSTER_NAME,
        nodes: [{
          name: SINGLE_NODE_NAME,
          ip: node.listeners.tcp?.host ?? '127.0.0.1',
          tcpPort: this.#status.boundPort('tcp') || (node.listeners.tcp?.port ?? 0),
          quicPort: 0,
          httpPort: this.#status.boundPort('http') || (node.listeners.http?.port ?? 0),
          websocketPort: 0,
          role: ClusterNodeRole.leader,
          status: ClusterNodeStatus.healthy,
        }],
      };
    }
    const metadata = this.#status.metadata();
    const leader = metadata.status === 'normal' ? metadata.primary : -1;
    return {
      name: config.cluster.name,
      nodes: this.#roster().map((n) => ({
        name: n.name,
        ip: this.#advertised(n, clientIp(clientAddress)),
        tcpPort: n.ports.tcp ?? 0,
        // Never a port Shoal does not serve, even when the roster names one (docs/compat.md).
        quicPort: 0,
        httpPort: n.ports.http ?? 0,
        websocketPort: 0,
        role: n.replicaId === leader ? ClusterNodeRole.leader : ClusterNodeRole.follower,
        status: n.replicaId === node.replicaId || this.#status.replicaOwner(n.replicaId) >= 0
          ? ClusterNodeStatus.healthy : ClusterNodeStatus.unreachable,
      })),
    };
  }

  /**
   * The Shoal extension of GetClusterMetadata (protocol `writeClusterGroups`): the metadata
   * group's and every partition's primary as this node sees them (the partitions' owner shards
   * publish their roles in the status table).
   */
  clusterGroups(state: MetadataState): ClusterGroups {
    const metadata = this.#status.metadata();
    const topics: ClusterTopicPrimaries[] = [];
    for (const stream of state.model.streams.values()) {
      for (const topic of stream.topics.values()) {
        topics.push({
          streamId: stream.id, streamName: stream.name, topicId: topic.id, topicName: topic.name,
          partitions: topic.partitions.map((p) => {
            const role = this.#status.partitionRole(p.consensusGroupId);
            return { partitionId: p.id, view: role?.view ?? 0, primary: role?.primary ?? GROUP_PRIMARY_UNKNOWN };
          }),
        });
      }
    }
    return {
      metadataView: metadata.view,
      metadataPrimary: metadata.status === 'normal' ? metadata.primary : GROUP_PRIMARY_UNKNOWN,
      nodeReplicaIds: this.#roster().map((n) => n.replicaId),
      topics,
    };
  }

  /**
   * The address a node is handed out under, as the reference resolves it (configs cluster.rs
   * `advertised_for`, server cluster_meta.rs `client_host`): the longest-prefix selector of
   * `advertised_addresses` whose `client_cidr` holds the caller's IP, else `advertised_address`,
   * else the roster `ip`; hostnames lower-cased, IPv6 in canonical form.
   */
  #advertised(node: ShoalConfig['cluster']['nodes'][number], client: string | null): string {
    let best: { readonly cidr: Cidr; readonly address: string } | null = null;
    if (client !== null) {
      for (const selector of this.#selectors(node)) {
        if (cidrContains(selector.cidr, client) && (best === null || selector.cidr.prefix > best.cidr.prefix)) best = selector;
      }
    }
    return canonicalHost(best?.address ?? node.advertisedAddress ?? node.ip);
  }

  #selectors(node: ShoalConfig['cluster']['nodes'][number]): readonly { readonly cidr: Cidr; readonly address: string }[] {
    let parsed = this.#selectorCache.get(node.replicaId);
    if (parsed === undefined) {
      parsed = node.advertisedAddresses.flatMap((a) => {
        const cidr = parseCidr(a.clientCidr);
        return cidr.ok ? [{ cidr: cidr.cidr, address: a.address }] : [];
      });
      this.#selectorCache.set(node.replicaId, parsed);
    }
    return parsed;
  }

  #roster(): ShoalConfig['cluster']['nodes'] {
    return [...this.#config.cluster.nodes].sort((a, b) => a.replicaId - b.replicaId);
  }

  /** Process CPU use in percent of one core, averaged since the previous call (at least 1 s apart). */
  #cpuUsage(): number {
    const nowMs = Date.now();
    if (nowMs - this.#cpuAtMs >= 1000) {
      const used = process.cpuUsage(this.#cpuAt);
      this.#cpuPercent = ((used.user + used.system) / 1000 / (nowMs - this.#cpuAtMs)) * 100 / Math.max(1, cpus().length);
      this.#cpuAt = process.cpuUsage();
      this.#cpuAtMs = nowMs;
    }
    return this.#cpuPercent;
  }
}

/** The IP of a connection's `host:port` address (IPv6 without brackets), or null. */
function clientIp(address: string | undefined): string | null {
  if (address === undefined) return null;
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return isIP(host) === 0 ? null : host;
}

/** Hostnames lower-cased, IPv6 literals canonical (`2001:DB8::1` → `2001:db8::1`). */
function canonicalHost(host: string): string {
  if (isIP(host) === 6) return new SocketAddress({ address: host, family: 'ipv6' }).address;
  return isIP(host) === 4 ? host : host.toLowerCase();
}

/**
 * The reference's `SemanticVersion::get_numeric_version` (core/common/src/utils/versioning.rs):
 * major, then minor and patch as three digits each, read as a decimal number (0.11.0 → 11000).
 * 0 (the wire's "none") when the text is not `major.minor.patch`.
 */
export function numericVersion(version: string): number {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (m === null) return 0;
  const value = Number(`${m[1] ?? ''}${(m[2] ?? '').padStart(3, '0')}${(m[3] ?? '').padStart(3, '0')}`);
  return Number.isSafeInteger(value) && value <= 0xffff_ffff ? value : 0;
}

function diskSpace(path: string): { free: bigint; total: bigint } {
  try {
    const s = statfsSync(path, { bigint: true });
    return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
  } catch {
    return { free: 0n, total: 0n };
  }
}
