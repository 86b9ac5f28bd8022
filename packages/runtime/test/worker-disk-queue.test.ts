/**
 * The shard's disk thread (disk/worker-disk-queue.ts, disk/disk-thread.ts) on real files and a
 * real worker thread: results come back through the event loop in submission order, `barrier`
 * blocks until the thread finished everything and delivers it synchronously, and failures come
 * back as values naming their step.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiskJobResult } from '@shoal/storage';
import { WorkerDiskQueue } from '../src/disk/worker-disk-queue.js';

// Workers cannot inherit tsx's hooks on Node 20: register them inside the worker, then import
// the TypeScript module (as replica-plane-handoff.test.ts does).
const require = createRequire(import.meta.url);
const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
const threadModule = new URL('../src/disk/disk-thread.ts', import.meta.url).href;
const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(threadModule)}); });`;

const queues: WorkerDiskQueue[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(): { queue: WorkerDiskQueue; dir: string } {
  const queue = new WorkerDiskQueue({ url: bootstrap, eval: true, execArgv: ['--conditions=source'] });
  queues.push(queue);
  const dir = mkdtempSync(join(tmpdir(), 'shoal-disk-queue-'));
  dirs.push(dir);
  return { queue, dir };
}

describe('WorkerDiskQueue (a real disk thread)', () => {
  it('runs jobs on its thread and calls back in order from the event loop', async () => {
    const { queue, dir } = setup();
    const file = join(dir, 'data');
    writeFileSync(file, 'abc');
    const seen: [number, DiskJobResult][] = [];
    for (let i = 0; i < 20; i++) {
      queue.submit({ steps: [{ kind: 'sync_file', path: file }, { kind: 'write_atomic', path: join(dir, `slot.${i % 2}`), bytes: Uint8Array.from([i]) }] }, (r) => seen.push([i, r]));
    }
    expect(queue.pending).toBe(20);
    expect(seen).toEqual([]); // nothing runs on the submitting thread
    for (let t = 0; t < 500 && queue.pending > 0; t++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.map(([i]) => i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(seen.every(([, r]) => r.ok)).toBe(true);
    expect([...readFileSync(join(dir, 'slot.0'))]).toEqual([18]);
    expect([...readFileSync(join(dir, 'slot.1'))]).toEqual([19]);
  });

  it('barrier blocks until every job ran and delivers the results before it returns', () => {
    const { queue, dir } = setup();
    const order: number[] = [];
    for (let i = 0; i < 5; i++) {
      queue.submit({ steps: [{ kind: 'write_atomic', path: join(dir, `f${i}`), bytes: Uint8Array.from([i, i]) }] }, () => order.push(i));
    }
    queue.barrier();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(queue.pending).toBe(0);
    for (let i = 0; i < 5; i++) expect([...readFileSync(join(dir, `f${i}`))]).toEqual([i, i]);
  });

  it('a failing step comes back as a value; the thread goes on with the next job', () => {
    const { queue, dir } = setup();
    const results: DiskJobResult[] = [];
    queue.submit({ steps: [{ kind: 'sync_file', path: join(dir, 'missing') }] }, (r) => results.push(r));
    queue.submit({ steps: [{ kind: 'write_atomic', path: join(dir, 'ok'), bytes: Uint8Array.from([1]) }] }, (r) => results.push(r));
    queue.barrier();
    expect(results[0]).toMatchObject({ ok: false, step: 0, error: { code: 'ENOENT', syscall: expect.stringMatching(/^open/) } });
    expect(results[1]).toEqual({ ok: true });
  });
});
