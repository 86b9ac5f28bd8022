/**
 * Root credentials as the reference sets them (core/server/src/bootstrap.rs): from
 * IGGY_ROOT_USERNAME / IGGY_ROOT_PASSWORD, or `--with-default-root-credentials` (iggy / iggy),
 * else a random password that the node logs once, when it creates the root user, and never again;
 * a cluster's first boot without explicit credentials is refused.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { renderClusterConfig } from '@shoal/server';
import { freePorts } from './support/cluster.js';
import { SERVER_BIN, removeDataDir, startServer, tempDataDir } from './support/server.js';

const GENERATED = 'root user created with a generated password';

function generatedPasswordLines(lines: readonly string[]): { username: string; password: string }[] {
  return lines.filter((line) => line.includes(GENERATED)).map((line) => JSON.parse(line) as { username: string; password: string });
}

async function canLogin(address: string, username: string, password: string): Promise<boolean> {
  const client = new ShoalClient({ address, credentials: { username, password }, heartbeatIntervalMs: 0, reconnect: { enabled: false } });
  try {
    await client.ping({ timeoutMs: 5000 });
    await client.getMe({ timeoutMs: 5000 });
    return true;
  } catch {
    return false;
  } finally {
    await client.destroy();
  }
}

describe('root credentials', () => {
  const dirs: string[] = [];
  const dir = (): string => {
    const d = tempDataDir('shoal-root-');
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) removeDataDir(d);
  });

  it('without credentials: a generated password, logged once on the first start and never again', async () => {
    const dataDir = dir();
    const first = await startServer({ shards: 1, dataDir, defaultRootCredentials: false });
    const shown = generatedPasswordLines(first.lines);
    expect(shown).toHaveLength(1);
    const { username, password } = shown[0] as { username: string; password: string };
    expect(username).toBe('iggy');
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect(await canLogin(first.address, 'iggy', 'iggy')).toBe(false);
    expect(await canLogin(first.address, username, password)).toBe(true);
    expect((await first.stop()).code).toBe(0);
    const second = await startServer({ shards: 1, dataDir, defaultRootCredentials: false });
    expect(generatedPasswordLines(second.lines)).toEqual([]);
    expect(second.lines.join('\n')).not.toContain(password);
    expect(await canLogin(second.address, username, password)).toBe(true);
    await second.stop();
  });

  it('IGGY_ROOT_USERNAME / IGGY_ROOT_PASSWORD choose the root user; the default flag gives iggy / iggy', async () => {
    const custom = await startServer({ shards: 1, dataDir: dir(), defaultRootCredentials: false, env: { IGGY_ROOT_USERNAME: 'admin', IGGY_ROOT_PASSWORD: 'a-long-secret' } });
    expect(generatedPasswordLines(custom.lines)).toEqual([]);
    expect(await canLogin(custom.address, 'admin', 'a-long-secret')).toBe(true);
    expect(await canLogin(custom.address, 'iggy', 'iggy')).toBe(false);
    await custom.stop();
    const dev = await startServer({ shards: 1, dataDir: dir() });
    expect(dev.lines.some((line) => line.includes('--with-default-root-credentials') && line.includes('INSECURE'))).toBe(true);
    expect(await canLogin(dev.address, 'iggy', 'iggy')).toBe(true);
    await dev.stop();
  });

  it('half a pair refuses boot naming the missing variable', async () => {
    const out = await runToExit([], { IGGY_ROOT_USERNAME: 'admin', IGGY_SYSTEM_PATH: join(dir(), 'data') });
    expect(out.code).toBe(3);
    expect(out.text).toContain('IGGY_ROOT_USERNAME is set but IGGY_ROOT_PASSWORD is not');
  });

  it("a cluster node's first boot without credentials is refused, naming the variables", async () => {
    const d = dir();
    const ports = await freePorts(6);
    const file = join(d, 'cluster.toml');
    writeFileSync(file, renderClusterConfig({
      name: 'root-test', sharedSecret: 'root-credentials-test-secret-0123456789', tls: 'off', shards: 1, logFile: false,
      nodes: [0, 1, 2].map((i) => ({ name: `node-${i}`, replicaId: i, ip: '127.0.0.1', tcp: ports[i] as number, tcpReplica: ports[i + 3] as number, http: null })),
    }));
    const out = await runToExit(['--config', file, '--replica-id', '0'], { IGGY_SYSTEM_PATH: join(d, 'node-0') });
    expect(out.code).toBe(3);
    expect(out.text).toContain('IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD');
  });
});

function runToExit(args: readonly string[], env: Readonly<Record<string, string>>): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve) => {
    const childEnv: Record<string, string> = { ...process.env as Record<string, string>, IGGY_TCP_ADDRESS: '127.0.0.1:0', IGGY_HTTP_ADDRESS: '127.0.0.1:0', IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false', ...env };
    delete childEnv['NODE_OPTIONS'];
    delete childEnv['VITEST'];
    const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { text += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { text += d; });
    child.once('exit', (code) => resolve({ code, text }));
  });
}
