/**
 * The published surface, as a user gets it: `npm pack` of every publishable workspace, the
 * tarballs installed into an empty project (our own packages only from the tarballs: the `@shoal`
 * scope points at a local registry that answers 404 to everything; third-party dependencies come
 * from the npm cache or registry), then in that project:
 * - `npx shoal-server` starts a node on ephemeral ports;
 * - a plain ES-module script imports `@shoal/client`, creates a stream and a topic, produces and
 *   consumes;
 * - `npx shoal` (the CLI) lists what the script created;
 * - a TypeScript file importing `@shoal/client` type-checks against the shipped declarations.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, packAll, publishableWorkspaces, type Packed } from '../../scripts/pack.js';
import { startServer, type ServerHandle } from '../integration/support/server.js';

const EXPECTED = ['@shoal/cli', '@shoal/client', '@shoal/consensus', '@shoal/gateway', '@shoal/protocol', '@shoal/replica', '@shoal/ring', '@shoal/runtime', '@shoal/server', '@shoal/state', '@shoal/stdx', '@shoal/storage'];

const PRODUCE_CONSUME = `
import { ShoalClient } from '@shoal/client';

const client = new ShoalClient({ address: process.argv[2], credentials: { username: 'iggy', password: 'iggy' } });
await client.stream.create({ name: 'packed' });
await client.topic.create({ streamId: 'packed', name: 'events', partitionsCount: 2 });
const producer = client.producer({ streamId: 'packed', topicId: 'events' });
for (let i = 0; i < 10; i++) await producer.send({ payload: 'm-' + i, headers: { n: String(i) } });
await producer.close();
const seen = [];
const consumer = client.consumer({ streamId: 'packed', topicId: 'events', strategy: 'first', autoCommit: 'none' });
for await (const message of consumer) {
  seen.push(new TextDecoder().decode(message.payload) + ':' + message.headers.n.value);
  if (seen.length === 10) break;
}
await consumer.close();
await client.close();
console.log(JSON.stringify(seen.sort()));
`;

const TYPED = `
import { ShoalClient, type ReceivedMessage, type SendResult } from '@shoal/client';
const client: ShoalClient = new ShoalClient({ address: '127.0.0.1:8090' });
export async function first(): Promise<ReceivedMessage | undefined> {
  const sent: SendResult = await client.producer({ streamId: 's', topicId: 't' }).send({ payload: 'x' });
  void sent.offset;
  for await (const message of client.consumer({ streamId: 's', topicId: 't' })) return message;
  return undefined;
}
// @ts-expect-error: the shipped declarations are precise (no such method)
client.notAMethod();
`;

/** The environment of a user's shell: none of the npm_* variables of the `npm test` running us. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.toLowerCase().startsWith('npm_') && key !== 'NODE_OPTIONS' && key !== 'VITEST') env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to completion without blocking the event loop (the test's registry must answer meanwhile). */
function run(file: string, args: readonly string[], cwd: string, env = userEnv()): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('packages: packed, installed into an empty project, and run', () => {
  let work: string;
  let app: string;
  let packed: Packed[];
  let registry: Server;
  const registryHits: string[] = [];
  let server: ServerHandle | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'shoal-pack-'));
    app = join(work, 'app');
    registry = createServer((request, response) => {
      registryHits.push(request.url ?? '');
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => registry.close(resolve));
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  /** Files a package ships outside dist/ (the dashboard's static page and its compiled scripts). */
  const SHIPPED_BESIDE_DIST: Readonly<Record<string, readonly string[]>> = {
    '@shoal/runtime': ['ui/index.html', 'ui/app.css', 'ui/dist/api.js', 'ui/dist/app.js', 'ui/dist/view.js'],
  };

  it('npm pack: every publishable package ships dist, types, README, LICENSE and nothing from the checkout', () => {
    expect(publishableWorkspaces().length).toBe(EXPECTED.length);
    packed = packAll(join(work, 'tarballs'));
    expect(packed.map((p) => p.name).sort()).toEqual(EXPECTED);
    const license = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
    expect(license).toContain('Apache License');
    for (const pkg of packed) {
      const paths = pkg.files.map((f) => f.path);
      expect(paths, pkg.name).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
      expect(paths.filter((p) => p.endsWith('.d.ts')).length, pkg.name).toBeGreaterThan(0);
      const extra = SHIPPED_BESIDE_DIST[pkg.name] ?? [];
      expect(paths.filter((p) => !p.startsWith('dist/') && !p.startsWith('bin/') && !['package.json', 'README.md', 'LICENSE', ...extra].includes(p)), pkg.name).toEqual([]);
      expect(paths.some((p) => p.endsWith('.tsbuildinfo') || p.endsWith('.map') || p.includes('test/')), pkg.name).toBe(false);
    }
  }, 60_000);

  it('the tarballs install into an empty project without the registry serving any @shoal package', async () => {
    const { port } = registry.address() as AddressInfo;
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty-app', private: true, type: 'module' }));
    const tarballs = packed.map((p) => join(work, 'tarballs', p.filename));
    const install = await run('npm', [
      'install', '--no-audit', '--no-fund', '--prefer-offline', '--fetch-retries=0', `--@shoal:registry=http://127.0.0.1:${port}/`, ...tarballs,
    ], app);
    expect(install.status, install.stderr).toBe(0);
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; version?: string }> };
    for (const name of EXPECTED) {
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(/^file:.*\.tgz$/);
    }
    // Every @shoal module in the tree is a top-level one from a tarball (none nested from elsewhere).
    const nested = Object.keys(lock.packages).filter((path) => /node_modules\/@shoal\/.*node_modules\/@shoal\//.test(path));
    expect(nested).toEqual([]);
    expect(registryHits.every((url) => url.includes('@shoal'))).toBe(true);
  }, 240_000);

  it('npx shoal-server runs a node, a script produces and consumes with @shoal/client, and npx shoal sees it', async () => {
    const version = await run('npx', ['shoal-server', '--version'], app);
    expect(version.stdout).toMatch(/^shoal-server 0\.1\.0 /);
    server = await startServer({
      command: { file: 'npx', args: ['shoal-server'], cwd: app },
      shards: 1,
      defaultRootCredentials: false,
      env: { IGGY_ROOT_USERNAME: 'iggy', IGGY_ROOT_PASSWORD: 'iggy' },
      readyTimeoutMs: 60_000,
    });
    // The dashboard's assets ship in the package (served by the node, no CDN), and the probes answer.
    for (const path of ['/ui/', '/ui/app.js', '/ui/view.js', '/ui/app.css', '/ui/uPlot.iife.min.js', '/ui/uPlot.min.css', '/ready', '/live']) {
      expect((await fetch(`http://${server.http.host}:${server.http.port}${path}`)).status, path).toBe(200);
    }
    writeFileSync(join(app, 'produce-consume.mjs'), PRODUCE_CONSUME);
    const script = await run(process.execPath, ['produce-consume.mjs', server.address], app);
    expect(script.status, script.stderr).toBe(0);
    expect(JSON.parse(script.stdout)).toEqual(Array.from({ length: 10 }, (_, i) => `m-${i}:${i}`).sort());

    const cli = await run('npx', ['shoal', '--tcp-server-address', server.address, '-u', 'iggy', '-p', 'iggy', '--json', 'topic', 'list', 'packed'], app);
    expect(cli.status, cli.stderr).toBe(0);
    const topics = JSON.parse(cli.stdout) as { name: string; partitionsCount: number; messagesCount: number }[];
    expect(topics.map((t) => [t.name, t.partitionsCount, t.messagesCount])).toEqual([['events', 2, 10]]);

    const stopped = await server.stop('SIGTERM');
    server = undefined;
    expect(stopped.code).toBe(0);
  }, 120_000);

  it('a TypeScript file type-checks against the shipped declarations', async () => {
    writeFileSync(join(app, 'typed.ts'), TYPED);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'es2023', lib: ['es2023'], module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true,
        skipLibCheck: false, types: ['node'], typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
      },
      files: ['typed.ts'],
    }));
    const tsc = await run(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);
});
