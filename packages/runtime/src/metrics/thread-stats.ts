/**
 * What one worker reports when the supervisor asks (a `stats_request` control message, on every
 * metrics scrape and dashboard poll): plain data, posted with `postMessage`. The supervisor
 * renders the Prometheus text from these (metrics/exposition.ts) plus what it can read itself
 * (ring occupancy, the status table), and the dashboard's JSON (node/node-api.ts).
 */
import type { HistogramFamilySnapshot } from './histogram.js';

/** A metric as prom-client's `getMetricsAsJSON()` gives it (and `AggregatorRegistry.aggregate` takes it). */
export interface MetricJson {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary';
  readonly aggregator: 'sum' | 'first' | 'max' | 'min' | 'average' | 'omit';
  readonly values: readonly { readonly value: number; readonly labels: Readonly<Record<string, string | number>>; readonly metricName?: string }[];
}

/** One partition replica on its owner shard, labelled by names (stream, topic) and id. */
export interface PartitionSeries {
  readonly stream: string;
  readonly topic: string;
  readonly partition: number;
  readonly streamId: number;
  readonly topicId: number;
  /** The consensus group (u64 as a decimal string). */
  readonly group: string;
  /** Messages retained in the segments. */
  readonly messages: number;
  /** Messages appended since the partition was created or last purged (its next offset). */
  readonly appended: number;
  readonly currentOffset: number;
  readonly bytes: number;
  readonly segments: number;
  /** This replica is the group's acting primary. */
  readonly primary: boolean;
  /** The primary this replica knows (replica id), or null in a view change. */
  readonly primaryReplica: number | null;
  readonly view: number;
  readonly op: number;
  readonly commit: number;
}

/** A consumer group's position on one partition (computed on the partition's owner shard). */
export interface ConsumerGroupLag {
  readonly stream: string;
  readonly topic: string;
  readonly group: string;
  readonly groupId: number;
  readonly partition: number;
  /** The stored offset (the last message consumed), or null when the group stored none here. */
  readonly storedOffset: number | null;
  /** Messages after the stored offset (all retained messages when none is stored). */
  readonly lag: number;
}

/** The catalog as the metadata worker has it (names, counts, members), for the dashboard and gauges. */
export interface CatalogSummary {
  readonly streams: readonly {
    readonly id: number;
    readonly name: string;
    readonly topics: readonly {
      readonly id: number;
      readonly name: string;
      readonly partitions: number;
      readonly consumerGroups: readonly { readonly id: number; readonly name: string; readonly members: number }[];
    }[];
  }[];
}
export interface HeapStats {
  readonly usedBytes: number;
  readonly totalBytes: number;
  readonly externalBytes: number;
  readonly arrayBuffersBytes: number;
}

export type GroupRole = 'primary' | 'backup';

export interface GroupStats {
  /** The group id as a decimal string (u64). */
  readonly group: string;
  readonly plane: 'metadata' | 'partition';
  readonly view: number;
  readonly role: GroupRole;
  readonly status: string;
  readonly op: number;
  readonly commit: number;
  /** Metadata: WAL bytes. Partition: 0 (in-memory journal). */
  readonly journalBytes: number;
  /** Partition: bytes in segments. */
  readonly segmentBytes: number;
  readonly segments: number;
}

/** Handshake figures of a replica plane (wherever it runs). */
export interface HandshakeFigures {
  readonly established: number;
  readonly refused: Readonly<Record<string, number>>;
  readonly duplicatesClosed: number;
}

/** One peer replica's link as seen by the thread that holds it (or sends towards it). */
export interface ReplicaPeerStats {
  readonly peer: number;
  /** The link is on this thread and open. */
  readonly connected: boolean;
  readonly framesIn: number;
  readonly framesOut: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Outbound frames dropped because the peer's bounded queue was full. */
  readonly queueDropped: number;
  /** Inbound frames dropped by validation, by reason. */
  readonly dropReasons: Readonly<Record<string, number>>;
  /** Outbound frames dropped because no link to the peer was up. */
  readonly notConnected: number;
}

/** Event-loop delay since the previous report (perf_hooks monitorEventLoopDelay), milliseconds. */
export interface LoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface ThreadStats {
  /** `metadata` or `shard-<n>`. */
  readonly thread: string;
  readonly heap: HeapStats;
  readonly loopDelay: LoopDelay;
  /** Requests received by command name (the receiving thread counts them). */
  readonly requests: Readonly<Record<string, number>>;
  /** Committed ops applied, by plane. */
  readonly commits: { readonly metadata: number; readonly partition: number };
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly connectionsOpen: number;
  readonly connectionsAccepted: number;
  readonly connectionsClosed: number;
  /** Connections closed by a limit or a protocol error, by reason. */
  readonly connectionsRefused: Readonly<Record<string, number>>;
  readonly evictions: number;
  readonly channelMessagesSent: number;
  readonly channelMessagesReceived: number;
  readonly channelBacklogBytes: number;
  readonly groups: readonly GroupStats[];
  readonly replicaPeers: readonly ReplicaPeerStats[];
  /** TLS: the replica plane runs on this thread; its handshake figures. */
  readonly replicaHandshakes: HandshakeFigures | null;
  /** Consensus events of this thread's groups by `plane/event` (view changes, repairs, state transfers). */
  readonly consensusEvents: Readonly<Record<string, number>>;
  /** The thread's latency histograms (metrics/thread-metrics.ts). */
  readonly histograms: readonly HistogramFamilySnapshot[];
  /** prom-client's per-isolate `nodejs_*` metrics of this thread, labelled `thread`. */
  readonly nodejs: readonly MetricJson[];
  /** Shards: the partition replicas they own. */
  readonly partitions?: readonly PartitionSeries[];
  /** Shards: consumer-group positions on the partitions they own. */
  readonly consumerGroups?: readonly ConsumerGroupLag[];
  /** Metadata worker: the catalog. */
  readonly catalog?: CatalogSummary;
}

/** Counts consensus events by `plane/event` for the metrics. */
export class EventCounts {
  readonly #counts: Record<string, number> = {};

  add(plane: 'metadata' | 'partition', event: string): void {
    const key = `${plane}/${event}`;
    this.#counts[key] = (this.#counts[key] ?? 0) + 1;
  }

  snapshot(): Record<string, number> {
    return { ...this.#counts };
  }
}

export function heapStats(memory: NodeJS.MemoryUsage): HeapStats {
  return {
    usedBytes: memory.heapUsed,
    totalBytes: memory.heapTotal,
    externalBytes: memory.external,
    arrayBuffersBytes: memory.arrayBuffers,
  };
}
