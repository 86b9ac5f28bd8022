/**
 * What every worker thread (metadata or shard) sets up the same way: its typed `workerData`, a
 * logger, the status table, the control port to the supervisor (stats, drain, stop), and
 * `fatal(reason)`: one log line, a `fatal` message to the supervisor (which exits the process with
 * the reason's code), and no further work on this thread.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger, type Logger } from '../log/logger.js';
import { LogFile } from '../log/log-file.js';
import { join } from 'node:path';
import { DefaultMetrics } from '../metrics/default-metrics.js';
import { ThreadMetrics } from '../metrics/thread-metrics.js';
import { heapStats, type ThreadStats } from '../metrics/thread-stats.js';
import { Header, StatusTable } from '../status/status-table.js';
import { type BearerVerdict, type SupervisorToWorker, type WorkerToSupervisor, isSupervisorMessage } from './control.js';
import type { FatalReason } from './exit-codes.js';
import { currentThreadId } from './thread-id.js';
import { type WorkerData, isWorkerData, threadName } from './worker-data.js';

export interface WorkerControl {
  onDrain(deadlineMs: number): void;
  onStop(): void;
  onListenFd?(fd: number): void;
  /** A plaintext replica link handed over by the supervisor (replica-links.ts). */
  onAdoptReplica?(replica: number, fd: number, leftover: Uint8Array): void;
  /** TLS: run the replica plane on this thread. */
  onStartReplicaPlane?(): void;
  /** A personal access token presented on the HTTP port: valid? Answered now or once the metadata copy caught up (shards only; http-auth.ts). */
  verifyBearer?(token: string, answer: (verdict: BearerVerdict) => void): void;
  stats(): Omit<ThreadStats, 'thread' | 'heap' | 'loopDelay' | 'histograms' | 'nodejs'>;
}

export class WorkerRuntime {
  readonly data: WorkerData;
  readonly name: string;
  readonly log: Logger;
  readonly status: StatusTable;
  /** This thread's latency histograms (posted with every stats report). */
  readonly metrics = new ThreadMetrics();
  /** prom-client's per-isolate metrics; null when the node serves no metrics (nobody could read them). */
  readonly #defaults: DefaultMetrics | null;
  #fatal = false;
  /** The supervisor's `stop` arrived: the thread's drivers close, and no input is taken after. */
  #stopping = false;
  #control: WorkerControl | null = null;
  /** Control messages that arrived before `attach` (e.g. the listening fd while a shard still boots). */
  #early: SupervisorToWorker[] = [];
  /** How long this thread's event loop was late (a blocked shard shows here first). */
  readonly #loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    if (!isWorkerData(workerData) || parentPort === null) throw new Error('not started as a Shoal worker thread');
    this.data = workerData;
    this.name = threadName(workerData);
    this.status = StatusTable.attach(workerData.status);
    const logging = workerData.config.system.logging;
    const file = logging.fileEnabled
      ? new LogFile(join(workerData.config.system.path, logging.path), this.status.words, Header.LOG_GENERATION)
      : null;
    this.log = createLogger({ logging, thread: this.name, target: 'runtime', file });
    const served = workerData.config.node.listeners.http !== null && workerData.config.http.metrics.enabled;
    this.#defaults = served ? new DefaultMetrics(this.name) : null;
    parentPort.on('message', (message: unknown) => this.#onControl(message));
    this.#loopDelay.enable();
    this.post({ type: 'thread', tid: currentThreadId() });
  }

  /**
   * True once `fatal` ran or the supervisor's `stop` arrived: callers take no more input (a ring
   * message, a tick, a finished hash), so nothing reaches a driver whose files are closing.
   */
  get stopped(): boolean {
    return this.#fatal || this.#stopping;
  }

  attach(control: WorkerControl): void {
    this.#control = control;
    const early = this.#early;
    this.#early = [];
    for (const message of early) this.#onControl(message);
  }

  post(message: WorkerToSupervisor): void {
    parentPort?.postMessage(message);
  }

  /** A fatal during the stop itself (a failed last fdatasync) is still reported: not an exit 0. */
  fatal(reason: FatalReason, detail: string): void {
    if (this.#fatal) return;
    this.#fatal = true;
    this.log.error('fatal', { reason, detail });
    this.post({ type: 'fatal', reason, detail });
  }

  #onControl(message: unknown): void {
    if (!isSupervisorMessage(message)) return;
    const control = this.#control;
    const m: SupervisorToWorker = message;
    if (control === null) {
      this.#early.push(m);
      return;
    }
    switch (m.type) {
      case 'listen_fd':
        control.onListenFd?.(m.fd);
        return;
      case 'drain':
        control.onDrain(m.deadlineMs);
        return;
      case 'stop':
        this.#stopping = true;
        control.onStop();
        return;
      case 'adopt_replica':
        if (control.onAdoptReplica === undefined) this.log.error('a replica connection was handed over, but this node runs no replica plane', { replica: m.replica });
        else control.onAdoptReplica(m.replica, m.fd, m.leftover);
        return;
      case 'start_replica_plane':
        if (control.onStartReplicaPlane === undefined) this.fatal('assertion', 'start_replica_plane sent to a worker without a replica plane');
        else control.onStartReplicaPlane();
        return;
      case 'stats_request':
        void this.#report(m.id, m.gc, control);
        return;
      case 'bearer_request':
        if (control.verifyBearer === undefined) this.post({ type: 'bearer', id: m.id, verdict: 'unavailable' });
        else control.verifyBearer(m.token, (verdict) => this.post({ type: 'bearer', id: m.id, verdict }));
        return;
    }
  }

  async #report(id: number, gc: boolean, control: WorkerControl): Promise<void> {
    if (gc) (globalThis as { gc?: () => void }).gc?.();
    const body = control.stats();
    const heap = heapStats(process.memoryUsage());
    const v8heap = getHeapStatistics();
    const d = this.#loopDelay;
    const loopDelay = { p50Ms: d.percentile(50) / 1e6, p99Ms: d.percentile(99) / 1e6, maxMs: d.max / 1e6 };
    d.reset();
    const nodejs = (await this.#defaults?.isolate().catch(() => [])) ?? [];
    this.post({
      type: 'stats', id,
      stats: {
        ...body, thread: this.name, heap: { ...heap, usedBytes: v8heap.used_heap_size, totalBytes: v8heap.total_heap_size }, loopDelay,
        histograms: this.metrics.snapshot(), nodejs,
      },
    });
  }
}
