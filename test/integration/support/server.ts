/**
 * Starts the COMPILED server binary (`apps/server/bin/shoal-server.cjs`, built by `npm test` /
 * `npm run build`) as a child process on ephemeral ports: tcp.address and http.address use port
 * 0 and the test reads the bound addresses from the node's `ready` log line on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ShoalClient } from '@shoal/client';
import { scrape, scrapeToken } from './scrape.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
export const SERVER_BIN = join(root, 'apps/server/bin/shoal-server.cjs');

export interface ServerOptions {
  /** Shard workers (default 2). */
  readonly shards?: number;
  /** Reuse a data directory (restart tests); default a fresh temp dir. */
  readonly dataDir?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly args?: readonly string[];
  /** Extra node flags (e.g. --expose-gc). */
  readonly nodeArgs?: readonly string[];
  readonly readyTimeoutMs?: number;
  /**
   * Start something else than the compiled binary of this checkout (e.g. `npx shoal-server` in a
   * project that installed the packed tarballs), in `cwd`, in its own process group. `stop` signals
   * the node itself (the pid of its ready line), so a wrapper such as npx exits with the node's
   * code; a start that fails kills the whole group.
   */
  readonly command?: { readonly file: string; readonly args: readonly string[]; readonly cwd: string };
  /**
   * Pass `--with-default-root-credentials` (default true): the suite logs in as iggy / iggy, which
   * the node only uses when asked (otherwise it generates a root password).
   */
  readonly defaultRootCredentials?: boolean;
}

/** The root credentials every helper passes explicitly (`--with-default-root-credentials`). */
export const DEFAULT_ROOT = { username: 'iggy', password: 'iggy' } as const;
export const DEFAULT_ROOT_FLAG = '--with-default-root-credentials';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface ServerHandle {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly dataDir: string;
  readonly tcp: Endpoint;
  readonly http: Endpoint;
  readonly address: string;
  /** Every stdout/stderr line so far. */
  readonly lines: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The metrics endpoint's text, scraped with a personal access token of root (made on first use). */
  metrics(query?: string): Promise<string>;
  /** That token (made on first use). */
  scrapeToken(): Promise<string>;
}

export function tempDataDir(prefix = 'shoal-it-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function parseEndpoint(text: unknown): Endpoint {
  if (typeof text !== 'string') throw new Error(`no address in the ready line: ${String(text)}`);
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at), port: Number(text.slice(at + 1)) };
}

export async function startServer(options: ServerOptions = {}): Promise<ServerHandle> {
  if (options.command === undefined && !existsSync(join(root, 'apps/server/dist/main.js'))) throw new Error('apps/server/dist is missing: run `npm run build` first (npm test does)');
  const dataDir = options.dataDir ?? tempDataDir();
  const env: Record<string, string> = {
    ...process.env as Record<string, string>,
    IGGY_TCP_ADDRESS: '127.0.0.1:0',
    IGGY_HTTP_ADDRESS: '127.0.0.1:0',
    IGGY_SYSTEM_PATH: join(dataDir, 'data'),
    SHOAL_SYSTEM_SHARDING_SHARDS: String(options.shards ?? 2),
    IGGY_SYSTEM_LOGGING_LEVEL: 'info',
    IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false',
    ...options.env,
  };
  delete env['NODE_OPTIONS'];
  delete env['VITEST'];
  // Another command (npx in an installed project) runs as from a user's shell, not inside our npm.
  if (options.command !== undefined) for (const key of Object.keys(env)) if (key.toLowerCase().startsWith('npm_')) delete env[key];
  const rootFlag = options.defaultRootCredentials === false ? [] : [DEFAULT_ROOT_FLAG];
  const command = options.command;
  const child = command === undefined
    ? spawn(process.execPath, [...(options.nodeArgs ?? []), SERVER_BIN, ...rootFlag, ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: dataDir })
    : spawn(command.file, [...command.args, ...rootFlag, ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: command.cwd, detached: true });
  const killGroup = (name: NodeJS.Signals): void => {
    if (command === undefined) child.kill(name);
    else if (child.pid !== undefined) process.kill(-child.pid, name);
  };
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = '';
    const onLine = (line: string): void => {
      lines.push(line);
      if (!line.startsWith('{')) return;
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record['msg'] === 'ready') resolve(record);
      } catch {
        // not a log line
      }
    };
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        onLine(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter((l) => l !== '')));
    void exited.then(({ code, signal }) => reject(new Error(`server exited before ready (code ${code}, signal ${signal}):\n${lines.join('\n')}`)));
    setTimeout(() => reject(new Error(`server not ready in time:\n${lines.join('\n')}`)), options.readyTimeoutMs ?? 30_000).unref();
  });
  const record = await ready.catch((error: unknown) => {
    killGroup('SIGKILL');
    throw error;
  });
  const nodePid = typeof record['pid'] === 'number' ? record['pid'] : (child.pid as number);
  const tcp = parseEndpoint(record['tcp']);
  const http = parseEndpoint(record['http']);
  const rootUser = { username: env['IGGY_ROOT_USERNAME'] ?? DEFAULT_ROOT.username, password: env['IGGY_ROOT_PASSWORD'] ?? DEFAULT_ROOT.password };
  let token: Promise<string> | null = null;
  const getToken = (): Promise<string> => {
    token ??= (async () => {
      const client = new ShoalClient({ address: `${tcp.host}:${tcp.port}`, credentials: rootUser, heartbeatIntervalMs: 0, reconnect: { enabled: false } });
      try {
        return await scrapeToken(client);
      } catch (error) {
        token = null; // the next scrape tries again
        throw error;
      } finally {
        await client.destroy().catch(() => undefined);
      }
    })();
    return token;
  };
  return {
    child, pid: child.pid as number, dataDir, tcp, http, address: `${tcp.host}:${tcp.port}`, lines, exited,
    async stop(name: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (command === undefined) child.kill(name);
        else process.kill(nodePid, name);
      }
      return exited;
    },
    async metrics(query = '') {
      return scrape(`http://${http.host}:${http.port}/metrics${query}`, await getToken());
    },
    scrapeToken: getToken,
  };
}

/** A metric's value (first sample whose labels contain `labels`). */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (!Object.entries(labels).every(([k, v]) => rest.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

/** Sum of every sample of a metric whose labels contain `labels`. */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
