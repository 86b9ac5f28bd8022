/**
 * What one worker reports when the supervisor asks (a `stats_request` control message, on every
 * metrics scrape): plain data, posted with `postMessage`. The supervisor renders the Prometheus
 * text from these (metrics/prometheus.ts) plus what it can read itself (ring occupancy).
 */
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
