import type { NodeThreads } from './cpu.js';
import type { Workload } from './flags.js';

/**
 * The pluggable target interface. A *system* (Shoal, NATS) is a running cluster, started by a
 * `ClusterLauncher` or given by address; it offers one or more *paths* (the lean wire path the
 * headline figures come from, and the system's own client API as a secondary figure). One
 * benchmark run = one workload on one path of one system, on a fresh stream.
 *
 *   System ──paths()──▶ BenchTarget ──prepare(run)──▶ openProducer(k) ──send(request)──▶ AckInfo
 *                                   └───────────────▶ openConsumer(k) ──readPartition(p)──▶ sink
 */
export type SystemName = 'shoal' | 'nats';

/** One run's identity: the stream/topic names and the payload identity tag. */
export interface RunSpec {
  readonly id: string;
  readonly workload: Workload;
  /** Tag written into every payload (exactly-once check; foreign data is detected). */
  readonly runTag: number;
}

/** One request: `count` messages of one producer, numbered from `firstSeq`, for one partition. */
export interface OutgoingRequest {
  readonly producer: number;
  readonly firstSeq: number;
  readonly count: number;
  readonly partition: number;
}

/** Where the acknowledged messages landed: a base offset, one offset per message, or unknown. */
export interface AckInfo {
  readonly partition: number;
  readonly offsets: number | readonly number[] | null;
  /** The node that acknowledged (failover timing), when known. */
  readonly node?: string;
}

/** Callbacks for uncertain outcomes a channel retries on its own (failover mode only). */
export interface RetryObserver {
  /** The request's outcome is unknown and it is sent again (possible duplicate). */
  readonly resent: (request: OutgoingRequest) => void;
}

export interface ProducerChannel {
  /** Sends one request; resolves once a quorum acknowledged it (rejects on failure). */
  send(request: OutgoingRequest): Promise<AckInfo>;
  close(): Promise<void>;
}

export interface ConsumeSink {
  /** One consumed message (payload is a view, valid during the call). */
  message(partition: number, offset: number, payload: Uint8Array): void;
  /** One poll round trip (its latency), or a chunk of a continuous pull (latency null). */
  poll(latencyNs: number | null, messages: number, bytes: number): void;
}

export interface ConsumerChannel {
  /**
   * Reads `partition` from its first message until `expected` messages were read and the
   * partition is drained, or until `idleMs` pass without progress (the checker then reports what
   * is missing).
   */
  readPartition(partition: number, expected: number, sink: ConsumeSink, idleMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface BenchTarget {
  readonly system: SystemName;
  /** 'lean' (the headline figures) or the client-API path ('sdk', 'jetstream-api'). */
  readonly path: string;
  /** One line: what this path does on the wire. */
  readonly description: string;
  prepare(run: RunSpec, retry: RetryObserver | null): Promise<void>;
  openProducer(index: number): Promise<ProducerChannel>;
  openConsumer(index: number): Promise<ConsumerChannel>;
  /** Deletes the run's stream (frees disk between runs). */
  cleanup(): Promise<void>;
}

/** A running cluster of one system, and the paths to measure on it. */
export interface BenchSystem {
  readonly name: SystemName;
  /** Client addresses (host:port). */
  readonly addresses: readonly string[];
  /** PIDs of the server processes on this machine (CPU accounting); empty for a remote target. */
  serverPids(): readonly number[];
  /** The named threads of each server process (per-thread CPU); absent or empty when unknown. */
  serverThreads?(): readonly NodeThreads[];
  /** The paths measured for a workload (the first one is the headline). */
  targets(workload: Workload): readonly BenchTarget[];
  /** Human facts for the report (version, node count, storage settings). */
  readonly facts: Readonly<Record<string, string | number | boolean>>;
  close(): Promise<void>;
}

/**
 * Starts a local cluster and stops it (every process, temp directory) even on failure or Ctrl-C.
 * Implementations: `NatsLauncher` (nats-server), `ShoalLauncher` (apps/server).
 */
export interface ClusterLauncher {
  readonly name: SystemName;
  start(shape: ClusterShape): Promise<RunningCluster>;
}

export interface ClusterShape {
  readonly replicas: number;
  readonly shards: number;
}

export interface ClusterProcess {
  readonly index: number;
  readonly pid: number;
  /** Client address of this node (host:port). */
  readonly address: string;
  readonly alive: boolean;
}

export interface RunningCluster {
  readonly shape: ClusterShape;
  readonly processes: readonly ClusterProcess[];
  readonly addresses: readonly string[];
  /** Sends a signal to one node (failover: SIGKILL); resolves when it exited. */
  kill(index: number, signal: NodeJS.Signals): Promise<void>;
  /** The named threads of a node (Shoal: its `runtime/threads.json`), or null. */
  threads?(index: number): NodeThreads | null;
  /** The tail of a node's output (for error messages). */
  logTail(index: number): string;
  /** Stops every node (SIGTERM, then SIGKILL after a grace period) and removes the temp dir. */
  stop(): Promise<void>;
}

/** A target system cannot run here (missing binary, server not built, unreachable). */
export class TargetUnavailableError extends Error {
  override readonly name = 'TargetUnavailableError';
  constructor(readonly system: SystemName, message: string) {
    super(message);
  }
}
