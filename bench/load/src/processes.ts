import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { ClusterProcess, ClusterShape, RunningCluster } from './target.js';

/**
 * Child processes the bench starts (servers, the copy-bound sink), and the cleanup that stops
 * them on every way out: normal end, failure, Ctrl-C / SIGTERM (see `installSignalCleanup`), and
 * as a last resort a synchronous SIGKILL of whatever is still alive when the process exits.
 */
const OUTPUT_TAIL_BYTES = 16 * 1024;

export class ManagedProcess {
  readonly child: ChildProcess;
  readonly name: string;
  #tail = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(name: string, command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
    this.name = name;
    this.child = spawn(command, [...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    const keep = (chunk: Buffer): void => {
      this.#tail = (this.#tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        live.delete(this);
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        this.#tail += `\nspawn error: ${error.message}`;
        this.#exit = { code: -1, signal: null };
        live.delete(this);
        resolve({ code: -1, signal: null });
      });
    });
    live.add(this);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  get exitInfo(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.#exit;
  }

  get output(): string {
    return this.#tail;
  }

  /** Resolves when `text` appears in the output (or rejects on exit / timeout). */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    const started = Date.now();
    while (!pattern.test(this.#tail)) {
      if (!this.alive) throw new Error(`${this.name} exited (${JSON.stringify(this.#exit)}) before printing ${pattern}:\n${this.#tail.slice(-2000)}`);
      if (Date.now() - started > timeoutMs) throw new Error(`${this.name}: no ${pattern} within ${timeoutMs} ms:\n${this.#tail.slice(-2000)}`);
      await sleep(20);
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.alive) return;
    this.child.kill(signal);
    await this.exited;
  }
}

const live = new Set<ManagedProcess>();
const cleanups = new Set<() => Promise<void>>();
const directories = new Set<string>();

/** A temp directory removed on stop, and as a last resort synchronously when the process exits. */
export function trackDirectory(path: string): () => void {
  directories.add(path);
  return () => {
    directories.delete(path);
    rmSync(path, { recursive: true, force: true });
  };
}

/** Registers an async cleanup (stop a cluster, remove a temp dir); returns its unregister. */
export function onCleanup(fn: () => Promise<void>): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/** Runs every registered cleanup (each at most once). */
export async function runCleanups(): Promise<void> {
  const pending = [...cleanups];
  cleanups.clear();
  await Promise.allSettled(pending.map((fn) => fn()));
}

let installed = false;

/**
 * Ctrl-C / SIGTERM: stop every cluster and remove its files, then exit 130 / 143. A second
 * Ctrl-C kills the children at once. On any exit, children still alive get SIGKILL.
 */
export function installSignalCleanup(log: (line: string) => void): void {
  if (installed) return;
  installed = true;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      for (const p of live) p.child.kill('SIGKILL');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    log(`\n${signal}: stopping the clusters and removing their files…`);
    void runCleanups().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    for (const p of live) p.child.kill('SIGKILL');
    for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A cluster of server processes the bench started (Shoal or NATS): its processes, signals to one
 * of them, their output, and a stop that also removes the cluster's directory. Each system adds
 * its own readiness check.
 */
export abstract class ProcessCluster implements RunningCluster {
  readonly shape: ClusterShape;
  readonly addresses: readonly string[];
  protected readonly procs: readonly ManagedProcess[];
  readonly #stopTimeoutMs: number;
  readonly #removeDir: () => void;
  readonly #unregister: () => void;

  constructor(shape: ClusterShape, processes: readonly ManagedProcess[], addresses: readonly string[], dir: string, stopTimeoutMs: number) {
    this.shape = shape;
    this.procs = processes;
    this.addresses = addresses;
    this.#stopTimeoutMs = stopTimeoutMs;
    this.#removeDir = trackDirectory(dir);
    this.#unregister = onCleanup(() => this.stop());
  }

  get processes(): readonly ClusterProcess[] {
    return this.procs.map((p, index) => ({ index, pid: p.pid, address: this.addresses[index] as string, alive: p.alive }));
  }

  async kill(index: number, signal: NodeJS.Signals): Promise<void> {
    await this.procs[index]?.kill(signal);
  }

  logTail(index: number): string {
    return this.procs[index]?.output ?? '';
  }

  async stop(): Promise<void> {
    this.#unregister();
    await Promise.all(this.procs.map((p) => p.stop(this.#stopTimeoutMs)));
    this.#removeDir();
  }
}
