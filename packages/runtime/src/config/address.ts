/**
 * Addresses in the config: listener `host:port` strings, roster IP literals, advertised
 * hostnames and client CIDRs. Pure string work (`node:net`'s `isIP` is a pure function).
 */
import { isIP } from 'node:net';

export type HostPortParse =
  | { readonly ok: true; readonly host: string; readonly port: number }
  | { readonly ok: false; readonly reason: string };

/**
 * `host:port`, `[v6]:port`. The host is an IP literal or a hostname; the port 0..=65535 (0 asks
 * the OS for an ephemeral port, which tests use).
 */
export function parseHostPort(text: string): HostPortParse {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  const plain = /^([^:[\]]+):(\d+)$/.exec(text);
  const match = bracketed ?? plain;
  if (match === null) return { ok: false, reason: 'expected host:port (IPv6 as [addr]:port)' };
  const host = match[1] ?? '';
  const port = Number(match[2]);
  if (bracketed !== null && isIP(host) !== 6) return { ok: false, reason: `"${host}" is not an IPv6 address` };
  if (bracketed === null && isIP(host) === 0 && !isHostname(host)) {
    return { ok: false, reason: `"${host}" is neither an IP address nor a hostname` };
  }
  if (!Number.isInteger(port) || port > 65535) return { ok: false, reason: `port ${match[2] ?? ''} is out of range` };
  return { ok: true, host, port };
}

export function isIpLiteral(text: string): boolean {
  return isIP(text) !== 0;
}

/** RFC 1123: labels of letters, digits and `-` (not at either end), 1..63 each, 253 in all, no trailing dot. */
export function isHostname(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  return text.split('.').every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label));
}

/** An advertised address: a literal IP or a hostname, never a port. */
export function isAdvertisableHost(text: string): boolean {
  return isIpLiteral(text) || isHostname(text);
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

export interface Cidr {
  readonly family: 4 | 6;
  /** The network address truncated to the prefix. */
  readonly network: bigint;
  readonly prefix: number;
}

export type CidrParse = { readonly ok: true; readonly cidr: Cidr } | { readonly ok: false; readonly reason: string };

/**
 * `10.0.0.0/16`, `fd00::/8`. IPv4-mapped IPv6 CIDRs (`::ffff:10.0.0.0/104`) with a prefix of
 * 96 or more are read as their IPv4 form, as the reference matches them.
 */
export function parseCidr(text: string): CidrParse {
  const slash = text.indexOf('/');
  if (slash < 0) return { ok: false, reason: 'expected address/prefix' };
  const host = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const family = isIP(host);
  if (family === 0) return { ok: false, reason: `"${host}" is not an IP address` };
  if (!/^\d{1,3}$/.test(prefixText)) return { ok: false, reason: `prefix "${prefixText}" is not a number` };
  const prefix = Number(prefixText);
  const bits = family === 4 ? 32 : 128;
  if (prefix > bits) return { ok: false, reason: `prefix /${prefix} is longer than ${bits} bits` };
  const value = family === 4 ? ipv4ToBigInt(host) : ipv6ToBigInt(host);
  if (family === 6 && prefix >= 96 && value >> 32n === 0xffffn) {
    return { ok: true, cidr: truncate(4, value & 0xffff_ffffn, prefix - 96) };
  }
  return { ok: true, cidr: truncate(family === 4 ? 4 : 6, value, prefix) };
}

/**
 * Whether `ip` (an IP literal) lies in `cidr`. A v4-mapped IPv6 client (`::ffff:10.0.0.7`, what a
 * dual-stack listener reports) matches IPv4 networks, as the reference canonicalizes it.
 */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  let value = family === 4 ? ipv4ToBigInt(ip) : ipv6ToBigInt(ip);
  let ipFamily: 4 | 6 = family === 4 ? 4 : 6;
  if (ipFamily === 6 && value >> 32n === 0xffffn) {
    value &= 0xffff_ffffn;
    ipFamily = 4;
  }
  if (ipFamily !== cidr.family) return false;
  return truncate(ipFamily, value, cidr.prefix).network === cidr.network;
}

/** Two CIDRs overlap when they are of one family and one contains the other. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const bits = a.family === 4 ? 32 : 128;
  const shorter = Math.min(a.prefix, b.prefix);
  const shift = BigInt(bits - shorter);
  return a.network >> shift === b.network >> shift;
}

export function cidrsEqual(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.prefix === b.prefix && a.network === b.network;
}

function truncate(family: 4 | 6, value: bigint, prefix: number): Cidr {
  const bits = family === 4 ? 32 : 128;
  const hostBits = BigInt(bits - prefix);
  return { family, network: (value >> hostBits) << hostBits, prefix };
}

function ipv4ToBigInt(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function ipv6ToBigInt(text: string): bigint {
  let source = text;
  const zone = source.indexOf('%');
  if (zone >= 0) source = source.slice(0, zone);
  // A trailing dotted quad (`::ffff:10.0.0.1`) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(source);
  if (dotted !== null) {
    const v4 = ipv4ToBigInt(dotted[1] ?? '0.0.0.0');
    source = `${source.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = source.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(parseInt(part, 16)), 0n);
}

/** A canonical key for an IP literal, so `::1` and `0:0:0:0:0:0:0:1` compare equal. */
export function ipKey(text: string): string {
  const family = isIP(text);
  if (family === 4) return `4:${ipv4ToBigInt(text)}`;
  if (family === 6) return `6:${ipv6ToBigInt(text)}`;
  return `host:${text.toLowerCase()}`;
}
