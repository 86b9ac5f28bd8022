/**
 * The runnable examples of docs/sdk.md (examples/*.mjs), each run as a user runs it (`node
 * examples/X.mjs` with SHOAL_URL) against the compiled server; the events example while the
 * server is restarted under it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { removeDataDir, startServer, tempDataDir, type ServerHandle } from './support/server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `examples/<name>`; `signal` kills it (its run then resolves with a null code). */
function example(name: string, env: Record<string, string>, onLine?: (line: string) => void, signal?: AbortSignal): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'examples', name)], { cwd: root, env: { PATH: process.env['PATH'] ?? '', ...env }, ...(signal === undefined ? {} : { signal }) });
    child.on('error', () => undefined); // an abort: 'close' follows
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      partial += chunk.toString();
      let newline = partial.indexOf('\n');
      while (newline >= 0) {
        onLine?.(partial.slice(0, newline));
        partial = partial.slice(newline + 1);
        newline = partial.indexOf('\n');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lastJson = (run: Run): Record<string, unknown> => JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;

describe('examples/ against a node', () => {
  let server: ServerHandle;
  let dataDir: string;
  const url = (): string => `iggy://iggy:iggy@${server.address}`;

  beforeAll(async () => {
    dataDir = tempDataDir('shoal-examples-');
    server = await startServer({ dataDir, shards: 1 });
  });

  afterAll(async () => {
    await server?.stop();
    removeDataDir(dataDir);
  });

  it('quickstart.mjs: every order sent is received once by the group, keys keep a customer on one partition', async () => {
    const run = await example('quickstart.mjs', { SHOAL_URL: url() });
    expect(run.code, run.stderr).toBe(0);
    const { sent, received } = lastJson(run) as { sent: { order: number; partitionId: number }[]; received: { order: number; partitionId: number; source: string }[] };
    expect(received.map((r) => r.order).sort((x, y) => x - y)).toEqual(sent.map((s) => s.order));
    expect(received.every((r) => r.source === 'quickstart')).toBe(true);
    for (const s of sent) expect(s.partitionId).toBe(sent[s.order % 4]?.partitionId);
  }, 60_000);

  it('stream-pipeline.mjs: a topic copied through Readable | Transform | Writable', async () => {
    const run = await example('stream-pipeline.mjs', { SHOAL_URL: url() });
    expect(run.code, run.stderr).toBe(0);
    const { copied, clean } = lastJson(run) as { copied: number; clean: { payload: string; n: number }[] };
    expect(copied).toBe(8);
    expect(clean).toEqual(['ALPHA', 'BETA', 'GAMMA', 'DELTA', 'EPSILON', 'ZETA', 'ETA', 'THETA'].map((payload, n) => ({ payload, n })));
  }, 60_000);

  it('events.mjs: the server restarts mid-run; the logger and the events show the loss and the reconnect, nothing is lost', async () => {
    const port = server.tcp.port;
    let restart: Promise<void> | null = null;
    // A restart that fails would leave the example retrying forever: it stops the example, and
    // the test fails with the restart's own error (the node's lines) instead of a timeout.
    const abort = new AbortController();
    let restartError: unknown = null;
    const run = await example('events.mjs', { SHOAL_URL: url(), SHOAL_EXAMPLE_COUNT: '12', SHOAL_EXAMPLE_PAUSE_MS: '100' }, (line) => {
      if (line === 'sent 4' && restart === null) {
        restart = (async () => {
          expect((await server.stop('SIGTERM')).code).toBe(0);
          server = await startServer({ dataDir, shards: 1, env: { IGGY_TCP_ADDRESS: `127.0.0.1:${port}` } });
        })().catch((error: unknown) => {
          restartError = error;
          abort.abort();
        });
      }
    }, abort.signal);
    await restart;
    if (restartError !== null) throw restartError;
    expect(run.code, run.stderr).toBe(0);
    const summary = lastJson(run) as { sent: number; events: Record<string, number> };
    expect(summary.sent).toBe(12);
    expect(summary.events['disconnected']).toBeGreaterThanOrEqual(1);
    expect(summary.events['reconnecting']).toBeGreaterThanOrEqual(1);
    expect(summary.events['connected']).toBeGreaterThanOrEqual(2);
    expect(run.stderr).toContain(`shoal: connection to 127.0.0.1:${port} lost`);
    expect(run.stderr).toMatch(/shoal: reconnected to 127\.0\.0\.1:\d+/);
    const client = new ShoalClient({ url: url() });
    const polled = await client.pollMessages({ streamId: 'events-example', topicId: 'ticks', partitionId: 0, strategy: 'first', count: 100 });
    await client.close();
    const payloads = new Set(polled.messages.map((m) => new TextDecoder().decode(m.payload)));
    expect([...payloads].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `tick-${i}`).sort());
  }, 120_000);
});
