/**
 * The one X.509 shape the replica plane needs: an ECDSA P-256 certificate (self-signed, or issued
 * by a test CA), built as DER by hand and signed with `node:crypto`.
 *
 * Why not a library: Node 20 already generates the key and makes the signature natively; what it
 * lacks is ~100 lines of DER for one fixed certificate shape. `@peculiar/x509` (and `selfsigned`,
 * which wraps it) needs a process-wide `Reflect` metadata polyfill through tsyringe, and
 * `node-forge` signs RSA only, in pure JS. See docs/replica-plane.md "TLS".
 *
 *   Certificate  ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
 *   TBSCertificate ::= SEQUENCE {
 *     [0] EXPLICIT version v3, serialNumber, signature AlgorithmIdentifier, issuer Name,
 *     validity, subject Name, subjectPublicKeyInfo, [3] EXPLICIT extensions }
 *
 * `node:crypto`'s `X509Certificate` parses the result (tests check every field through it) and
 * OpenSSL verifies the chains in the TLS tests.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

const TAG_BOOLEAN = 0x01;
const TAG_INTEGER = 0x02;
const TAG_BIT_STRING = 0x03;
const TAG_OCTET_STRING = 0x04;
const TAG_OID = 0x06;
const TAG_UTF8_STRING = 0x0c;
const TAG_UTC_TIME = 0x17;
const TAG_GENERALIZED_TIME = 0x18;
const TAG_SEQUENCE = 0x30;
const TAG_SET = 0x31;
const TAG_EXPLICIT_0 = 0xa0;
const TAG_EXPLICIT_3 = 0xa3;
/** GeneralName choices inside subjectAltName (context-specific, primitive). */
const TAG_SAN_DNS = 0x82;
const TAG_SAN_IP = 0x87;
/** AuthorityKeyIdentifier.keyIdentifier ([0] IMPLICIT OCTET STRING). */
const TAG_AKI_KEY_ID = 0x80;

const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const OID_COMMON_NAME = '2.5.4.3';
const OID_SUBJECT_KEY_ID = '2.5.29.14';
const OID_KEY_USAGE = '2.5.29.15';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [0x80 | bytes.length, ...bytes];
}

function tlv(tag: number, content: Uint8Array): Uint8Array {
  const head = [tag, ...lengthBytes(content.length)];
  const out = new Uint8Array(head.length + content.length);
  out.set(head, 0);
  out.set(content, head.length);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const sequence = (...parts: Uint8Array[]): Uint8Array => tlv(TAG_SEQUENCE, concat(parts));
const set = (...parts: Uint8Array[]): Uint8Array => tlv(TAG_SET, concat(parts));
const octetString = (bytes: Uint8Array): Uint8Array => tlv(TAG_OCTET_STRING, bytes);
const utf8String = (text: string): Uint8Array => tlv(TAG_UTF8_STRING, new TextEncoder().encode(text));
const booleanTrue = (): Uint8Array => tlv(TAG_BOOLEAN, Uint8Array.of(0xff));

/** A BIT STRING whose content is whole bytes (`unusedBits` of the last byte are padding). */
function bitString(bytes: Uint8Array, unusedBits = 0): Uint8Array {
  return tlv(TAG_BIT_STRING, concat([Uint8Array.of(unusedBits), bytes]));
}

/** A non-negative INTEGER from big-endian magnitude bytes. */
function positiveInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  const needsPad = ((trimmed[0] ?? 0) & 0x80) !== 0;
  return tlv(TAG_INTEGER, needsPad ? concat([Uint8Array.of(0), trimmed]) : trimmed);
}

function oid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((arc) => Number.parseInt(arc, 10));
  const first = arcs[0] ?? 0;
  const second = arcs[1] ?? 0;
  const bytes: number[] = [first * 40 + second];
  for (const arc of arcs.slice(2)) {
    const groups: number[] = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) groups.unshift(0x80 | (rest & 0x7f));
    bytes.push(...groups);
  }
  return tlv(TAG_OID, Uint8Array.from(bytes));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. Seconds precision, Z. */
function time(date: Date): Uint8Array {
  const pad = (n: number): string => String(n).padStart(2, '0');
  const year = date.getUTCFullYear();
  const rest = `${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`;
  if (year < 2050) return tlv(TAG_UTC_TIME, new TextEncoder().encode(`${pad(year % 100)}${rest}`));
  return tlv(TAG_GENERALIZED_TIME, new TextEncoder().encode(`${String(year).padStart(4, '0')}${rest}`));
}

function name(commonName: string): Uint8Array {
  return sequence(set(sequence(oid(OID_COMMON_NAME), utf8String(commonName))));
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical ? sequence(oid(id), booleanTrue(), octetString(value)) : sequence(oid(id), octetString(value));
}

/** IPv4 / IPv6 literal → network-order bytes. */
function ipBytes(ip: string): Uint8Array {
  if (isIP(ip) === 4) return Uint8Array.from(ip.split('.').map((part) => Number.parseInt(part, 10)));
  if (isIP(ip) !== 6) throw new RangeError(`not an IP literal: ${ip}`);
  const [head = '', tail = ''] = ip.includes('::') ? ip.split('::') : [ip, ''];
  const words = (text: string): number[] => (text === '' ? [] : text.split(':').map((word) => Number.parseInt(word, 16)));
  const left = words(head);
  const right = words(tail);
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = new Uint8Array(16);
  all.forEach((word, i) => {
    out[2 * i] = word >> 8;
    out[2 * i + 1] = word & 0xff;
  });
  return out;
}

/** A key identifier: the first 20 bytes of SHA-256 over the DER public key (RFC 5280 §4.2.1.2 allows any unique value). */
export function keyIdentifier(publicKey: KeyObject): Uint8Array {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return new Uint8Array(createHash('sha256').update(spki).digest().subarray(0, 20));
}

export interface CertificateKeyPair {
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
}

/** A fresh ECDSA P-256 key pair (native). */
export function generateCertificateKeyPair(): CertificateKeyPair {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

export interface CertificateSubject {
  readonly commonName: string;
  /** IP SANs (literal IPv4 / IPv6). */
  readonly ips?: readonly string[];
  readonly dnsNames?: readonly string[];
  /** A CA certificate (basicConstraints cA, keyCertSign) instead of a TLS server leaf. */
  readonly isCa?: boolean;
}

export interface CertificateIssuer {
  readonly commonName: string;
  readonly keys: CertificateKeyPair;
}

export interface CertificateRequest {
  readonly subject: CertificateSubject;
  readonly subjectPublicKey: KeyObject;
  /** Who signs: the subject itself (self-signed) or a CA. */
  readonly issuer: CertificateIssuer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Positive serial number bytes (big-endian); 16 random bytes is the usual choice. */
  readonly serial: Uint8Array;
}

function extensionsOf(request: CertificateRequest): Uint8Array {
  const { subject } = request;
  const list: Uint8Array[] = [];
  list.push(extension(OID_BASIC_CONSTRAINTS, true, subject.isCa === true ? sequence(booleanTrue()) : sequence()));
  // keyUsage: a CA signs certificates (keyCertSign bit 5, cRLSign bit 6); a leaf signs the
  // TLS 1.3 CertificateVerify (digitalSignature, bit 0).
  list.push(extension(OID_KEY_USAGE, true, subject.isCa === true ? bitString(Uint8Array.of(0x06), 1) : bitString(Uint8Array.of(0x80), 7)));
  if (subject.isCa !== true) list.push(extension(OID_EXT_KEY_USAGE, false, sequence(oid(OID_SERVER_AUTH), oid(OID_CLIENT_AUTH))));
  const altNames = [
    ...(subject.dnsNames ?? []).map((dns) => tlv(TAG_SAN_DNS, new TextEncoder().encode(dns))),
    ...(subject.ips ?? []).map((ip) => tlv(TAG_SAN_IP, ipBytes(ip))),
  ];
  if (altNames.length > 0) list.push(extension(OID_SUBJECT_ALT_NAME, false, sequence(...altNames)));
  list.push(extension(OID_SUBJECT_KEY_ID, false, octetString(keyIdentifier(request.subjectPublicKey))));
  list.push(extension(OID_AUTHORITY_KEY_ID, false, sequence(tlv(TAG_AKI_KEY_ID, keyIdentifier(request.issuer.keys.publicKey)))));
  return tlv(TAG_EXPLICIT_3, sequence(...list));
}

/** Builds and signs the certificate; returns it as DER. */
export function issueCertificateDer(request: CertificateRequest): Uint8Array {
  if (request.serial.length === 0 || request.serial.length > 20) throw new RangeError('serial must be 1..20 bytes');
  if (!(request.notBefore.getTime() < request.notAfter.getTime())) throw new RangeError('notBefore must precede notAfter');
  const algorithm = sequence(oid(OID_ECDSA_WITH_SHA256));
  const spki = new Uint8Array(request.subjectPublicKey.export({ type: 'spki', format: 'der' }));
  const tbs = sequence(
    tlv(TAG_EXPLICIT_0, positiveInteger(Uint8Array.of(2))),
    positiveInteger(request.serial),
    algorithm,
    name(request.issuer.commonName),
    sequence(time(request.notBefore), time(request.notAfter)),
    name(request.subject.commonName),
    spki,
    extensionsOf(request),
  );
  const signature = new Uint8Array(sign('sha256', tbs, request.issuer.keys.privateKey));
  return sequence(tbs, algorithm, bitString(signature));
}

/** PEM armour for a DER certificate. */
export function certificatePem(der: Uint8Array): string {
  const base64 = Buffer.from(der).toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** PKCS#8 PEM of a private key. */
export function privateKeyPem(privateKey: KeyObject): string {
  return String(privateKey.export({ type: 'pkcs8', format: 'pem' }));
}
