import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerHandle, removeDataDir, startServer } from './support/server.js';

/**
 * `runtime/threads.json` names every thread of the node with its kernel thread id, so the load
 * bench can account CPU per thread (/proc/<pid>/task/<tid>/stat). The ids must be real threads
 * of the server process, one per role, and the supervisor's must be the process's main thread.
 */
describe('runtime/threads.json', () => {
  let server: ServerHandle | null = null;
  afterAll(async () => {
    await server?.stop();
    if (server !== null) removeDataDir(server.dataDir);
  });

  it.runIf(process.platform === 'linux')('lists the supervisor, the metadata worker and every shard with their kernel thread ids', async () => {
    server = await startServer({ shards: 2 });
    const file = join(server.dataDir, 'data', 'runtime', 'threads.json');
    expect(existsSync(file)).toBe(true);
    const table = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; threads: { name: string; role: string; tid: number | null; links: number[] }[] };
    expect(table.pid).toBe(server.pid);
    expect(table.threads.map((t) => [t.name, t.role])).toEqual([
      ['supervisor', 'supervisor'], ['metadata', 'metadata'], ['shard-0', 'shard'], ['shard-1', 'shard'],
    ]);
    const tids = table.threads.map((t) => t.tid);
    expect(tids[0]).toBe(server.pid);
    expect(new Set(tids).size).toBe(tids.length);
    for (const tid of tids) {
      expect(typeof tid).toBe('number');
      expect(existsSync(`/proc/${server.pid}/task/${tid}/stat`)).toBe(true);
    }
    for (const t of table.threads) expect(t.links).toEqual([]);
  });
});
