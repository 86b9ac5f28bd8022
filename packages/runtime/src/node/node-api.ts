/**
 * The dashboard's JSON (docs/operations.md "JSON endpoints"): what one node knows, built by the
 * supervisor from the workers' stats reports, the status table and the configuration.
 *
 *   GET /api/v1/node      this node: identity, readiness, metadata group, links, traffic,
 *                         consensus groups, streams → topics → partitions, consumer groups with lag
 *   GET /api/v1/cluster   every roster node's /api/v1/node, fetched by this node with the caller's
 *                         bearer (1 s each; a node that does not answer is listed unreachable, one
 *                         that answers 401 refused), so a browser needs one origin
 *
 * Numbers are JSON numbers (u64 counters stay far below 2^53 in practice); the field list is the
 * `NodeSummary` type below.
 */
import type { ShoalConfig } from '../config/index.js';
import type { ConsumerGroupLag, PartitionSeries, ThreadStats } from '../metrics/thread-stats.js';
import type { MetadataStatusName } from '../status/status-table.js';
import type { Readiness } from './readiness.js';

export interface NodeSummary {
  readonly node: {
    readonly name: string;
    readonly replicaId: number;
    readonly cluster: string | null;
    readonly version: string;
    readonly pid: number;
    readonly uptimeSeconds: number;
    readonly tcp: string | null;
    readonly http: string | null;
    readonly replica: string | null;
    readonly shards: number;
  };
  readonly ready: boolean;
  readonly readinessFailed: readonly string[];
  readonly metadata: {
    readonly view: number;
    readonly status: MetadataStatusName;
    readonly primary: number | null;
    readonly commit: number;
    readonly op: number;
    readonly caughtUp: boolean;
  };
  /** The other roster nodes and whether this node holds a replica link to each. */
  readonly peers: readonly { readonly replicaId: number; readonly name: string; readonly linkUp: boolean }[];
  readonly traffic: {
    readonly connections: number;
    readonly bytesReceived: number;
    readonly bytesSent: number;
    readonly requests: number;
    readonly messagesAppended: number;
  };
  readonly groups: readonly GroupSummary[];
  readonly streams: readonly StreamSummary[];
  /** `Date.now()` when built (rates are deltas between two summaries). */
  readonly at: number;
}

export interface GroupSummary {
  readonly plane: 'metadata' | 'partition';
  readonly group: string;
  /** `stream/topic/partition` for a partition group. */
  readonly name: string;
  readonly view: number;
  readonly primary: number | null;
  readonly role: 'primary' | 'backup';
  readonly op: number;
  readonly commit: number;
  /** Ops journaled here above the commit point. */
  readonly uncommitted: number;
}

export interface StreamSummary {
  readonly id: number;
  readonly name: string;
  readonly topics: readonly {
    readonly id: number;
    readonly name: string;
    readonly partitions: readonly Omit<PartitionSeries, 'stream' | 'topic' | 'streamId' | 'topicId'>[];
    readonly consumerGroups: readonly {
      readonly id: number;
      readonly name: string;
      readonly members: number;
      readonly lag: number;
      readonly partitions: readonly Pick<ConsumerGroupLag, 'partition' | 'storedOffset' | 'lag'>[];
    }[];
  }[];
}

export interface NodeSummaryInput {
  readonly config: ShoalConfig;
  readonly version: string;
  readonly uptimeSeconds: number;
  readonly addresses: { readonly tcp: string | null; readonly http: string | null; readonly replica: string | null };
  readonly readiness: Readiness;
  readonly metadata: { readonly view: number; readonly status: MetadataStatusName; readonly commit: bigint; readonly caughtUp: boolean };
  readonly connections: number;
  readonly linkUp: (replica: number) => boolean;
  readonly threads: readonly ThreadStats[];
  readonly now: number;
}

export function nodeSummary(input: NodeSummaryInput): NodeSummary {
  const { config, threads } = input;
  const metadataGroup = threads.flatMap((t) => t.groups).find((g) => g.plane === 'metadata');
  const partitions = threads.flatMap((t) => t.partitions ?? []);
  const requests = threads.reduce((n, t) => n + Object.values(t.requests).reduce((a, b) => a + b, 0), 0);
  return {
    node: {
      name: config.node.name, replicaId: config.node.replicaId, cluster: config.cluster.enabled ? config.cluster.name : null,
      version: input.version, pid: process.pid, uptimeSeconds: input.uptimeSeconds, ...input.addresses,
      shards: config.system.sharding.shardCount,
    },
    ready: input.readiness.ready,
    readinessFailed: input.readiness.failed,
    metadata: {
      view: input.metadata.view, status: input.metadata.status, primary: input.readiness.primary, commit: Number(input.metadata.commit),
      op: metadataGroup?.op ?? 0, caughtUp: input.metadata.caughtUp,
    },
    peers: config.cluster.enabled
      ? config.cluster.nodes.filter((n) => n.replicaId !== config.node.replicaId)
        .map((n) => ({ replicaId: n.replicaId, name: n.name, linkUp: input.linkUp(n.replicaId) }))
      : [],
    traffic: {
      connections: input.connections,
      bytesReceived: threads.reduce((n, t) => n + t.bytesIn, 0),
      bytesSent: threads.reduce((n, t) => n + t.bytesOut, 0),
      requests,
      messagesAppended: partitions.reduce((n, p) => n + p.appended, 0),
    },
    groups: groupsOf(threads, partitions, input.readiness.primary),
    streams: streamsOf(threads, partitions),
    at: input.now,
  };
}

function groupsOf(threads: readonly ThreadStats[], partitions: readonly PartitionSeries[], metadataPrimary: number | null): GroupSummary[] {
  const named = new Map(partitions.map((p) => [p.group, p]));
  return threads.flatMap((t) => t.groups).map((g) => {
    const p = named.get(g.group);
    return {
      plane: g.plane, group: g.group, name: p === undefined ? g.plane : `${p.stream}/${p.topic}/${p.partition}`,
      view: g.view, primary: g.plane === 'metadata' ? metadataPrimary : (p?.primaryReplica ?? null), role: g.role,
      op: g.op, commit: g.commit, uncommitted: Math.max(0, g.op - g.commit),
    };
  }).sort((a, b) => (a.plane === b.plane ? a.name.localeCompare(b.name, 'en', { numeric: true }) : a.plane === 'metadata' ? -1 : 1));
}

function streamsOf(threads: readonly ThreadStats[], partitions: readonly PartitionSeries[]): StreamSummary[] {
  const catalog = threads.find((t) => t.catalog !== undefined)?.catalog;
  if (catalog === undefined) return [];
  const lags = threads.flatMap((t) => t.consumerGroups ?? []);
  return catalog.streams.map((stream) => ({
    id: stream.id, name: stream.name,
    topics: stream.topics.map((topic) => ({
      id: topic.id, name: topic.name,
      partitions: partitions.filter((p) => p.streamId === stream.id && p.topicId === topic.id)
        .sort((a, b) => a.partition - b.partition)
        .map(({ stream: _s, topic: _t, streamId: _si, topicId: _ti, ...rest }) => rest),
      consumerGroups: topic.consumerGroups.map((group) => {
        const mine = lags.filter((l) => l.stream === stream.name && l.topic === topic.name && l.groupId === group.id)
          .sort((a, b) => a.partition - b.partition)
          .map((l) => ({ partition: l.partition, storedOffset: l.storedOffset, lag: l.lag }));
        return { id: group.id, name: group.name, members: group.members, lag: mine.reduce((n, l) => n + l.lag, 0), partitions: mine };
      }),
    })),
  }));
}

/** One roster node as /api/v1/cluster lists it. */
export interface ClusterNodeEntry {
  readonly replicaId: number;
  readonly name: string;
  readonly http: string | null;
  readonly self: boolean;
  /** This node holds a replica link to it (always true for itself). */
  readonly linkUp: boolean;
  /** Its /api/v1/node answered (200, or 401 when `refused`). */
  readonly reachable: boolean;
  /**
   * It answered 401 to the caller's bearer: it does not know the token (yet: a node accepts a new
   * token once it applied its creation), or it was deleted.
   */
  readonly refused: boolean;
  readonly summary: NodeSummary | null;
  readonly error: string | null;
}

export interface ClusterSummary {
  readonly self: number;
  readonly cluster: string | null;
  readonly nodes: readonly ClusterNodeEntry[];
  readonly at: number;
}

const PEER_TIMEOUT_MS = 1000;

/**
 * Every roster node's summary: this one's as given, the others' fetched over HTTP with `bearer`
 * (the caller's, which this node verified; personal access tokens are cluster-wide metadata).
 */
export async function clusterSummary(config: ShoalConfig, self: NodeSummary, linkUp: (replica: number) => boolean, bearer: string): Promise<ClusterSummary> {
  if (!config.cluster.enabled) {
    return {
      self: config.node.replicaId, cluster: null, at: Date.now(),
      nodes: [{ replicaId: config.node.replicaId, name: config.node.name, http: self.node.http, self: true, linkUp: true, reachable: true, refused: false, summary: self, error: null }],
    };
  }
  const nodes = await Promise.all(config.cluster.nodes.map(async (n): Promise<ClusterNodeEntry> => {
    const http = n.ports.http === null ? null : `${n.ip}:${n.ports.http}`;
    if (n.replicaId === config.node.replicaId) {
      return { replicaId: n.replicaId, name: n.name, http: self.node.http ?? http, self: true, linkUp: true, reachable: true, refused: false, summary: self, error: null };
    }
    const base = { replicaId: n.replicaId, name: n.name, http, self: false, linkUp: linkUp(n.replicaId) };
    if (http === null) return { ...base, reachable: false, refused: false, summary: null, error: 'no http port in the roster' };
    try {
      const response = await fetch(`http://${http}/api/v1/node`, {
        headers: { authorization: `Bearer ${bearer}` }, signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
      });
      if (response.status === 401) {
        await response.body?.cancel();
        return { ...base, reachable: true, refused: true, summary: null, error: 'HTTP 401: it refused the token' };
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { ...base, reachable: false, refused: false, summary: null, error: `HTTP ${response.status}` };
      }
      return { ...base, reachable: true, refused: false, summary: (await response.json()) as NodeSummary, error: null };
    } catch (error) {
      return { ...base, reachable: false, refused: false, summary: null, error: error instanceof Error ? error.message : String(error) };
    }
  }));
  return { self: config.node.replicaId, cluster: config.cluster.name, nodes, at: Date.now() };
}
