/**
 * Replica TLS (replication-semantics.md §3.8, clustering/security.mdx): TLS 1.3 + ALPN
 * `iggy-replica`, CA mode and self-signed mode, the exporter bound into the MAC (a relay that
 * terminates TLS twice fails), and TLS without auth refused.
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TLS_EXPORTER_LABEL } from '@shoal/protocol';
import { loadConfig } from '../src/config/index.js';
import {
  REPLICA_ALPN,
  ReplicaPlane,
  ReplicaPlaneError,
  SELF_SIGNED_CERT_FILE,
  SELF_SIGNED_KEY_FILE,
  certificatePem,
  generateCertificateKeyPair,
  issueCertificateDer,
  loadOrCreateSelfSigned,
  privateKeyPem,
  replicaPlaneSettingsFrom,
  tlsExporter,
  type CertificateKeyPair,
} from '../src/replica-plane/index.js';
import { TcpProxy } from '../../../test/support/tcp-proxy.js';
import { SECRET, commitFrame, commitOf, freePorts, settingsFor, sleep, startNode, stopAll, waitFor } from './replica-plane-support.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-replica-tls-'));
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  await stopAll();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3600 * 1000;

function issue(commonName: string, keys: CertificateKeyPair, issuer: { commonName: string; keys: CertificateKeyPair }, options: { ips?: string[]; isCa?: boolean } = {}): string {
  return certificatePem(issueCertificateDer({
    subject: { commonName, ...(options.ips !== undefined ? { ips: options.ips } : {}), ...(options.isCa === true ? { isCa: true } : {}) },
    subjectPublicKey: keys.publicKey,
    issuer,
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 24 * HOUR),
    serial: new Uint8Array(randomBytes(16)).map((b, i) => (i === 0 ? (b & 0x7f) | 1 : b)),
  }));
}

/** A CA and one leaf per node (IP SAN 127.0.0.1 unless told otherwise), written to `dir/name`. */
function caFiles(name: string, leafIps: string[] = ['127.0.0.1']): { ca: string; cert: string; key: string; issuer: { commonName: string; keys: CertificateKeyPair } } {
  const caKeys = generateCertificateKeyPair();
  const ca = { commonName: `${name} test CA`, keys: caKeys };
  const leafKeys = generateCertificateKeyPair();
  const files = { ca: join(dir, `${name}-ca.pem`), cert: join(dir, `${name}-node.pem`), key: join(dir, `${name}-node.key`) };
  writeFileSync(files.ca, issue(ca.commonName, caKeys, ca, { isCa: true }));
  writeFileSync(files.cert, issue(`${name} replica`, leafKeys, ca, { ips: leafIps }));
  writeFileSync(files.key, privateKeyPem(leafKeys.privateKey));
  return { ...files, issuer: ca };
}

describe('certificates', () => {
  it('issued certificates parse, chain and carry their SANs', () => {
    const files = caFiles('parse', ['127.0.0.1', '::1']);
    const ca = new X509Certificate(readFileSync(files.ca));
    const leaf = new X509Certificate(readFileSync(files.cert));
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkIP('::1')).toBe('::1');
    expect(leaf.checkIP('10.0.0.1')).toBeUndefined();
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  });

  it('self-signed: generated once, reloaded on restart, regenerated when unusable', () => {
    const home = join(dir, 'self');
    const first = loadOrCreateSelfSigned(home, '127.0.0.1');
    expect(first.created).toBe(true);
    const again = loadOrCreateSelfSigned(home, '127.0.0.1');
    expect(again).toEqual({ ...first, created: false });
    const cert = new X509Certificate(first.certPem);
    expect(cert.subject).toBe(cert.issuer);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    writeFileSync(join(home, SELF_SIGNED_KEY_FILE), 'not a key');
    const regenerated = loadOrCreateSelfSigned(home, '127.0.0.1');
    expect(regenerated.created).toBe(true);
    expect(regenerated.certPem).not.toBe(first.certPem);
    expect(readFileSync(join(home, SELF_SIGNED_CERT_FILE), 'utf8')).toBe(regenerated.certPem);
  });
});

describe('replica TLS', () => {
  it('CA mode: TLS 1.3, ALPN iggy-replica, the dialer verifies the acceptor against ca_file', async () => {
    const files = caFiles('ca-mode');
    const ports = await freePorts(2);
    const tlsSettings = { selfSigned: false, certFile: files.cert, keyFile: files.key, caFile: files.ca };
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET }, tls: tlsSettings }));
    const zero = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, tls: tlsSettings }));
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'TLS link');
    expect(zero.ups[0]?.info).toEqual({ direction: 'outbound', tls: true, handedOff: false });
    expect(one.plane.tlsMode).toBe('ca');
    zero.plane.send(1, commitFrame(0, 5n));
    one.plane.send(0, commitFrame(1, 6n));
    await waitFor(() => one.frames.get(0)?.length === 1 && zero.frames.get(1)?.length === 1, 3000, 'frames over TLS');
    expect(commitOf(one.frames.get(0)?.[0] as Uint8Array)).toBe(5n);
  });

  it('CA mode refuses an acceptor whose certificate is from another CA or lacks the roster IP', async () => {
    for (const [acceptorFiles, caFile] of [
      [caFiles('stranger'), caFiles('trusted').ca],
      [caFiles('no-ip', ['10.1.2.3']), null],
    ] as const) {
      const ports = await freePorts(2);
      const acceptorTls = { selfSigned: false, certFile: acceptorFiles.cert, keyFile: acceptorFiles.key, caFile: acceptorFiles.ca };
      const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET }, tls: acceptorTls }));
      const zero = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, tls: { ...acceptorTls, caFile: caFile ?? acceptorFiles.ca } }));
      await waitFor(() => zero.refusals.length > 0, 3000, 'dialer refusal');
      expect(zero.refusals[0]?.reason).toBe('tls_failed');
      expect(one.plane.isConnected(0)).toBe(false);
      await zero.plane.stop();
      await one.plane.stop();
    }
  });

  it('self-signed mode: each node generates its certificate; dialers accept any certificate', async () => {
    const ports = await freePorts(3);
    const nodes = await Promise.all([0, 1, 2].map((selfId) =>
      startNode(settingsFor({ selfId, ports, auth: { secret: SECRET }, tls: { selfSigned: true, selfSignedDir: join(dir, `node-${selfId}`) } }))));
    await waitFor(() => nodes.every((node) => node.plane.connectedPeers().length === 2), 5000, 'TLS mesh');
    expect(nodes.map((node) => node.plane.tlsMode)).toEqual(['self_signed', 'self_signed', 'self_signed']);
    const certs = [0, 1, 2].map((i) => readFileSync(join(dir, `node-${i}`, SELF_SIGNED_CERT_FILE), 'utf8'));
    expect(new Set(certs).size).toBe(3);
  });

  it('the exporter is bound into the MAC: a relay terminating TLS twice fails, a byte relay does not', async () => {
    const ports = await freePorts(2);
    const tlsOf = (i: number) => ({ selfSigned: true, selfSignedDir: join(dir, `mitm-${i}`) });
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET }, tls: tlsOf(1) }));
    const relay = await tlsTerminatingRelay(ports[1] as number);
    const zero = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, tls: tlsOf(0), dialPorts: [undefined, relay.port] }));
    await waitFor(() => zero.refusals.some((r) => r.reason === 'mac_mismatch'), 3000, 'MAC refusal through the relay');
    expect(relay.sessions()).toBeGreaterThan(0);
    await sleep(100);
    expect(zero.plane.isConnected(1)).toBe(false);
    expect(one.plane.isConnected(0)).toBe(false);
    await zero.plane.stop();

    // The same path through a plain byte relay (one end-to-end TLS session) links fine.
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: ports[1] as number });
    cleanups.push(() => proxy.stop());
    const zeroAgain = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, tls: tlsOf(0), dialPorts: [undefined, proxy.port] }));
    await waitFor(() => zeroAgain.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'link through the byte relay');
  });

  it('CA mode: a relay holding a valid certificate for the acceptor\'s IP still fails the MAC', async () => {
    const files = caFiles('mitm-ca');
    const ports = await freePorts(2);
    const tlsSettings = { selfSigned: false, certFile: files.cert, keyFile: files.key, caFile: files.ca };
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET }, tls: tlsSettings }));
    const relay = await tlsTerminatingRelay(ports[1] as number, files.issuer);
    const zero = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, tls: tlsSettings, dialPorts: [undefined, relay.port] }));
    await waitFor(() => zero.refusals.some((r) => r.reason === 'mac_mismatch'), 3000, 'MAC refusal through the relay');
    // The relay's certificate passed CA verification: only the exporter binding stopped it.
    expect(relay.sessions()).toBeGreaterThan(0);
    expect(zero.refusals.some((r) => r.reason === 'tls_failed')).toBe(false);
    expect(one.plane.isConnected(0)).toBe(false);
  });

  it('the exporter without a context equals the one with an empty context (TLS 1.3)', async () => {
    const keys = generateCertificateKeyPair();
    const cert = issue('x', keys, { commonName: 'x', keys });
    const server = tls.createServer({ cert, key: privateKeyPem(keys.privateKey), minVersion: 'TLSv1.3', ALPNProtocols: [REPLICA_ALPN] }, (socket) => {
      socket.write(Buffer.from(tlsExporter(socket)));
      socket.end();
    });
    await new Promise<void>((done) => server.listen({ host: '127.0.0.1', port: 0 }, () => done()));
    cleanups.push(() => void server.close());
    const client = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, rejectUnauthorized: false, ALPNProtocols: [REPLICA_ALPN], minVersion: 'TLSv1.3' });
    client.on('error', () => undefined);
    const fromServer = await new Promise<Buffer>((done) => {
      const parts: Buffer[] = [];
      client.on('data', (chunk: Buffer) => parts.push(chunk));
      client.on('end', () => done(Buffer.concat(parts)));
    });
    expect(fromServer.length).toBe(32);
    expect(Buffer.from(tlsExporter(client))).toEqual(fromServer);
    expect(client.exportKeyingMaterial(32, TLS_EXPORTER_LABEL, Buffer.alloc(0))).toEqual(fromServer);
    client.destroy();
  });

  it('TLS without auth is refused at start (and by configuration validation)', async () => {
    const ports = await freePorts(2);
    const settings = settingsFor({ selfId: 0, ports, tls: { selfSigned: true, selfSignedDir: join(dir, 'noauth') } });
    await expect(ReplicaPlane.start({ settings })).rejects.toMatchObject({ code: 'tls_requires_auth' });
    await expect(ReplicaPlane.start({ settings })).rejects.toBeInstanceOf(ReplicaPlaneError);
    const file = `[cluster]\nenabled = true\n[cluster.tls]\nenabled = true\nself_signed = true\n[[cluster.nodes]]\nname = "a"\nip = "127.0.0.1"\nreplica_id = 0\nports = { tcp = 8090, http = 3000, tcp_replica = 9090 }\n`;
    const loaded = loadConfig({ file, env: {}, flags: { replicaId: 0 }, availableParallelism: 2 });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors.some((error) => error.path === 'cluster.tls.enabled')).toBe(true);
  });

  it('settings from a loaded configuration', () => {
    const file = [
      '[cluster]', 'enabled = true', 'name = "c1"',
      ...[0, 1, 2].flatMap((i) => ['[[cluster.nodes]]', `name = "n${i}"`, `ip = "127.0.0.${i + 1}"`, `replica_id = ${i}`, `ports = { tcp = ${8090 + i}, http = ${3000 + i}, tcp_replica = ${9090 + i} }`]),
    ].join('\n');
    const loaded = loadConfig({ file, env: { IGGY_CLUSTER_AUTH_ENABLED: 'true', IGGY_CLUSTER_AUTH_SHARED_SECRET: SECRET }, flags: { replicaId: 1 }, availableParallelism: 2 });
    if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join('\n'));
    const settings = replicaPlaneSettingsFrom(loaded.config);
    expect(settings).toMatchObject({
      clusterName: 'c1',
      selfId: 1,
      replicaCount: 3,
      selfIp: '127.0.0.2',
      listen: { host: '127.0.0.2', port: 9091 },
      peers: [{ replicaId: 0, ip: '127.0.0.1', port: 9090 }, { replicaId: 2, ip: '127.0.0.3', port: 9092 }],
      auth: { enabled: true, sharedSecret: SECRET },
      messageBus: { peerQueueCapacity: 256, maxBatch: 256, maxMessageSizeBytes: 64 * 1024 * 1024, handshakeGraceMs: 10_000, reconnectPeriodMs: 5000 },
    });
    expect(settings.tls.selfSignedDir.endsWith('tls')).toBe(true);
  });
});

/**
 * A man in the middle with its own certificate: TLS server to the dialer, TLS client to the
 * acceptor, plaintext relayed both ways. Each side gets a different exporter.
 */
async function tlsTerminatingRelay(targetPort: number, issuer?: { commonName: string; keys: CertificateKeyPair }): Promise<{ port: number; sessions: () => number }> {
  const keys = generateCertificateKeyPair();
  const cert = issue('mitm', keys, issuer ?? { commonName: 'mitm', keys }, { ips: ['127.0.0.1'] });
  const context = tls.createSecureContext({ cert, key: privateKeyPem(keys.privateKey), minVersion: 'TLSv1.3' });
  let sessions = 0;
  const sockets: Socket[] = [];
  const server: Server = createServer((raw) => {
    raw.on('error', () => undefined);
    const front = new tls.TLSSocket(raw, { isServer: true, secureContext: context, ALPNProtocols: [REPLICA_ALPN] });
    const back = tls.connect({ host: '127.0.0.1', port: targetPort, rejectUnauthorized: false, ALPNProtocols: [REPLICA_ALPN], minVersion: 'TLSv1.3' });
    sockets.push(raw, front, back);
    front.on('error', () => undefined);
    back.on('error', () => undefined);
    front.on('secure', () => {
      sessions++;
    });
    front.pipe(back);
    back.pipe(front);
    front.on('close', () => back.destroy());
    back.on('close', () => front.destroy());
  });
  await new Promise<void>((done) => server.listen({ host: '127.0.0.1', port: 0 }, () => done()));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, sessions: () => sessions };
}
