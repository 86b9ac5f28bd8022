import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cpuBetween, cpuSnapshot, threadCpuSeconds } from '../src/cpu.js';
import { readThreadTable } from '../src/shoal/launcher.js';

/**
 * A worker that reports its tid, burns `seconds` of its OWN thread's CPU (read from
 * /proc/thread-self/stat) when told, and then stays alive until terminated: a `once` listener
 * would let its loop empty and the thread exit before the test's second snapshot reads it
 * (CI saw the thread's entry missing once).
 */
const BURNER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync, readlinkSync } = require('node:fs');
const link = readlinkSync('/proc/thread-self');
const tid = Number(link.slice(link.lastIndexOf('/') + 1));
parentPort.postMessage({ tid });
let burned = false;
parentPort.on('message', () => {
  if (burned) return;
  burned = true;
  const cpu = () => { const f = readFileSync('/proc/thread-self/stat', 'utf8'); const x = f.slice(f.lastIndexOf(')') + 2).split(' '); return (Number(x[11]) + Number(x[12])) / 100; };
  const start = cpu();
  let spin = 0;
  while (cpu() - start < workerData.seconds) for (let i = 0; i < 1e5; i++) spin += i;
  parentPort.postMessage({ done: spin > 0 });
});
`;

/** /proc's CPU times count in clock ticks (USER_HZ = 100 on Linux). */
const CLOCK_TICK_S = 0.01;

describe('per-thread CPU accounting', () => {
  it.runIf(process.platform === 'linux')('charges a busy thread its own CPU and the rest of the process to "other"', async () => {
    const worker = new Worker(BURNER, { eval: true, workerData: { seconds: 0.3 } });
    try {
      const tid = await new Promise<number>((resolve) => worker.once('message', (m: { tid: number }) => resolve(m.tid)));
      expect(threadCpuSeconds(process.pid, tid)).not.toBeNull();
      const table = [{ node: 0, pid: process.pid, threads: [{ name: 'shard-0', role: 'shard' as const, tid, links: [1] }] }];
      const before = cpuSnapshot([process.pid], table);
      const done = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage('go');
      await done;
      const after = cpuSnapshot([process.pid], table);
      const usage = cpuBetween(before, after, 1_000_000);
      const shard = usage.threads.find((t) => t.name === 'shard-0');
      const other = usage.threads.find((t) => t.name === 'other');
      // The worker measured 0.3 s on its own clock (tick granularity 10 ms).
      expect(shard?.seconds).toBeGreaterThanOrEqual(0.29);
      expect(shard?.secondsPerMillion).toBeCloseTo(shard?.seconds ?? -1, 9);
      expect(shard?.links).toEqual([1]);
      expect(other?.role).toBe('other');
      // Named + other = the whole process, to one clock tick: the kernel rounds a thread's times
      // and the process's sum apart (a busy thread read 0.30 s in a process of 0.29 s once), and
      // `other` is clamped at 0 rather than negative.
      expect(Math.abs((shard?.seconds ?? 0) + (other?.seconds ?? 0) - (usage.serverSeconds ?? -1))).toBeLessThanOrEqual(CLOCK_TICK_S + 1e-9);
      expect(other?.seconds).toBeGreaterThanOrEqual(0);
    } finally {
      await worker.terminate();
    }
  });

  it('reads a node\'s thread table, skipping entries it does not understand', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-threads-'));
    try {
      const file = join(dir, 'threads.json');
      writeFileSync(file, JSON.stringify({ pid: 42, threads: [
        { name: 'supervisor', role: 'supervisor', tid: 42, links: [] }, { name: 'shard-0', role: 'shard', tid: 44, links: [2, 1] },
        { name: 'mystery', role: 'gc', tid: 45 }, { name: 'metadata', role: 'metadata', tid: null, links: [] },
      ] }));
      expect(readThreadTable(3, file)).toEqual({ node: 3, pid: 42, threads: [
        { name: 'supervisor', role: 'supervisor', tid: 42, links: [] }, { name: 'shard-0', role: 'shard', tid: 44, links: [2, 1] },
      ] });
      expect(readThreadTable(0, join(dir, 'absent.json'))).toBeNull();
      writeFileSync(file, '{"threads": 1}');
      expect(readThreadTable(0, file)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
