/**
 * Starts a ring-suite peer worker running TypeScript. On Node 20, `execArgv: ['--import', 'tsx']`
 * does not give a worker tsx's loader (tsx registers its hooks on the main thread only before
 * Node 22.22), so the worker starts from an eval bootstrap that calls tsx's `register()` itself,
 * then imports peer.ts; `--conditions=source` resolves @shoal/* to their src/*.ts.
 */

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { type TransferListItem, Worker } from 'node:worker_threads';
import type { PeerCommand, PeerReply } from './commands.js';

const require = createRequire(import.meta.url);
const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
const peerModule = new URL('./peer.ts', import.meta.url).href;
const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(peerModule)}); });`;

/** A peer worker with an in-order reply queue. */
export class Peer {
  readonly #worker: Worker;
  readonly #replies: PeerReply[] = [];
  readonly #waiting: ((reply: PeerReply) => void)[] = [];
  #failure: Error | null = null;

  constructor(name: string) {
    this.#worker = new Worker(bootstrap, { eval: true, name, execArgv: ['--conditions=source'] });
    this.#worker.on('message', (reply: PeerReply) => {
      const waiter = this.#waiting.shift();
      if (waiter !== undefined) waiter(reply);
      else this.#replies.push(reply);
    });
    this.#worker.on('error', (error) => {
      this.#failure = error;
    });
  }

  send(command: PeerCommand, transfer: readonly TransferListItem[] = []): void {
    if (this.#failure !== null) throw this.#failure;
    this.#worker.postMessage(command, [...transfer]);
  }

  /** The next reply; throws on a 'failed' one. */
  async next<K extends PeerReply['kind']>(kind: K): Promise<Extract<PeerReply, { kind: K }>> {
    const reply = this.#replies.shift() ?? (await new Promise<PeerReply>((resolve) => this.#waiting.push(resolve)));
    if (reply.kind === 'failed') throw new Error(`ring peer failed: ${reply.error}`);
    if (reply.kind !== kind) throw new Error(`ring peer: expected ${kind}, got ${reply.kind}`);
    return reply as Extract<PeerReply, { kind: K }>;
  }

  async stop(): Promise<void> {
    await this.#worker.terminate();
  }
}
