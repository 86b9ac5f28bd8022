/**
 * The servers `npm run compat` runs: `shoal-server` processes (the built launcher, as a user
 * runs it), each with the development root credentials the SDK's suite logs in with
 * (`--with-default-root-credentials`), its own data directory and its log kept for the report.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { ShoalClient } from '@shoal/client';

export const ROOT = { username: 'iggy', password: 'iggy' } as const;

export interface NodeSpec {
  readonly name: string;
  readonly bin: string;
  readonly args: readonly string[];
  /** Exactly the environment the node gets (the caller decides what is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly logFile: string;
}

export class ServerNode {
  readonly spec: NodeSpec;
  #child: ChildProcess | null = null;
  #exited: Promise<void> = Promise.resolve();
  #log: WriteStream | null = null;
  #ready = false;
  #tail: string[] = [];

  constructor(spec: NodeSpec) {
    this.spec = spec;
  }

  get alive(): boolean {
    return this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts the process; resolves on its `ready` line (or rejects with its last lines). */
  start(timeoutMs = 60_000): Promise<void> {
    this.#ready = false;
    this.#log = createWriteStream(this.spec.logFile, { flags: 'a' });
    const child = spawn(process.execPath, [this.spec.bin, ...this.spec.args], { cwd: this.spec.cwd, env: { ...this.spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.spec.name} not ready within ${timeoutMs} ms:\n${this.tail()}`)), timeoutMs);
      timer.unref();
      void this.#exited.then(() => {
        clearTimeout(timer);
        if (!this.#ready) reject(new Error(`${this.spec.name} exited before it was ready (${String(child.exitCode ?? child.signalCode)}):\n${this.tail()}`));
      });
      for (const stream of [child.stdout, child.stderr]) {
        let buffered = '';
        stream?.setEncoding('utf8').on('data', (chunk: string) => {
          this.#log?.write(chunk);
          buffered += chunk;
          for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
            const line = buffered.slice(0, at);
            buffered = buffered.slice(at + 1);
            this.#tail.push(line);
            if (this.#tail.length > 30) this.#tail.shift();
            if (!this.#ready && line.includes('"msg":"ready"')) {
              this.#ready = true;
              clearTimeout(timer);
              resolve();
            }
          }
        });
      }
    });
  }

  tail(): string {
    return this.#tail.join('\n');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.alive) this.#child?.kill(signal);
    await this.#exited;
    await new Promise<void>((resolve) => (this.#log === null ? resolve() : this.#log.end(() => resolve())));
    this.#log = null;
  }
}

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

/** True when something accepts on host:port (a fixed port the single node needs is taken). */
export function portBusy(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

/**
 * The environment of a node started "with no config": the caller's, minus every IGGY_ / SHOAL_
 * variable (those would configure it), plus `extra`.
 */
export function cleanEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith('IGGY_') || key.startsWith('SHOAL_') || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Roles as each node reports them: the leader's replica index per node (-1: none yet). */
export async function leaderSeenBy(addresses: readonly string[]): Promise<number[]> {
  return Promise.all(addresses.map(async (address) => {
    const client = new ShoalClient({ address, credentials: ROOT, heartbeatIntervalMs: 0, reconnect: { enabled: false }, cluster: { leaderAware: false } });
    try {
      const view = await client.getClusterMetadata({ timeoutMs: 3000 });
      if (view.leader === null) return -1;
      const port = view.leader.address.port;
      return addresses.findIndex((a) => a.endsWith(`:${port}`));
    } catch {
      return -1;
    } finally {
      await client.destroy();
    }
  }));
}

export function logPath(dir: string, name: string): string {
  return join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.log`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
