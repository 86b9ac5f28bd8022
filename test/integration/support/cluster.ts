/**
 * A real cluster for tests: N `shoal-server` processes (the compiled binary) on loopback with a
 * generated roster, one config file per node (`@shoal/server` renderClusterConfig), replica auth
 * on by default, 1 shard per node (the suite runs on 2 cores).
 *
 * With `proxies: true` every replica link goes through an in-test TCP proxy (test/support): node
 * a dials node b (a < b) at a proxy that forwards to b, so a test can partition, corrupt or cut
 * any one pair. The proxy is in node a's roster only (node b listens on its real port). The
 * client ports the nodes reach each other on (forwarded partition requests, docs/cluster.md) go
 * through a proxy per ordered pair the same way, so `isolate` cuts a node off completely.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShoalClient, type ClientOptions, type ClusterView } from '@shoal/client';
import { renderClusterConfig, type LocalNode } from '@shoal/server';
import { TcpProxy } from '../../support/tcp-proxy.js';
import { DEFAULT_ROOT_FLAG, SERVER_BIN } from './server.js';
import { scrape } from './scrape.js';

export interface TestClusterOptions {
  readonly nodes?: number;
  readonly shards?: number;
  readonly name?: string;
  /** Shared secret; null: auth off. Default: a fixed 40-byte test secret. */
  readonly secret?: string | null;
  readonly tls?: 'off' | 'self_signed';
  readonly proxies?: boolean;
  /** Extra `[cluster]` keys, rendered (`heartbeat_timeout = "2s"`). */
  readonly clusterKeys?: readonly string[];
  /** Extra TOML sections appended to every node's file. */
  readonly extraToml?: string;
  /** Start only these replica ids (default: all). */
  readonly start?: readonly number[];
  /** The client port serves TLS (`[tcp.tls]` in extraToml): what every client of the cluster uses. */
  readonly clientTls?: ClientOptions['tls'];
  readonly readyTimeoutMs?: number;
}

export const TEST_SECRET = 'shoal-cluster-test-secret-0123456789abcdef';
export const CREDENTIALS = { username: 'iggy', password: 'iggy' } as const;
/** Every node's `http.metrics.token` (SHOAL_HTTP_METRICS_TOKEN): how `metrics()` scrapes. */
export const SCRAPE_TOKEN = randomBytes(24).toString('hex');

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  })));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/**
 * A proxy to `port` on a port no node of the roster uses: the roster's ports were only probed
 * free (and released) by `freePorts`, so the kernel may hand one of them to a proxy's listen(0),
 * and a node then refuses its roster (two roles on one ip:port).
 */
async function proxyOutside(taken: Set<number>, port: number): Promise<TcpProxy> {
  for (;;) {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    if (!taken.has(proxy.port)) {
      taken.add(proxy.port);
      return proxy;
    }
    await proxy.stop();
  }
}

export class NodeProcess {
  readonly id: number;
  readonly lines: string[] = [];
  child: ChildProcess | null = null;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });
  #ready = false;

  constructor(id: number) {
    this.id = id;
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  get ready(): boolean {
    return this.#ready;
  }

  start(configPath: string, dataDir: string, args: readonly string[], timeoutMs: number): Promise<void> {
    this.#ready = false;
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    delete env['NODE_OPTIONS'];
    delete env['VITEST'];
    env['SHOAL_HTTP_METRICS_TOKEN'] = SCRAPE_TOKEN;
    // The suite logs in as CREDENTIALS: every node gets them explicitly (a cluster's first boot needs them).
    const child = spawn(process.execPath, [SERVER_BIN, '--config', configPath, '--replica-id', String(this.id), DEFAULT_ROOT_FLAG, ...args], {
      env, stdio: ['ignore', 'pipe', 'pipe'], cwd: dataDir,
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`node ${this.id} not ready in ${timeoutMs} ms:\n${this.tail()}`)), timeoutMs);
      timer.unref();
      const onLine = (line: string): void => {
        this.lines.push(line);
        if (!this.#ready && line.includes('"msg":"ready"')) {
          this.#ready = true;
          clearTimeout(timer);
          resolve();
        }
      };
      for (const stream of [child.stdout, child.stderr]) {
        let buffered = '';
        stream?.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
            onLine(buffered.slice(0, at));
            buffered = buffered.slice(at + 1);
          }
        });
      }
      void this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        if (!this.#ready) reject(new Error(`node ${this.id} exited before ready (code ${code}, signal ${signal}):\n${this.tail()}`));
      });
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) this.child?.kill(signal);
    return this.exited;
  }

  tail(count = 40): string {
    return this.lines.slice(-count).join('\n');
  }

  /** Parsed log records whose `msg` is `msg`. */
  records(msg: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export class TestCluster {
  readonly dir: string;
  readonly name: string;
  readonly secret: string | null;
  readonly nodes: readonly NodeProcess[];
  readonly tcp: readonly number[];
  readonly replicaPorts: readonly number[];
  readonly http: readonly number[];
  readonly #options: TestClusterOptions;
  /** `${a}-${b}` → proxy between dialer a and acceptor b. */
  readonly #proxies = new Map<string, TcpProxy>();
  /** `${a}>${b}` → proxy node a reaches node b's client port through. */
  readonly #clientProxies = new Map<string, TcpProxy>();
  readonly #clients: ShoalClient[] = [];

  private constructor(options: TestClusterOptions, ports: number[]) {
    const n = options.nodes ?? 3;
    this.#options = options;
    this.dir = mkdtempSync(join(tmpdir(), 'shoal-cluster-'));
    this.name = options.name ?? `test-${process.pid}-${Math.floor(Math.random() * 1e6)}`;
    this.secret = options.secret === undefined ? TEST_SECRET : options.secret;
    this.tcp = ports.slice(0, n);
    this.replicaPorts = ports.slice(n, 2 * n);
    this.http = ports.slice(2 * n, 3 * n);
    this.nodes = Array.from({ length: n }, (_, id) => new NodeProcess(id));
  }

  static async start(options: TestClusterOptions = {}): Promise<TestCluster> {
    const n = options.nodes ?? 3;
    const cluster = new TestCluster(options, await freePorts(3 * n));
    try {
      if (options.proxies === true) {
        const taken = new Set([...cluster.tcp, ...cluster.replicaPorts, ...cluster.http]);
        for (let a = 0; a < n; a++) {
          for (let b = a + 1; b < n; b++) {
            cluster.#proxies.set(`${a}-${b}`, await proxyOutside(taken, cluster.replicaPorts[b] as number));
          }
          for (let b = 0; b < n; b++) {
            if (b !== a) cluster.#clientProxies.set(`${a}>${b}`, await proxyOutside(taken, cluster.tcp[b] as number));
          }
        }
      }
      const ids = options.start ?? cluster.nodes.map((node) => node.id);
      await Promise.all(ids.map((id) => cluster.startNode(id)));
      // Serving: every node logs a client in and names the same metadata leader.
      if (ids.length * 2 > n) await cluster.leader({ timeoutMs: options.readyTimeoutMs ?? 60_000 });
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get addresses(): string[] {
    return this.tcp.map((port) => `127.0.0.1:${port}`);
  }

  dataDir(id: number): string {
    return join(this.dir, `node-${id}`);
  }

  /** The roster node `self` reads: peers it dials go through their proxy when proxies are on. */
  configFor(self: number): string {
    const nodes: LocalNode[] = this.nodes.map(({ id }) => {
      const proxy = id > self ? this.#proxies.get(`${self}-${id}`) : undefined;
      const clientProxy = this.#clientProxies.get(`${self}>${id}`);
      return {
        name: `node-${id}`, replicaId: id, ip: '127.0.0.1', tcp: clientProxy?.port ?? (this.tcp[id] as number), http: this.http[id] as number,
        tcpReplica: proxy?.port ?? (this.replicaPorts[id] as number),
      };
    });
    return renderClusterConfig({
      name: this.name,
      nodes,
      sharedSecret: this.secret,
      tls: this.#options.tls ?? 'off',
      shards: this.#options.shards ?? 1,
      dataDir: join(this.dataDir(self), 'data'),
      logLevel: 'info',
      logFile: false,
      ...(this.#options.clusterKeys === undefined ? {} : { clusterKeys: this.#options.clusterKeys }),
    }) + (this.#options.extraToml ?? '');
  }

  async startNode(id: number, options: { readonly fresh?: boolean } = {}): Promise<void> {
    const dir = this.dataDir(id);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'shoal.toml');
    writeFileSync(path, this.configFor(id));
    await (this.nodes[id] as NodeProcess).start(path, dir, options.fresh === true ? ['--fresh'] : [], this.#options.readyTimeoutMs ?? 60_000);
  }

  node(id: number): NodeProcess {
    return this.nodes[id] as NodeProcess;
  }

  proxy(a: number, b: number): TcpProxy {
    const proxy = this.#proxies.get(a < b ? `${a}-${b}` : `${b}-${a}`);
    if (proxy === undefined) throw new Error(`no proxy between ${a} and ${b} (start with proxies: true)`);
    return proxy;
  }

  /** Every link of node `id` held (a TCP stall both ways): the node is cut off from its peers. */
  isolate(id: number): void {
    for (const other of this.nodes) {
      if (other.id === id) continue;
      this.proxy(id, other.id).partition('both', 'hold');
      this.#clientProxies.get(`${id}>${other.id}`)?.partition('both', 'hold');
      this.#clientProxies.get(`${other.id}>${id}`)?.partition('both', 'hold');
    }
  }

  heal(): void {
    for (const proxy of [...this.#proxies.values(), ...this.#clientProxies.values()]) proxy.heal();
  }

  /** A leader-aware client (redirects, retries) bootstrapped from `ids` (default: every node). */
  client(options: Omit<ClientOptions, 'address' | 'credentials'> = {}, ids?: readonly number[]): ShoalClient {
    const address = ids === undefined ? this.addresses : ids.map((id) => this.addresses[id] as string);
    const client = new ShoalClient({ address, credentials: CREDENTIALS, heartbeatIntervalMs: 0, ...this.#tls(), ...options });
    this.#clients.push(client);
    return client;
  }

  #tls(): Pick<ClientOptions, 'tls'> {
    return this.#options.clientTls === undefined ? {} : { tls: this.#options.clientTls };
  }

  /** A client of one node only: no redirects (reads there, or to watch that node answer). */
  nodeClient(id: number, options: Omit<ClientOptions, 'address' | 'credentials'> = {}): ShoalClient {
    const client = new ShoalClient({
      address: this.addresses[id] as string, credentials: CREDENTIALS, heartbeatIntervalMs: 0,
      reconnect: { enabled: false }, cluster: { leaderAware: false }, ...this.#tls(), ...options,
    });
    this.#clients.push(client);
    return client;
  }

  /** Node `id`'s GetClusterMetadata (standard payload + Shoal's extension). */
  async view(id: number): Promise<ClusterView> {
    const client = this.nodeClient(id);
    try {
      return await client.getClusterMetadata({ timeoutMs: 3000 });
    } finally {
      await client.destroy();
    }
  }

  /**
   * Waits until every node in `among` (default: the live ones) names the same metadata leader,
   * and returns its replica id.
   */
  async leader(options: { readonly among?: readonly number[]; readonly timeoutMs?: number; readonly not?: number } = {}): Promise<number> {
    const among = options.among ?? this.nodes.filter((n) => n.alive).map((n) => n.id);
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    let last = '';
    for (;;) {
      try {
        const views = await Promise.all(among.map((id) => this.view(id)));
        const names = views.map((v) => v.leader?.name ?? null);
        const first = names[0] ?? null;
        if (first !== null && names.every((name) => name === first)) {
          const id = Number(first.slice('node-'.length));
          if (id !== options.not) return id;
        }
        last = JSON.stringify(names);
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      if (Date.now() > deadline) throw new Error(`no agreed metadata leader among ${among.join(',')}: ${last}`);
      await sleep(200);
    }
  }

  /**
   * Node `id`'s metrics, scraped with the static token every node of the harness gets
   * (`http.metrics.token`): a lone node, which cannot make a personal access token, scrapes too.
   */
  metrics(id: number): Promise<string> {
    return scrape(`http://127.0.0.1:${this.http[id]}/metrics`, SCRAPE_TOKEN);
  }

  async stop(): Promise<void> {
    await Promise.all(this.#clients.splice(0).map((c) => c.destroy().catch(() => undefined)));
    await Promise.all(this.nodes.map(async (node) => {
      if (!node.alive) return;
      const stopped = node.stop('SIGTERM');
      const timer = setTimeout(() => node.child?.kill('SIGKILL'), 20_000);
      await stopped;
      clearTimeout(timer);
    }));
    await Promise.all([...this.#proxies.values(), ...this.#clientProxies.values()].map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== null && value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError === null ? '' : `: ${String(lastError)}`}`);
    await sleep(everyMs);
  }
}
