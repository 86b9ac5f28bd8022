/**
 * Self-signed mode (`cluster.tls.self_signed = true`, clustering/security.mdx): the node presents
 * a certificate it generated itself and dialers accept ANY certificate, so TLS gives
 * confidentiality only and peer authenticity rests on the PSK handshake (whose MAC binds the TLS
 * exporter, so a relay that terminates TLS twice still fails).
 *
 * The certificate and key are generated once and kept in `<system.path>/tls/` (replica.crt,
 * replica.key mode 0600), so a restart presents the same certificate. A missing, unreadable,
 * mismatched or nearly expired pair is regenerated. Call this after the data directory's
 * identity has been checked (`openDataDir` refuses a non-empty directory without
 * `shoal.identity`, and this writes into it).
 */
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { certificatePem, generateCertificateKeyPair, issueCertificateDer, privateKeyPem } from './x509.js';

export const SELF_SIGNED_CERT_FILE = 'replica.crt';
export const SELF_SIGNED_KEY_FILE = 'replica.key';
const VALIDITY_MS = 10 * 365 * 24 * 3600 * 1000;
/** Backdating absorbs clock skew between nodes (irrelevant to dialers, which accept any cert, but tidy). */
const BACKDATE_MS = 3600 * 1000;
/** A stored certificate closer than this to expiry is replaced. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

export interface SelfSignedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** True when this call generated (and stored) a new pair. */
  readonly created: boolean;
}

export function loadOrCreateSelfSigned(dir: string, ip: string, now: Date = new Date()): SelfSignedCertificate {
  return loadOrCreateSelfSignedPair({
    dir, certFile: SELF_SIGNED_CERT_FILE, keyFile: SELF_SIGNED_KEY_FILE, commonName: `shoal-replica ${ip}`, ips: isIP(ip) === 0 ? [] : [ip],
  }, now);
}

/** Where a self-signed pair lives and what it names (the client plane's `[tcp.tls]` uses it too). */
export interface SelfSignedSpec {
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly commonName: string;
  readonly ips: readonly string[];
  readonly dnsNames?: readonly string[];
}

/**
 * The stored pair when it is usable (readable, matching, not near expiry) and still names the
 * same SANs; otherwise a new one, stored atomically (key mode 0600).
 */
export function loadOrCreateSelfSignedPair(spec: SelfSignedSpec, now: Date = new Date()): SelfSignedCertificate {
  const certPath = join(spec.dir, spec.certFile);
  const keyPath = join(spec.dir, spec.keyFile);
  const stored = readUsablePair(certPath, keyPath, now, spec);
  if (stored !== null) return { ...stored, created: false };
  const keys = generateCertificateKeyPair();
  const commonName = spec.commonName;
  const der = issueCertificateDer({
    subject: { commonName, ips: spec.ips, ...(spec.dnsNames === undefined ? {} : { dnsNames: spec.dnsNames }) },
    subjectPublicKey: keys.publicKey,
    issuer: { commonName, keys },
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + VALIDITY_MS),
    serial: positiveSerial(),
  });
  const certPem = certificatePem(der);
  const keyPem = privateKeyPem(keys.privateKey);
  mkdirSync(spec.dir, { recursive: true });
  writeAtomically(keyPath, keyPem, 0o600);
  writeAtomically(certPath, certPem, 0o644);
  return { certPem, keyPem, created: true };
}

function readUsablePair(certPath: string, keyPath: string, now: Date, spec: SelfSignedSpec): { certPem: string; keyPem: string } | null {
  if (!existsSync(certPath) || !existsSync(keyPath)) return null;
  try {
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    const cert = new X509Certificate(certPem);
    if (Date.parse(cert.validTo) - now.getTime() < RENEW_BEFORE_MS) return null;
    if (!namesAll(cert, spec)) return null;
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return null;
    return { certPem, keyPem };
  } catch {
    return null;
  }
}

/** Every SAN the spec asks for is in the certificate (a changed listener address renews it). */
function namesAll(cert: X509Certificate, spec: SelfSignedSpec): boolean {
  for (const dns of spec.dnsNames ?? []) if (cert.checkHost(dns, { subject: 'never' }) === undefined) return false;
  for (const ip of spec.ips) if (cert.checkIP(ip) === undefined) return false;
  return true;
}

function positiveSerial(): Uint8Array {
  const serial = new Uint8Array(randomBytes(16));
  serial[0] = ((serial[0] as number) & 0x7f) | 0x01;
  return serial;
}

function writeAtomically(path: string, text: string, mode: number): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
