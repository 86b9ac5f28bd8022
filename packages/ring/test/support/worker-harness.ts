/**
 * Spawning TypeScript workers from vitest.
 *
 * Measured on Node 20.20 with tsx 4.x (see ../README in docs/ring.md, "Testing with workers"):
 * - `new Worker(file.ts, { execArgv: ['--conditions=source', '--import', 'tsx'] })` does NOT work:
 *   the worker fails with "Unknown file extension .ts". tsx's `--import` entry registers its
 *   loader hooks only on the main thread on Node < 22.22 (its own version gate), and Node 20 does
 *   not share the parent's hooks with workers.
 * - What works: an `eval` bootstrap that imports tsx's ESM API, calls `register()` inside the
 *   worker, then imports the TypeScript worker module; `--conditions=source` in execArgv makes
 *   `@shoal/*` resolve to src/*.ts. No build step needed, and it behaves the same under vitest
 *   (forks pool) and plain node.
 */

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkerReport, WorkerTask } from './tasks.js';

const require = createRequire(import.meta.url);
// tsx/esm/api resolves to the CommonJS build under `require`; the ESM build sits beside it.
const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
const workerModule = new URL('./ring-worker.ts', import.meta.url).href;
const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerModule)}); });`;

export interface RingWorker {
  readonly worker: Worker;
  /** The worker's final report (it posts exactly one). Rejects if the worker errors or exits first. */
  readonly report: Promise<WorkerReport>;
  /** Messages the worker posts before its report (progress, handles going back). */
  readonly messages: unknown[];
  post(message: unknown): void;
  stop(): Promise<void>;
}

export function spawnRingWorker(task: WorkerTask): RingWorker {
  const worker = new Worker(bootstrap, { eval: true, workerData: task, execArgv: ['--conditions=source'] });
  const messages: unknown[] = [];
  const report = new Promise<WorkerReport>((resolve, reject) => {
    worker.on('message', (message: unknown) => {
      if (isReport(message)) resolve(message);
      else messages.push(message);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`worker exited (${code}) before reporting`)));
  });
  return {
    worker,
    report,
    messages,
    post: (message) => worker.postMessage(message),
    stop: async () => {
      await worker.terminate();
    },
  };
}

function isReport(message: unknown): message is WorkerReport {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'report';
}

/** Resolves with the first message the worker posts that satisfies `match`. */
export function nextMessage<T>(ringWorker: RingWorker, match: (message: unknown) => message is T): Promise<T> {
  const seen = ringWorker.messages.find(match);
  if (seen !== undefined) return Promise.resolve(seen);
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      if (!match(message)) return;
      ringWorker.worker.off('message', listener);
      resolve(message);
    };
    ringWorker.worker.on('message', listener);
  });
}
