/**
 * The `piscina` pool for password hashing (and other CPU-heavy, latency-tolerant work). One pool
 * per thread that needs it (a Piscina instance cannot be shared across threads), created on first
 * use, at most `threadsMax` pool threads, which exit after `idleTimeoutMs` without work, so a
 * node that is not logging anybody in carries no pool threads at all.
 */
import { Piscina } from 'piscina';
import type { HashTask, HashTaskResult } from './hash-task.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface HashPoolOptions {
  readonly threadsMax: number;
  readonly idleTimeoutMs: number;
  /** Tasks waiting for a pool thread; beyond it a task is refused (the login fails transiently). */
  readonly queueMax: number;
}

export const HASH_POOL_DEFAULTS: HashPoolOptions = Object.freeze({ threadsMax: 1, idleTimeoutMs: 10_000, queueMax: 1024 });

export class HashPool implements PasswordHasher {
  readonly #options: HashPoolOptions;
  #pool: Piscina | null = null;

  constructor(options: HashPoolOptions = HASH_POOL_DEFAULTS) {
    this.#options = options;
  }

  async hash(password: string): Promise<string> {
    const result = await this.#run({ op: 'hash', password });
    if (result.op !== 'hash') throw new Error('hash pool: unexpected result');
    return result.hash;
  }

  async verify(password: string, hash: string): Promise<boolean> {
    const result = await this.#run({ op: 'verify', password, hash });
    if (result.op !== 'verify') throw new Error('hash pool: unexpected result');
    return result.ok;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    if (pool !== null) await pool.destroy();
  }

  #run(task: HashTask): Promise<HashTaskResult> {
    this.#pool ??= new Piscina({
      filename: new URL('./hash-task.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: this.#options.threadsMax,
      idleTimeout: this.#options.idleTimeoutMs,
      maxQueue: this.#options.queueMax,
    });
    return this.#pool.run(task) as Promise<HashTaskResult>;
  }
}
