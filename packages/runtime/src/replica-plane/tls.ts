/**
 * Replica TLS (replication-semantics.md §3.8, clustering/security.mdx): TLS 1.3 only, ALPN
 * `iggy-replica`, wrapped around the TCP stream before any handshake frame. The dialer is the TLS
 * client and verifies the acceptor against the peer's roster `ip`; there are no client
 * certificates. After the TLS handshake both ends compute the RFC 8446 exporter
 * (`exportKeyingMaterial(32, "iggy replica psk binding")`, no context) and fold it into both MACs
 * (mode byte 1), so a relay that terminates two TLS sessions sees two exporters and fails the MAC.
 *
 *   CA mode           cert_file + key_file presented; dialers verify against ca_file, name = roster ip
 *   self-signed mode  generated at boot (self-signed.ts); dialers accept ANY certificate
 *
 * TLS without `cluster.auth` is refused at start (settings.ts): TLS authenticates only the
 * acceptor; the PSK handshake authenticates the peer.
 *
 * SNI: roster addresses are literal IPs, and RFC 6066 forbids an IP as server_name, so no SNI
 * is sent; the certificate is still checked against the IP (`checkServerIdentity(ip, cert)`,
 * which matches IP SANs), which is what "uses the roster ip as verification name" requires.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { TLS_EXPORTER_LABEL, TLS_EXPORTER_SIZE } from '@shoal/protocol';
import type { Deadline } from './deadline.js';
import { ReplicaPlaneError } from './errors.js';
import type { HandshakeRefusal } from './handshake-step.js';
import { loadOrCreateSelfSigned } from './self-signed.js';
import type { PeerAddress, ReplicaPlaneSettings } from './settings.js';

export const REPLICA_ALPN = 'iggy-replica';
const TLS_VERSION = 'TLSv1.3';

export interface ReplicaTlsMaterial {
  readonly mode: 'ca' | 'self_signed';
  /** What the acceptor presents. */
  readonly serverContext: tls.SecureContext;
  /** CA mode: the trust anchors (PEM); self-signed mode: null (any certificate accepted). */
  readonly ca: string | null;
  /** The certificate this node presents (PEM). */
  readonly certificatePem: string;
}

/**
 * Loads (CA mode) or loads-or-generates (self-signed mode) the TLS material. Synchronous: boot
 * only. Throws `ReplicaPlaneError` (`tls_requires_auth`, `tls_material_invalid`).
 */
export function loadReplicaTls(settings: ReplicaPlaneSettings): ReplicaTlsMaterial {
  const { tls: options, auth } = settings;
  if (!auth.enabled) throw new ReplicaPlaneError('tls_requires_auth', 'cluster.tls.enabled requires cluster.auth.enabled');
  let certPem: string;
  let keyPem: string;
  let ca: string | null = null;
  if (options.selfSigned) {
    if (options.selfSignedDir === '') throw new ReplicaPlaneError('tls_material_invalid', 'self-signed mode needs a directory to keep its certificate in');
    const pair = loadOrCreateSelfSigned(options.selfSignedDir, settings.selfIp);
    certPem = pair.certPem;
    keyPem = pair.keyPem;
  } else {
    const missing = (['certFile', 'keyFile', 'caFile'] as const).filter((key) => options[key] === '');
    if (missing.length > 0) throw new ReplicaPlaneError('tls_material_invalid', `CA mode needs cert_file, key_file and ca_file (missing: ${missing.join(', ')})`);
    try {
      certPem = readFileSync(options.certFile, 'utf8');
      keyPem = readFileSync(options.keyFile, 'utf8');
      ca = readFileSync(options.caFile, 'utf8');
    } catch (cause) {
      throw new ReplicaPlaneError('tls_material_invalid', `cannot read the replica TLS files: ${String(cause)}`, { cause });
    }
  }
  let serverContext: tls.SecureContext;
  try {
    serverContext = tls.createSecureContext({ cert: certPem, key: keyPem, minVersion: TLS_VERSION, maxVersion: TLS_VERSION });
  } catch (cause) {
    throw new ReplicaPlaneError('tls_material_invalid', `the replica certificate or key is unusable: ${String(cause)}`, { cause });
  }
  return { mode: options.selfSigned ? 'self_signed' : 'ca', serverContext, ca, certificatePem: certPem };
}

export type TlsResult =
  | { readonly ok: true; readonly socket: tls.TLSSocket; readonly exporter: Uint8Array }
  | { readonly ok: false; readonly reason: HandshakeRefusal; readonly detail: string };

/** Acceptor side: TLS server over an accepted TCP socket. */
export function acceptTls(raw: Socket, material: ReplicaTlsMaterial, deadline: Deadline): Promise<TlsResult> {
  const socket = new tls.TLSSocket(raw, {
    isServer: true,
    secureContext: material.serverContext,
    ALPNProtocols: [REPLICA_ALPN],
    requestCert: false,
    rejectUnauthorized: false,
  });
  return settle(socket, 'secure', deadline);
}

/** Dialer side: TLS client over a connected TCP socket, verifying the peer as configured. */
export function dialTls(raw: Socket, target: PeerAddress, material: ReplicaTlsMaterial, deadline: Deadline): Promise<TlsResult> {
  const socket = tls.connect({
    socket: raw,
    host: target.ip,
    ALPNProtocols: [REPLICA_ALPN],
    minVersion: TLS_VERSION,
    maxVersion: TLS_VERSION,
    ...(material.ca !== null
      ? { ca: material.ca, rejectUnauthorized: true }
      : { rejectUnauthorized: false, checkServerIdentity: () => undefined }),
  });
  return settle(socket, 'secureConnect', deadline);
}

function settle(socket: tls.TLSSocket, event: 'secure' | 'secureConnect', deadline: Deadline): Promise<TlsResult> {
  return new Promise<TlsResult>((resolve) => {
    let done = false;
    const finish = (result: TlsResult): void => {
      if (done) return;
      done = true;
      socket.off(event, onSecure);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (!result.ok) socket.destroy();
      resolve(result);
    };
    function onSecure(): void {
      if (socket.alpnProtocol !== REPLICA_ALPN) {
        finish({ ok: false, reason: 'alpn_mismatch', detail: `negotiated ALPN ${String(socket.alpnProtocol)}` });
        return;
      }
      if (socket.getProtocol() !== TLS_VERSION) {
        finish({ ok: false, reason: 'tls_failed', detail: `negotiated ${String(socket.getProtocol())}` });
        return;
      }
      finish({ ok: true, socket, exporter: tlsExporter(socket) });
    }
    function onError(error: Error): void {
      finish({ ok: false, reason: 'tls_failed', detail: error.message });
    }
    function onClose(): void {
      finish({ ok: false, reason: 'peer_closed', detail: 'closed during the TLS handshake' });
    }
    socket.on(event, onSecure);
    // Errors after the outcome (a late alert) must not crash the process; the owner of the
    // socket watches 'close'.
    socket.on('error', () => undefined);
    socket.on('error', onError);
    socket.on('close', onClose);
    deadline.onExpire(() => finish({ ok: false, reason: 'deadline', detail: 'handshake_grace expired during TLS' }));
  });
}

/** The channel binding of §3.8: RFC 8446 exporter, label "iggy replica psk binding", no context, 32 bytes. */
export function tlsExporter(socket: tls.TLSSocket): Uint8Array {
  // @types/node declares `context` required; Node accepts it absent, which is the spec's "no
  // context" (in TLS 1.3 identical to an empty one, RFC 8446 §7.5; a test checks both agree).
  const exportWithoutContext = socket.exportKeyingMaterial as (length: number, label: string) => Buffer;
  return new Uint8Array(exportWithoutContext.call(socket, TLS_EXPORTER_SIZE, TLS_EXPORTER_LABEL));
}
