/**
 * A throwaway CA and a server certificate it issued (ECDSA P-256, built by the runtime's own
 * X.509 writer and checked by OpenSSL in every TLS handshake), written as PEM files for tests of
 * the client listener's `[tcp.tls]`.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CertificateKeyPair, certificatePem, generateCertificateKeyPair, issueCertificateDer, privateKeyPem } from '@shoal/runtime';

export interface TestPki {
  readonly caFile: string;
  readonly caPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const HOUR = 3600 * 1000;

function issue(commonName: string, keys: CertificateKeyPair, issuer: { commonName: string; keys: CertificateKeyPair }, subject: { dnsNames?: string[]; ips?: string[]; isCa?: boolean }): string {
  const serial = new Uint8Array(randomBytes(16));
  serial[0] = ((serial[0] as number) & 0x7f) | 0x01;
  return certificatePem(issueCertificateDer({
    subject: { commonName, ...subject }, subjectPublicKey: keys.publicKey, issuer,
    notBefore: new Date(Date.now() - HOUR), notAfter: new Date(Date.now() + 24 * HOUR), serial,
  }));
}

/** A CA, and a leaf for `dnsNames` (default localhost only) signed by it, in `dir`. */
export function writeTestPki(dir: string, dnsNames: string[] = ['localhost'], ips: string[] = []): TestPki {
  const caKeys = generateCertificateKeyPair();
  const ca = { commonName: 'shoal test CA', keys: caKeys };
  const caPem = issue(ca.commonName, caKeys, ca, { isCa: true });
  const leafKeys = generateCertificateKeyPair();
  const leafPem = issue(dnsNames[0] ?? 'server', leafKeys, ca, { dnsNames, ips });
  const files = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
  writeFileSync(files.caFile, caPem);
  writeFileSync(files.certFile, leafPem);
  writeFileSync(files.keyFile, privateKeyPem(leafKeys.privateKey), { mode: 0o600 });
  return { ...files, caPem };
}
