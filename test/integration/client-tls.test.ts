/**
 * The client listener over TLS (`[tcp.tls]`, the reference's keys, set here through the
 * reference's `IGGY_TCP_TLS_*` variables): TLS 1.2 and 1.3 and nothing older, no plaintext on the
 * address, a CA-issued pair or a self-signed one the node keeps; the SDK's TLS with the
 * certificate and the host name checked by default; a pair that does not load refuses boot.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect as tlsConnect, type SecureVersion } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { CLIENT_TLS_CERT_FILE, CLIENT_TLS_DIR } from '@shoal/runtime';
import { writeTestPki, type TestPki } from '../support/certificates.js';
import { SERVER_BIN, removeDataDir, startServer, tempDataDir, type ServerHandle } from './support/server.js';

const CREDENTIALS = { username: 'iggy', password: 'iggy' };
const CLI = fileURLToPath(new URL('../../apps/cli/bin/shoal.js', import.meta.url));
const run = promisify(execFile);

function handshake(port: number, options: { ca?: string; minVersion?: SecureVersion; maxVersion?: SecureVersion; servername?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: options.servername ?? 'localhost', ...options, rejectUnauthorized: options.ca !== undefined }, () => {
      const protocol = socket.getProtocol() ?? '';
      socket.destroy();
      resolve(protocol);
    });
    socket.once('error', reject);
  });
}

async function pingOver(client: ShoalClient): Promise<void> {
  try {
    await client.ping({ timeoutMs: 5000 });
    await client.getMe({ timeoutMs: 5000 });
  } finally {
    await client.destroy();
  }
}

describe('client TLS with a CA-issued certificate', () => {
  let dir: string;
  let pki: TestPki;
  let server: ServerHandle;

  beforeAll(async () => {
    dir = tempDataDir('shoal-tls-');
    pki = writeTestPki(dir);
    server = await startServer({
      shards: 2, dataDir: dir,
      env: { IGGY_TCP_TLS_ENABLED: 'true', IGGY_TCP_TLS_SELF_SIGNED: 'false', IGGY_TCP_TLS_CERT_FILE: pki.certFile, IGGY_TCP_TLS_KEY_FILE: pki.keyFile },
    });
  });

  afterAll(async () => {
    await server?.stop();
    removeDataDir(dir);
  });

  it('offers TLS 1.2 and 1.3 and refuses 1.1', async () => {
    expect(await handshake(server.tcp.port, { ca: pki.caPem, maxVersion: 'TLSv1.3' })).toBe('TLSv1.3');
    expect(await handshake(server.tcp.port, { ca: pki.caPem, maxVersion: 'TLSv1.2' })).toBe('TLSv1.2');
    await expect(handshake(server.tcp.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })).rejects.toThrow();
  });

  it('serves the SDK over TLS, from a connection string too, with the host name checked', async () => {
    await pingOver(new ShoalClient({ address: `localhost:${server.tcp.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, tls: { ca: pki.caPem } }));
    await pingOver(new ShoalClient({ url: `iggy://iggy:iggy@127.0.0.1:${server.tcp.port}?tls=true&tls_domain=localhost&tls_ca_file=${encodeURIComponent(pki.caFile)}`, heartbeatIntervalMs: 0 }));
    // The certificate names localhost only: dialing 127.0.0.1 without tls_domain fails the name check.
    const byIp = new ShoalClient({ address: `127.0.0.1:${server.tcp.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, reconnect: { enabled: false }, tls: { ca: pki.caPem } });
    await expect(pingOver(byIp)).rejects.toThrow(/IP|altnames|certificate/i);
    // Without the CA the chain does not verify.
    const untrusted = new ShoalClient({ address: `localhost:${server.tcp.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, reconnect: { enabled: false }, tls: true });
    await expect(pingOver(untrusted)).rejects.toThrow(/certificate/i);
  });

  it('serves the CLI with --tcp-tls-enabled and a CA file, and the CLI refuses an unverified server', async () => {
    const base = ['--tcp-server-address', `localhost:${server.tcp.port}`, '-u', 'iggy', '-p', 'iggy', '--tcp-tls-enabled'];
    const { stdout } = await run(process.execPath, [CLI, ...base, '--tcp-tls-ca-file', pki.caFile, 'stream', 'create', 'tls-cli']);
    expect(stdout).toContain('tls-cli');
    const viaUrl = await run(process.execPath, [CLI, '--url', `iggy://iggy:iggy@127.0.0.1:${server.tcp.port}?tls=true&tls_domain=localhost&tls_ca_file=${encodeURIComponent(pki.caFile)}`, 'stream', 'list']);
    expect(viaUrl.stdout).toContain('tls-cli');
    await expect(run(process.execPath, [CLI, ...base, 'ping'])).rejects.toMatchObject({ stderr: expect.stringMatching(/certificate/i) });
  });

  it('a CLI context carries the TLS settings (tcp_tls_enabled, tcp_tls_domain, tcp_tls_ca_file)', async () => {
    const home = tempDataDir('shoal-cli-tls-home-');
    const env = { PATH: process.env['PATH'] ?? '', SHOAL_HOME: home };
    try {
      await run(process.execPath, [CLI, 'context', 'create', 'secure', '--tcp-server-address', `127.0.0.1:${server.tcp.port}`, '--username', 'iggy', '--password', 'iggy',
        '--tcp-tls-enabled', '--tcp-tls-domain', 'localhost', '--tcp-tls-ca-file', pki.caFile], { env });
      expect(readFileSync(join(home, 'contexts.toml'), 'utf8')).toContain('tcp_tls_enabled = true');
      await run(process.execPath, [CLI, 'context', 'use', 'secure'], { env });
      expect((await run(process.execPath, [CLI, 'stream', 'list'], { env })).stdout).toContain('tls-cli');
    } finally {
      removeDataDir(home);
    }
  });

  it('serves no plaintext on the TLS address', async () => {
    const closed = await new Promise<string>((resolve) => {
      const socket = netConnect(server.tcp.port, '127.0.0.1', () => socket.write(Buffer.alloc(256)));
      let received = 0;
      socket.on('data', (chunk: Buffer) => { received += chunk.length; });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(`closed after ${received} bytes`));
    });
    // The TLS layer answers a non-handshake record with an alert (a few bytes) and closes; never a frame.
    expect(Number(/after (\d+)/.exec(closed)?.[1])).toBeLessThan(256);
  });
});

describe('client TLS, self-signed and refused', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) removeDataDir(d);
  });

  it('self_signed: the node generates a pair for localhost, keeps it across restarts', async () => {
    const dir = tempDataDir('shoal-tls-self-');
    dirs.push(dir);
    const env = { IGGY_TCP_TLS_ENABLED: 'true' };
    const first = await startServer({ shards: 1, dataDir: dir, env });
    const certPem = readFileSync(join(dir, 'data', CLIENT_TLS_DIR, CLIENT_TLS_CERT_FILE), 'utf8');
    await pingOver(new ShoalClient({ address: `localhost:${first.tcp.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, tls: { ca: certPem } }));
    await first.stop();
    const second = await startServer({ shards: 1, dataDir: dir, env });
    expect(readFileSync(join(dir, 'data', CLIENT_TLS_DIR, CLIENT_TLS_CERT_FILE), 'utf8')).toBe(certPem);
    await pingOver(new ShoalClient({ address: `127.0.0.1:${second.tcp.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, tls: { ca: certPem } }));
    await second.stop();
  });

  it('a pair that does not load refuses boot naming the key', async () => {
    const dir = tempDataDir('shoal-tls-bad-');
    dirs.push(dir);
    const pki = writeTestPki(dir);
    const missing = await runToExit({ IGGY_TCP_TLS_ENABLED: 'true', IGGY_TCP_TLS_SELF_SIGNED: 'false', IGGY_TCP_TLS_CERT_FILE: join(dir, 'nope.pem'), IGGY_TCP_TLS_KEY_FILE: pki.keyFile, IGGY_SYSTEM_PATH: join(dir, 'a') });
    expect(missing.code).toBe(3);
    expect(missing.text).toContain('tcp.tls.cert_file');
    const mismatched = await runToExit({ IGGY_TCP_TLS_ENABLED: 'true', IGGY_TCP_TLS_SELF_SIGNED: 'false', IGGY_TCP_TLS_CERT_FILE: pki.caFile, IGGY_TCP_TLS_KEY_FILE: pki.keyFile, IGGY_SYSTEM_PATH: join(dir, 'b') });
    expect(mismatched.code).toBe(3);
    expect(mismatched.text).toContain('tcp.tls.key_file');
    const unnamed = await runToExit({ IGGY_TCP_TLS_ENABLED: 'true', IGGY_TCP_TLS_SELF_SIGNED: 'false', IGGY_SYSTEM_PATH: join(dir, 'c') });
    expect(unnamed.code).toBe(3);
    expect(unnamed.text).toContain('tcp.tls.cert_file');
  });
});

function runToExit(env: Readonly<Record<string, string>>): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve) => {
    const childEnv: Record<string, string> = { ...process.env as Record<string, string>, IGGY_TCP_ADDRESS: '127.0.0.1:0', IGGY_HTTP_ADDRESS: '127.0.0.1:0', IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false', ...env };
    delete childEnv['NODE_OPTIONS'];
    delete childEnv['VITEST'];
    const child = spawn(process.execPath, [SERVER_BIN, '--with-default-root-credentials'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { text += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { text += d; });
    child.once('exit', (code) => resolve({ code, text }));
  });
}
