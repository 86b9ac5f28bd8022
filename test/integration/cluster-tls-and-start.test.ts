/**
 * Two ways a cluster is started for real:
 * - `[cluster.tls]` in self-signed mode (with auth, as required): every replica link is TLS 1.3
 *   on the replica-I/O shard; the cluster forms, replicates and serves, and fails over;
 * - `npm start` (scripts/start-cluster.ts) in an empty directory: three nodes on
 *   127.0.0.1:8090-8092, the CLI produces and consumes through any node, Ctrl-C (SIGINT) stops all
 *   three and the launcher exits 0.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricSum } from './support/server.js';
import { TestCluster, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendTagged, sendAcked } from './support/produce.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../apps/cli/bin/shoal.js', import.meta.url));
const LAUNCH = fileURLToPath(new URL('../../scripts/start-cluster.ts', import.meta.url));
/** `npm start` runs the launcher with tsx from the repository; the test runs it from an empty directory. */
const TSX = createRequire(import.meta.url).resolve('tsx');

describe('cluster: replica TLS (self-signed)', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, tls: 'self_signed' });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('forms over TLS, replicates, serves through any node and survives the loss of its primary', async () => {
    for (const id of [0, 1, 2]) {
      // Every node holds a TLS link to both peers (a dial that raced a peer's start is retried).
      await waitFor(`node ${id} linked to both peers`, async () => metricSum(await cluster.metrics(id), 'shoal_replica_link_up') === 2, 30_000, 250);
      expect(existsSync(join(cluster.dataDir(id), 'data', 'tls', 'replica.crt'))).toBe(true);
      expect(cluster.node(id).lines.some((l) => l.includes('"msg":"replica plane started"') && l.includes('"tls":"self_signed"'))).toBe(true);
    }
    const client = cluster.client({ requestTimeoutMs: 5_000, cluster: { retry: { retryUncertainWrites: false, budgetMs: 30_000, attemptsMax: 100 } } });
    await client.stream.create({ name: 'tls' });
    await client.topic.create({ streamId: 'tls', name: 't', partitionsCount: 1 });
    const log = newLog();
    for (let i = 0; i < 10; i++) await sendAcked(client, log, 'tls', 't', 0, `a${i}`, 10);
    const primary = await cluster.leader();
    await cluster.node(primary).stop('SIGKILL');
    for (let i = 0; i < 10; i++) await sendTagged(client, log, 'tls', 't', 0, `b${i}`, 10);
    expect(log.acked.length).toBeGreaterThanOrEqual(150);
    for (const id of [0, 1, 2].filter((n) => n !== primary)) {
      expect(checkPartition(await readPartition(cluster.nodeClient(id), 'tls', 't', 0), 0, log)).toEqual([]);
    }
  }, 120_000);
});

describe('npm start: the local 3-node cluster launcher', () => {
  let cwd = '';
  let launcher: ChildProcess | null = null;
  let output = '';

  afterAll(() => {
    if (launcher !== null && launcher.exitCode === null) launcher.kill('SIGKILL');
    if (cwd !== '') rmSync(cwd, { recursive: true, force: true });
  });

  const shoal = async (port: number, ...args: string[]): Promise<string> => {
    const { stdout } = await run(process.execPath, [CLI, '--tcp-server-address', `127.0.0.1:${port}`, '-u', 'iggy', '-p', 'iggy', ...args]);
    return stdout;
  };

  it('starts three nodes, serves the CLI through any node, and stops cleanly on Ctrl-C', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'shoal-npm-start-'));
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    delete env['NODE_OPTIONS'];
    delete env['VITEST'];
    const child = spawn(process.execPath, ['--conditions=source', '--import', pathToFileURL(TSX).href, LAUNCH], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    launcher = child;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor('the launcher says the cluster is up', () => output.includes('Try:'), 90_000, 200).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
    expect(output).toContain('127.0.0.1:8090');
    expect(output).toContain('127.0.0.1:8092');
    expect(output).toMatch(/metadata primary/);
    const config = readFileSync(join(cwd, 'local_data', 'cluster.toml'), 'utf8');
    expect(config).toMatch(/shared_secret = "[A-Za-z0-9_-]{43}"/);
    for (const n of [0, 1, 2]) expect(existsSync(join(cwd, 'local_data', `node-${n}`, 'shoal.identity'))).toBe(true);

    expect(await shoal(8091, 'stream', 'create', 'smoke')).toContain("stream 'smoke' created");
    expect(await shoal(8092, 'topic', 'create', 'smoke', 'events', '2')).toContain('2 partition(s)');
    expect(await shoal(8090, 'message', 'send', '-p', '1', 'smoke', 'events', 'hello cluster')).toContain('partition 1 starting at offset 0');
    for (const port of [8090, 8091, 8092]) {
      await waitFor(`the message on :${port}`, async () => (await shoal(port, 'message', 'poll', '--first', 'smoke', 'events', '1')).includes('hello cluster'), 15_000, 200);
    }

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toMatch(/\[node-0\] stopped \(exit 0\)/);
    expect(output).toMatch(/\[node-1\] stopped \(exit 0\)/);
    expect(output).toMatch(/\[node-2\] stopped \(exit 0\)/);
  }, 150_000);
});
