/**
 * Regression: the supervisor armed its start timer and never cleared it, so every node exited
 * with `worker_start_timeout` (31) exactly `start_timeout` after it started, however healthy.
 * A node with a short start timeout must keep serving well past it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { removeDataDir, startServer, type ServerHandle } from './support/server.js';

const START_TIMEOUT_MS = 8_000;

describe('the start timeout bounds the start only', () => {
  let server: ServerHandle | null = null;

  afterAll(async () => {
    await server?.stop();
    if (server !== null) removeDataDir(server.dataDir);
  });

  it('a node is still serving after its start timeout has passed', async () => {
    const spawnedAt = Date.now();
    server = await startServer({ shards: 1, env: { SHOAL_SYSTEM_SHARDING_START_TIMEOUT: `${START_TIMEOUT_MS} ms` } });
    let exitCode: number | null | undefined;
    void server.exited.then((e) => { exitCode = e.code; });
    await sleep(Math.max(0, spawnedAt + START_TIMEOUT_MS + 2_000 - Date.now()));
    expect(exitCode).toBeUndefined();
    const client = new ShoalClient({ address: server.address, heartbeatIntervalMs: 0, credentials: { username: 'iggy', password: 'iggy' } });
    try {
      await client.ping();
      expect((await client.getMe()).userId).toBe(0);
      expect(server.lines.some((l) => l.includes('worker_start_timeout'))).toBe(false);
    } finally {
      await client.destroy();
    }
  }, 60_000);
});
