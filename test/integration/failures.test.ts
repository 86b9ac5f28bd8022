/**
 * `fatal(reason)`: the node refuses to run, or stops, with one fatal line and the reason's exit
 * code (docs/operations.md): bad flags (2), an invalid configuration naming the key (3), a data
 * directory of another cluster (10), a client port already in use, detected by shard 0 and
 * reported to the supervisor (20).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_BIN, removeDataDir, startServer, tempDataDir } from './support/server.js';

function runToExit(args: readonly string[], env: Readonly<Record<string, string>>, cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args], {
      cwd, env: { ...process.env as Record<string, string>, IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { out += d; });
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('the node refuses to run, with an exit code per reason', () => {
  const dir = tempDataDir('shoal-fail-');
  const base = { IGGY_TCP_ADDRESS: '127.0.0.1:0', IGGY_HTTP_ADDRESS: '127.0.0.1:0', IGGY_SYSTEM_PATH: join(dir, 'data') };
  let blocker: Server | null = null;

  afterAll(() => {
    blocker?.close();
    removeDataDir(dir);
  });

  it('exits 2 on an unknown flag and 3 on an invalid configuration, naming the key', async () => {
    const usage = await runToExit(['--bogus'], base, dir);
    expect(usage.code).toBe(2);
    expect(usage.out).toContain('unknown argument --bogus');
    const invalid = await runToExit([], { ...base, SHOAL_SYSTEM_SHARDING_SHARDS: '0' }, dir);
    expect(invalid.code).toBe(3);
    expect(invalid.out).toContain('system.sharding.shards');
  });

  it('exits 10 on a data directory that belongs to another cluster', async () => {
    const server = await startServer({ shards: 1, dataDir: dir });
    expect((await server.stop()).code).toBe(0);
    const refused = await runToExit([], { ...base, IGGY_CLUSTER_NAME: 'another-cluster' }, dir);
    expect(refused.code).toBe(10);
    expect(refused.out).toMatch(/"msg":"fatal","reason":"data_dir_refused"/);
  });

  it('exits 20 when shard 0 cannot bind the client port (a worker-reported fatal)', async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker?.listen(0, '127.0.0.1', () => resolve((blocker?.address() as { port: number }).port)));
    const failed = await runToExit([], { ...base, IGGY_TCP_ADDRESS: `127.0.0.1:${port}`, SHOAL_SYSTEM_SHARDING_SHARDS: '1' }, dir);
    expect(failed.code).toBe(20);
    expect(failed.out).toMatch(/"reason":"listen_failed"/);
  });
});
