/**
 * The client listener's TLS material (`[tcp.tls]`, the reference's keys and `IGGY_TCP_TLS_*`):
 * read once by the supervisor, handed to every shard as PEM text (a SecureContext cannot cross
 * threads), turned into each shard's `tls.Server`.
 *
 *   enabled = false                          → plaintext (null)
 *   self_signed = true, cert_file not on disk → a pair the node generates and keeps in
 *                                               `<system.path>/tls/client.{crt,key}` (ECDSA P-256,
 *                                               SANs localhost, 127.0.0.1, ::1 and the bind address)
 *   otherwise                                → cert_file + key_file (PEM), which must load
 *
 * As the reference (core/server/src/bootstrap.rs `ephemeral_certificate`): self_signed with a
 * cert_file that exists loads the file. TLS 1.2 and 1.3 are offered, nothing older; no client
 * certificates (the reference's listener has no client auth either).
 */
import { createSecureContext } from 'node:tls';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { ShoalConfig } from '../config/index.js';
import { loadOrCreateSelfSignedPair } from '../replica-plane/self-signed.js';

export const CLIENT_TLS_DIR = 'tls';
export const CLIENT_TLS_CERT_FILE = 'client.crt';
export const CLIENT_TLS_KEY_FILE = 'client.key';
export const CLIENT_TLS_MIN_VERSION = 'TLSv1.2';
export const CLIENT_TLS_MAX_VERSION = 'TLSv1.3';

export interface ClientTlsMaterial {
  readonly certPem: string;
  readonly keyPem: string;
  readonly source: 'files' | 'self_signed';
}

/** A `[tcp.tls]` setting that cannot be honoured; `key` names it. */
export class ClientTlsError extends Error {
  readonly key: string;

  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.key = key;
  }
}

export function loadClientTls(config: ShoalConfig): ClientTlsMaterial | null {
  const tls = config.tcp.tls;
  if (!tls.enabled) return null;
  if (tls.selfSigned && (tls.certFile === '' || !existsSync(tls.certFile))) {
    const pair = loadOrCreateSelfSignedPair({
      dir: join(config.system.path, CLIENT_TLS_DIR), certFile: CLIENT_TLS_CERT_FILE, keyFile: CLIENT_TLS_KEY_FILE,
      commonName: 'shoal client listener', dnsNames: ['localhost'], ips: selfSignedIps(config),
    });
    return { certPem: pair.certPem, keyPem: pair.keyPem, source: 'self_signed' };
  }
  const certPem = readPem('tcp.tls.cert_file', tls.certFile);
  const keyPem = readPem('tcp.tls.key_file', tls.keyFile);
  try {
    createSecureContext({ cert: certPem, key: keyPem, minVersion: CLIENT_TLS_MIN_VERSION });
  } catch (error) {
    throw new ClientTlsError('tcp.tls.key_file', `does not load with tcp.tls.cert_file (${error instanceof Error ? error.message : String(error)})`);
  }
  return { certPem, keyPem, source: 'files' };
}

function readPem(key: string, path: string): string {
  if (path === '') throw new ClientTlsError(key, 'required when tcp.tls.enabled = true and tcp.tls.self_signed = false');
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ClientTlsError(key, `cannot read ${path} (${error instanceof Error ? error.message : String(error)})`);
  }
}

function selfSignedIps(config: ShoalConfig): string[] {
  const ips = new Set(['127.0.0.1', '::1']);
  const host = config.node.listeners.tcp?.host ?? '';
  if (isIP(host) !== 0 && host !== '0.0.0.0' && host !== '::') ips.add(host);
  return [...ips];
}
