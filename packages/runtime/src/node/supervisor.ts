/**
 * The main thread of a node: acceptor and supervisor. It owns the configuration, the data
 * directory's identity (and `--fresh`), the shared memory (ring mesh, status table), the worker
 * threads, the HTTP port (metrics, probes, dashboard: node/http-server.ts), signals and the exit
 * code. It does no per-frame work: client sockets live on the shards (a shared listening socket,
 * client-plane/listener.ts). In cluster mode it starts the replica plane once every worker
 * serves: plaintext, the listener, dialer and handshakes run here and each established link's fd
 * is handed to a shard (`adopt_replica`); TLS, the whole plane runs on one shard
 * (`start_replica_plane`). See docs/cluster.md.
 *
 * ```
 *  boot:   --fresh wipe ─▶ openDataDir (identity) ─▶ log file ─▶ status table + ring mesh
 *          ─▶ metadata worker (recovers, sends the snapshot) + N shard workers
 *          ─▶ shard 0 binds tcp.address, reports the fd ─▶ relayed to shards 1..N-1 ─▶ all ready
 *          ─▶ cluster mode: replica plane started ─▶ one `ready` log line with the bound addresses
 *  run:    GET metrics.endpoint ─▶ stats_request to every worker ─▶ Prometheus text
 *          GET /ready ─▶ the status table (node/readiness.ts); GET /api/v1/* (bearer), /ui (node/http-server.ts)
 *          a worker exits or throws, or reports `fatal` ─▶ fatal log line ─▶ exit(code of reason)
 *  stop:   SIGINT / SIGTERM ─▶ drain every shard (stop accepting, answer in-flight, close
 *          clients; bounded by shutdown_drain_timeout) ─▶ stop every worker (flush, fsync,
 *          close; bounded by shutdown_join_timeout) ─▶ exit 0
 * ```
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createMesh, meshEndpoints, type Mesh } from '@shoal/ring';
import { RealDisk, identityFor, openDataDir, sweepDeletedPartitions, wipeDataDir } from '@shoal/storage';
import { renderConfig, type ShoalConfig } from '../config/index.js';
import { createLogger, type Logger } from '../log/logger.js';
import { LOG_FILE_NAME, LogFile, rotateLogs } from '../log/log-file.js';
import { DefaultMetrics } from '../metrics/default-metrics.js';
import { histogramMetric, renderExposition } from '../metrics/exposition.js';
import { nodeMetrics } from '../metrics/prometheus.js';
import type { ThreadStats } from '../metrics/thread-stats.js';
import { Header, StatusTable, type StatusTableHandle } from '../status/status-table.js';
import { randomU128 } from '../engine/clock.js';
import { type SupervisorToWorker, type WorkerToSupervisor, isWorkerMessage } from './control.js';
import { type FatalReason, exitCodeOf } from './exit-codes.js';
import { type ClientTlsMaterial, loadClientTls } from '../client-plane/tls.js';
import { ReplicaPlane, ReplicaPlaneError } from '../replica-plane/index.js';
import { handshakeFigures } from './replica-links.js';
import { currentThreadId } from './thread-id.js';
import { NodeHttpServer } from './http-server.js';
import { BearerChecks, isStaticToken } from './http-auth.js';
import { type NodeSummary, clusterSummary, nodeSummary } from './node-api.js';
import { type Readiness, readiness } from './readiness.js';
import { METADATA_THREAD, type WorkerData, shardThread } from './worker-data.js';

export const SHOAL_VERSION = '0.1.0';

/** How long a scrape waits for the workers' stats. */
const STATS_TIMEOUT_MS = 2_000;
/** Partition slots of the status table (a power of two). */
const PARTITION_SLOTS = 1 << 16;

export interface SupervisorOptions {
  readonly config: ShoalConfig;
  readonly warnings?: readonly string[];
  /** Stdout logger sinks (tests). */
  readonly log?: Logger;
}

interface WorkerEntry {
  readonly name: string;
  readonly thread: number;
  readonly worker: Worker;
  ready: boolean;
  /** Kernel thread id, once the worker reported it (`thread`); null where unknown. */
  tid: number | null;
  /** Peer replicas whose plaintext link this worker holds (handOffReplica). */
  readonly links: Set<number>;
  /** Reported `stopped`: its thread may end now. */
  stopped: boolean;
}

type Phase = 'starting' | 'running' | 'draining' | 'stopping' | 'exiting';

export class Supervisor {
  readonly #config: ShoalConfig;
  #log: Logger;
  #phase: Phase = 'starting';
  #workers: WorkerEntry[] = [];
  #mesh: Mesh | null = null;
  #status: StatusTable | null = null;
  #http: NodeHttpServer | null = null;
  /** process_* and the main thread's nodejs_* (prom-client). */
  #defaults: DefaultMetrics | null = null;
  #logFile: LogFile | null = null;
  #statsId = 0;
  readonly #statsWaiters = new Map<number, { stats: ThreadStats[]; expected: number; done: (s: ThreadStats[]) => void }>();
  readonly #bearers = new BearerChecks((id, token) => this.#askShard(id, token));
  readonly #startedAt = Date.now();
  #httpAddress: string | null = null;
  #tcpAddress: string | null = null;
  #timers: NodeJS.Timeout[] = [];
  /** Bounds the start only (`system.sharding.start_timeout`): cleared once every worker serves. */
  #startTimer: NodeJS.Timeout | null = null;
  #signalledAt = 0;
  /** The `ready` line was logged: every worker serves (and, in a cluster, the replica plane listens). */
  #serving = false;
  #replicaHandOffs = 0;
  /** Plaintext cluster: the replica plane (listener, dialer, handshakes) on this thread. */
  #replicaPlane: ReplicaPlane | null = null;
  #replicaPlaneStarted: ((address: string | null) => void) | null = null;
  /** Where the replica listener is bound (either mode). */
  #replicaAddress: string | null = null;

  constructor(options: SupervisorOptions) {
    this.#config = options.config;
    this.#log = options.log ?? createLogger({ logging: options.config.system.logging, thread: 'main', target: 'runtime::supervisor' });
    for (const warning of options.warnings ?? []) this.#log.warn(warning);
  }

  async start(): Promise<void> {
    const config = this.#config;
    process.on('uncaughtException', (error) => this.fatal('uncaught', error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error)));
    process.on('unhandledRejection', (error) => this.fatal('uncaught', `unhandled rejection: ${String(error)}`));
    this.#prepareDataDir();
    const status = this.#createStatus();
    this.#openLogFile(status);
    this.#log.info('starting', {
      version: SHOAL_VERSION, node: config.node.name, replica: config.node.replicaId, replicas: config.node.replicaCount,
      shards: config.system.sharding.shardCount, data: config.system.path, config: config.boot.configPath,
    });
    this.#log.debug('effective configuration', { toml: renderConfig(config) });
    const clientTls = this.#clientTls();
    const threadCount = config.system.sharding.shardCount + 1;
    const mesh = createMesh({ threadCount, capacityBytes: config.system.sharding.ringSizeBytes });
    this.#mesh = mesh;
    const incarnation = randomU128().toString();
    const common = { config, status: { kind: 'shoal.status', buffer: status.words.buffer } as StatusTableHandle, incarnation };
    this.#spawn('metadata', METADATA_THREAD, { ...common, role: 'metadata', mesh: meshEndpoints(mesh, METADATA_THREAD) }, 'metadata/metadata-worker.js');
    for (let shard = 0; shard < config.system.sharding.shardCount; shard++) {
      const thread = shardThread(shard);
      this.#spawn(`shard-${shard}`, thread, { ...common, role: 'shard', shard, mesh: meshEndpoints(mesh, thread), clientTls }, 'shard/shard-worker.js');
    }
    const startTimeoutMs = config.system.sharding.startTimeoutMs;
    this.#startTimer = setTimeout(() => {
      const late = this.#workers.filter((w) => !w.ready).map((w) => w.name);
      this.fatal('worker_start_timeout', `not ready after ${startTimeoutMs} ms: ${late.join(', ')}`);
    }, startTimeoutMs);
    this.#startTimer.unref();
    await this.#startHttp();
    process.on('SIGINT', () => void this.shutdown('SIGINT'));
    process.on('SIGTERM', () => void this.shutdown('SIGTERM'));
    this.#startLogRotation(status);
  }

  /**
   * The cluster issue's entry point for replica connections: after the replica handshake on this
   * thread (replica-plane/), the socket's fd and the bytes read past ReplicaFinish go to one
   * worker, round-robin over the shards (shard 0 skipped when
   * `cluster.coordinator.skip_shard_zero_for_replicas` and there are several shards). The caller
   * parks its own handle and never closes it (node-runtime-notes.md). Returns the worker's thread.
   */
  handOffReplica(replica: number, fd: number, leftover: Uint8Array): number {
    const eligible = this.#replicaShards();
    const target = eligible[this.#replicaHandOffs++ % eligible.length] as WorkerEntry;
    // Published before the worker adopts: frames sent meanwhile wait in the owner's ring.
    this.#status?.publishReplicaOwner(replica, target.thread);
    this.#post(target, { type: 'adopt_replica', replica, fd, leftover });
    for (const w of this.#workers) w.links.delete(replica);
    target.links.add(replica);
    if (this.#phase === 'running') this.#writeThreads();
    return target.thread;
  }

  /** Shards that may own replica links (§10.3: shard 0 skipped when configured and there are others). */
  #replicaShards(): WorkerEntry[] {
    const shards = this.#workers.filter((w) => w.thread !== METADATA_THREAD);
    return this.#config.cluster.coordinator.skipShardZeroForReplicas && shards.length > 1 ? shards.slice(1) : shards;
  }

  /**
   * Cluster mode, once every worker serves. Plaintext: the plane runs here and hands each
   * established link to a shard by fd. TLS: a TLS session cannot change threads, so the whole
   * plane runs on one shard (the first replica shard) and every thread reaches it through rings.
   */
  async #startReplicaPlane(): Promise<void> {
    const config = this.#config;
    if (config.cluster.tls.enabled) {
      const owner = this.#replicaShards()[0] as WorkerEntry;
      const started = new Promise<string | null>((resolve) => {
        this.#replicaPlaneStarted = resolve;
      });
      for (let peer = 0; peer < config.node.replicaCount; peer++) if (peer !== config.node.replicaId) owner.links.add(peer);
      this.#post(owner, { type: 'start_replica_plane' });
      this.#replicaAddress = await started;
      return;
    }
    try {
      this.#replicaPlane = await ReplicaPlane.start({
        config,
        log: this.#log.child('replica'),
        handOff: (peer, pkg) => {
          this.handOffReplica(peer, pkg.fd, pkg.leftover);
        },
      });
    } catch (error) {
      const listen = error instanceof ReplicaPlaneError && error.code === 'listen_failed';
      this.fatal(listen ? 'listen_failed' : 'config_invalid', `replica plane: ${error instanceof Error ? error.message : String(error)}`);
    }
    const address = this.#replicaPlane.address;
    this.#replicaAddress = address === null ? null : `${address.host}:${address.port}`;
  }

  /** Exit the node: one fatal line, then the reason's exit code. Never returns. */
  fatal(reason: FatalReason, detail: string): never {
    if (this.#phase !== 'exiting') {
      this.#phase = 'exiting';
      this.#log.error('fatal', { reason, code: exitCodeOf(reason), detail });
    }
    process.exit(exitCodeOf(reason));
  }

  async shutdown(signal: string): Promise<void> {
    // A signal delivered twice at once (to the process and to its group, as `timeout` does) is one.
    if (Date.now() - this.#signalledAt < 1000) return;
    this.#signalledAt = Date.now();
    if (this.#phase === 'draining' || this.#phase === 'stopping') {
      this.#log.warn('second signal during shutdown: exiting now', { signal });
      process.exit(exitCodeOf('shutdown_timeout'));
    }
    if (this.#phase === 'exiting') return;
    const sharding = this.#config.system.sharding;
    const joinDeadline = setTimeout(() => this.fatal('shutdown_timeout', `workers did not stop within ${sharding.shutdownJoinTimeoutMs} ms`), sharding.shutdownJoinTimeoutMs);
    joinDeadline.unref();
    this.#log.info('shutting down', { signal });
    this.#phase = 'draining';
    this.#http?.close();
    const shards = this.#workers.filter((w) => w.thread !== METADATA_THREAD);
    await this.#broadcastAndWait(shards, { type: 'drain', deadlineMs: sharding.shutdownDrainTimeoutMs }, 'drained');
    this.#phase = 'stopping';
    // Replica links stay up while clients drain (their writes still need a quorum); then no new
    // links: the workers close theirs when they stop.
    await this.#replicaPlane?.stop();
    await this.#broadcastAndWait(this.#workers, { type: 'stop' }, 'stopped');
    this.#phase = 'exiting';
    for (const timer of this.#timers) clearInterval(timer);
    this.#log.info('stopped', { signal });
    this.#logFile?.close();
    process.exit(0);
  }

  // ---- boot ---------------------------------------------------------------------------------

  #prepareDataDir(): void {
    const config = this.#config;
    const disk = new RealDisk();
    const root = config.system.path;
    if (config.boot.fresh) {
      const wiped = wipeDataDir(disk, root);
      if (!wiped.ok) this.fatal('data_dir_wipe_failed', wiped.error.message);
      this.#log.warn('--fresh: data directory wiped', { path: root, removed: wiped.value.removed, kept: wiped.value.kept });
    }
    // A cluster's root user must come out the same whichever node creates it, so its first boot
    // needs explicit credentials (the reference's `validate_root_credentials_env`); after --fresh
    // a replica counts as booting for the first time.
    if (config.cluster.enabled && config.root.password === null && !existsSync(join(root, 'metadata'))) {
      this.fatal('config_invalid', 'root credentials required on the first boot of a cluster node: set IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD (the same on every node), or pass --with-default-root-credentials for development');
    }
    const opened = openDataDir(disk, root, identityFor(config.cluster.name, config.node.replicaId));
    if (!opened.ok) this.fatal('data_dir_refused', opened.error.message);
    if (opened.value.created) this.#log.info('data directory created', { path: root });
    // Deleted partitions whose directory removal a disk error cut short (partition-removal.ts).
    const swept = sweepDeletedPartitions(disk, root);
    if (!swept.ok) this.#log.warn('deleted partition directories left for the next boot', { error: swept.error.message });
    else if (swept.value.length > 0) this.#log.info('deleted partition directories removed', { paths: swept.value });
  }

  /** `[tcp.tls]` material for the shards (after the data directory exists: a self-signed pair lives there). */
  #clientTls(): ClientTlsMaterial | null {
    try {
      const material = loadClientTls(this.#config);
      if (material !== null) this.#log.info('client listener TLS', { certificate: material.source, versions: 'TLSv1.2, TLSv1.3' });
      return material;
    } catch (error) {
      this.fatal('config_invalid', error instanceof Error ? error.message : String(error));
    }
  }

  #createStatus(): StatusTable {
    const config = this.#config;
    const shardCount = config.system.sharding.shardCount;
    const connectionsMax = config.tcp.connectionsMax;
    const handle = StatusTable.create({
      shardCount,
      threadCount: shardCount + 1,
      // Any shard may take every connection, but not more than 4× its fair share (and 1,024 at least).
      sessionSlotsPerShard: Math.min(connectionsMax, Math.max(1024, Math.ceil((4 * connectionsMax) / shardCount))),
      partitionSlots: PARTITION_SLOTS,
      startTimeMicros: BigInt(Date.now()) * 1000n,
    });
    this.#status = StatusTable.attach(handle);
    return this.#status;
  }

  #openLogFile(status: StatusTable): void {
    const config = this.#config;
    const logging = config.system.logging;
    if (!logging.fileEnabled) return;
    this.#logFile = new LogFile(join(config.system.path, logging.path), status.words, Header.LOG_GENERATION);
    this.#log = createLogger({ logging, thread: 'main', target: 'runtime::supervisor', file: this.#logFile });
  }

  #startLogRotation(status: StatusTable): void {
    const logging = this.#config.system.logging;
    if (!logging.fileEnabled) return;
    const dir = join(this.#config.system.path, logging.path);
    const timer = setInterval(() => {
      try {
        if (rotateLogs(dir, logging, status.words, Header.LOG_GENERATION, Date.now())) this.#log.info('log file rotated', { file: LOG_FILE_NAME });
      } catch (error) {
        this.#log.warn('log rotation failed', { error });
      }
    }, logging.rotationCheckIntervalMs);
    timer.unref();
    this.#timers.push(timer);
  }

  #spawn(name: string, thread: number, data: WorkerData, file: string): void {
    const worker = new Worker(new URL(`../${file}`, import.meta.url), { workerData: data, name: `shoal-${name}` });
    const entry: WorkerEntry = { name, thread, worker, ready: false, tid: null, links: new Set(), stopped: false };
    this.#workers.push(entry);
    worker.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) this.#onWorkerMessage(entry, message);
    });
    worker.on('error', (error) => {
      const reason: FatalReason = error.name === 'AssertionError' ? 'assertion' : 'worker_crashed';
      this.fatal(reason, `${name}: ${error.name}: ${error.message}\n${error.stack ?? ''}`);
    });
    worker.on('exit', (code) => {
      if (this.#phase === 'exiting' || entry.stopped) return;
      this.fatal('worker_crashed', `${name} exited (code ${code})`);
    });
  }

  #onWorkerMessage(entry: WorkerEntry, message: WorkerToSupervisor): void {
    switch (message.type) {
      case 'listening':
        this.#tcpAddress = `${message.host}:${message.port}`;
        for (const w of this.#workers) {
          if (w.thread !== METADATA_THREAD && w !== entry) this.#post(w, { type: 'listen_fd', fd: message.fd });
        }
        return;
      case 'thread':
        entry.tid = message.tid;
        return;
      case 'ready':
        entry.ready = true;
        if (this.#phase === 'starting' && this.#workers.every((w) => w.ready)) void this.#onAllReady();
        return;
      case 'replica_closed':
        entry.links.delete(message.replica);
        this.#replicaPlane?.releaseHandedOff(message.replica);
        return;
      case 'replica_plane':
        this.#replicaPlaneStarted?.(message.address);
        this.#replicaPlaneStarted = null;
        return;
      case 'fatal':
        this.fatal(message.reason, `${entry.name}: ${message.detail}`);
        return;
      case 'stats': {
        const waiter = this.#statsWaiters.get(message.id);
        if (waiter === undefined) return;
        waiter.stats.push(message.stats);
        if (waiter.stats.length === waiter.expected) waiter.done(waiter.stats);
        return;
      }
      case 'bearer':
        this.#bearers.settle(message.id, message.verdict);
        return;
      case 'stopped':
        entry.stopped = true;
        this.#acks.get(message.type)?.(entry);
        return;
      case 'drained':
        this.#acks.get(message.type)?.(entry);
        return;
    }
  }

  async #onAllReady(): Promise<void> {
    this.#phase = 'running';
    if (this.#startTimer !== null) clearTimeout(this.#startTimer);
    this.#startTimer = null;
    if (this.#config.cluster.enabled) await this.#startReplicaPlane();
    if (this.#phase !== 'running') return; // a signal or a fatal error while the plane started
    this.#writeRuntimeConfig();
    this.#writeThreads();
    this.#serving = true;
    this.#log.info('ready', {
      tcp: this.#tcpAddress, http: this.#httpAddress, shards: this.#config.system.sharding.shardCount,
      ...(this.#config.cluster.enabled ? { replica: this.#config.node.replicaId, replicaAddress: this.#replicaAddress } : {}),
      pid: process.pid, startupMs: Date.now() - this.#startedAt,
    });
  }

  /** `{system.path}/{runtime.path}/current_config.toml`, as the reference writes it (secrets masked). */
  #writeRuntimeConfig(): void {
    const config = this.#config;
    try {
      const dir = join(config.system.path, config.system.runtime.path);
      mkdirSync(dir, { recursive: true });
      const bound = `# bound: tcp ${this.#tcpAddress ?? 'off'}, http ${this.#httpAddress ?? 'off'}\n`;
      writeFileSync(join(dir, 'current_config.toml'), bound + renderConfig(config));
    } catch (error) {
      this.#log.warn('could not write the runtime config', { error });
    }
  }

  /**
   * `{system.path}/{runtime.path}/threads.json`: this process's threads by role with their kernel
   * thread ids, and which shard holds which peer's replica link (rewritten on every hand-off).
   * Read by tools that account CPU per thread from `/proc/<pid>/task/<tid>/stat` (the load
   * bench's shard-scaling report, bench/README.md). Threads not listed (V8's platform workers:
   * GC and compilers; the libuv pool; piscina) are the process total minus these.
   */
  #writeThreads(): void {
    const config = this.#config;
    const threads = [
      { name: 'supervisor', role: 'supervisor', tid: currentThreadId(), links: [] as number[] },
      ...this.#workers.map((w) => ({ name: w.name, role: w.thread === METADATA_THREAD ? 'metadata' : 'shard', tid: w.tid, links: [...w.links].sort((a, b) => a - b) })),
    ];
    try {
      const dir = join(config.system.path, config.system.runtime.path);
      mkdirSync(dir, { recursive: true });
      const tmp = join(dir, 'threads.json.tmp');
      writeFileSync(tmp, `${JSON.stringify({ pid: process.pid, threads })}\n`);
      renameSync(tmp, join(dir, 'threads.json'));
    } catch (error) {
      this.#log.warn('could not write the thread table', { error });
    }
  }

  // ---- workers ------------------------------------------------------------------------------

  readonly #acks = new Map<'drained' | 'stopped', (entry: WorkerEntry) => void>();

  #broadcastAndWait(targets: readonly WorkerEntry[], message: SupervisorToWorker, ack: 'drained' | 'stopped'): Promise<void> {
    return new Promise((resolve) => {
      const waiting = new Set(targets);
      if (waiting.size === 0) {
        resolve();
        return;
      }
      this.#acks.set(ack, (entry) => {
        waiting.delete(entry);
        if (waiting.size === 0) {
          this.#acks.delete(ack);
          resolve();
        }
      });
      for (const target of targets) this.#post(target, message);
    });
  }

  #post(entry: WorkerEntry, message: SupervisorToWorker): void {
    entry.worker.postMessage(message);
  }

  #collectStats(gc: boolean): Promise<ThreadStats[]> {
    const id = ++this.#statsId;
    return new Promise((resolve) => {
      const finish = (stats: ThreadStats[]): void => {
        clearTimeout(timer);
        this.#statsWaiters.delete(id);
        resolve(stats.sort((a, b) => a.thread.localeCompare(b.thread)));
      };
      const timer = setTimeout(() => finish(this.#statsWaiters.get(id)?.stats ?? []), STATS_TIMEOUT_MS);
      this.#statsWaiters.set(id, { stats: [], expected: this.#workers.length, done: finish });
      for (const w of this.#workers) this.#post(w, { type: 'stats_request', id, gc });
    });
  }

  // ---- HTTP: metrics, probes, dashboard ----------------------------------------------------

  async #startHttp(): Promise<void> {
    const config = this.#config;
    const endpoint = config.node.listeners.http;
    if (endpoint === null) return;
    if (config.http.metrics.enabled) this.#defaults = new DefaultMetrics('main');
    const server = new NodeHttpServer({
      metrics: (gc) => this.#metricsText(gc),
      readiness: () => this.#readiness(),
      verifyBearer: (token) => (isStaticToken(token, config.http.metrics.token) ? Promise.resolve('ok') : this.#bearers.check(token)),
      node: async () => this.#nodeSummary(await this.#collectStats(false)),
      cluster: async (bearer) => clusterSummary(config, this.#nodeSummary(await this.#collectStats(false)), (r) => this.#linkUp(r), bearer),
    }, config.http.metrics.enabled ? config.http.metrics.endpoint : null, this.#log.child('http'));
    this.#http = server;
    try {
      const bound = await server.listen(endpoint.host, endpoint.port);
      this.#httpAddress = `${bound.host}:${bound.port}`;
      this.#status?.publishBoundPort('http', bound.port);
    } catch (error) {
      this.fatal('listen_failed', `http ${endpoint.host}:${endpoint.port}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A bearer check goes to the first serving shard: each holds a metadata copy. */
  #askShard(id: number, token: string): boolean {
    const shard = this.#workers.find((w) => w.thread !== METADATA_THREAD && w.ready && !w.stopped);
    if (shard === undefined) return false;
    this.#post(shard, { type: 'bearer_request', id, token });
    return true;
  }

  #linkUp(replica: number): boolean {
    return replica === this.#config.node.replicaId || (this.#status?.replicaOwner(replica) ?? -1) >= 0;
  }

  #readiness(): Readiness {
    const status = this.#status;
    const config = this.#config;
    const metadata = status?.metadata() ?? { status: 'recovering' as const, primary: 0 };
    return readiness({
      serving: this.#phase === 'running' && this.#serving,
      replicaCount: config.node.replicaCount,
      self: config.node.replicaId,
      metadata,
      caughtUp: status?.metadataCaughtUp ?? false,
      linkUp: (r) => this.#linkUp(r),
    });
  }

  async #metricsText(gc: boolean): Promise<string> {
    // `?gc=1` asks every thread to collect garbage first (needs --expose-gc; tests measure heaps with it).
    const threads = await this.#collectStats(gc);
    const mesh = this.#mesh;
    const status = this.#status;
    if (mesh === null || status === null) return '';
    if (gc) (globalThis as { gc?: () => void }).gc?.();
    const config = this.#config;
    const shoal = nodeMetrics({
      version: SHOAL_VERSION, node: config.node.name, threads, mesh,
      threadName: (thread: number) => (thread === METADATA_THREAD ? 'metadata' : `shard-${thread - 1}`),
      connectionsOpen: status.connectionsOpen, main: process.memoryUsage(), cpu: process.cpuUsage(),
      uptimeSeconds: (Date.now() - this.#startedAt) / 1000,
      replicaHandshakes: this.#replicaPlane === null ? null : handshakeFigures(this.#replicaPlane),
      ready: this.#readiness().ready,
      threadsMissing: Math.max(0, this.#workers.length - threads.length),
    });
    const defaults = (await this.#defaults?.all()) ?? [];
    return renderExposition([defaults, ...threads.map((t) => t.nodejs), shoal, ...threads.map((t) => t.histograms.map(histogramMetric))]);
  }

  #nodeSummary(threads: readonly ThreadStats[]): NodeSummary {
    const status = this.#status;
    const metadata = status?.metadata() ?? { view: 0, status: 'recovering' as const, primary: 0, commit: 0n };
    return nodeSummary({
      config: this.#config, version: SHOAL_VERSION, uptimeSeconds: (Date.now() - this.#startedAt) / 1000,
      addresses: { tcp: this.#tcpAddress, http: this.#httpAddress, replica: this.#replicaAddress },
      readiness: this.#readiness(),
      metadata: { view: metadata.view, status: metadata.status, commit: metadata.commit, caughtUp: status?.metadataCaughtUp ?? false },
      connections: status?.connectionsOpen ?? 0,
      linkUp: (r) => this.#linkUp(r),
      threads,
      now: Date.now(),
    });
  }
}

/** Boots a node with a validated configuration; resolves once it is starting (not ready). */
export async function runNode(options: SupervisorOptions): Promise<Supervisor> {
  const supervisor = new Supervisor(options);
  await supervisor.start();
  return supervisor;
}
