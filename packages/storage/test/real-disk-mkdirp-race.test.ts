/**
 * Regression (found by the runtime): two shard threads opening sibling partitions of one topic
 * at the same time both create `streams/<s>/topics/<t>/partitions`; RealDisk.mkdirp checked for
 * existence and then called mkdir, so the slower thread failed with EEXIST (a
 * `partition_recovery_refused` exit). mkdirp now accepts a directory another thread made.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'shoal-mkdirp-'));
const distUrl = new URL('../dist/real-disk.js', import.meta.url).href;

function racer(base: string, side: string, rounds: number): Promise<string | null> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.dist).then(({ RealDisk }) => {
      const disk = new RealDisk();
      try {
        for (let i = 0; i < workerData.rounds; i++) disk.mkdirp(workerData.base + '/s' + i + '/topics/0/partitions/' + workerData.side);
        parentPort.postMessage(null);
      } catch (error) {
        parentPort.postMessage(String(error && error.message));
      }
    });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { dist: distUrl, base, side, rounds } });
    worker.once('message', (result: string | null) => resolve(result));
    worker.once('error', reject);
  });
}

describe('RealDisk.mkdirp under concurrent creation', () => {
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('two threads creating sibling directories under shared new parents both succeed', async () => {
    const results = await Promise.all(['0', '1', '2'].map((side) => racer(root, side, 300)));
    expect(results).toEqual([null, null, null]);
    expect(statSync(join(root, 's299/topics/0/partitions/2')).isDirectory()).toBe(true);
  });
});
