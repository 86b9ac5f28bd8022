import { ErrorCode } from '@shoal/protocol';
import { parseDurationMs } from '@shoal/stdx';
import { type NodeAddress, parseAddress } from './address.js';
import { ShoalInvalidArgumentError } from './errors.js';
import type { Credentials } from './session.js';

/**
 * Connection strings (ecosystem/connection-strings.mdx):
 *
 *   iggy[+tcp]://credentials@host:port[?option=value&option=value]
 *
 * credentials: `username:password` (both non-empty), or a personal access token (no colon),
 * percent-decoded; host and port are required. TCP option keys: tls, tls_domain, tls_ca_file,
 * reconnection_retries (number | unlimited), reconnection_interval, reestablish_after,
 * heartbeat_interval (durations in the one syntax of @shoal/stdx units.ts: 500ms, 5s, 1m, 1h30m),
 * nodelay. Unknown keys are hard
 * errors (InvalidConnectionString, 8000). Other transports (quic, http, ws) are refused: this SDK
 * speaks TCP. `tls=true` turns TLS on with the certificate and host name checked; `tls_domain`
 * is the name to check (default: the host), `tls_ca_file` a PEM file of CAs to trust (read when
 * the client is built); either without `tls=true` is refused rather than silently ignored.
 */
export interface ConnectionStringOptions {
  readonly tls?: boolean;
  readonly tlsDomain?: string;
  readonly tlsCaFile?: string;
  readonly reconnectionRetries?: number;
  readonly reconnectionIntervalMs?: number;
  readonly reestablishAfterMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly noDelay?: boolean;
}

export interface ParsedConnectionString {
  readonly address: NodeAddress;
  readonly credentials: Credentials | null;
  readonly options: ConnectionStringOptions;
}

const SCHEMES = ['iggy://', 'iggy+tcp://'] as const;
const OTHER_TRANSPORTS = ['iggy+quic://', 'iggy+http://', 'iggy+ws://'] as const;

export function isConnectionString(text: string): boolean {
  return text.startsWith('iggy://') || text.startsWith('iggy+');
}

export function parseConnectionString(text: string): ParsedConnectionString {
  const scheme = SCHEMES.find((s) => text.startsWith(s));
  if (scheme === undefined) {
    const other = OTHER_TRANSPORTS.find((s) => text.startsWith(s));
    if (other !== undefined) throw invalid(`transport '${other.slice(5, -3)}' is not supported by this SDK (TCP only)`);
    throw invalid(`expected iggy:// or iggy+tcp://`);
  }
  const rest = text.slice(scheme.length);
  const query = rest.indexOf('?');
  const authority = query < 0 ? rest : rest.slice(0, query);
  const at = authority.lastIndexOf('@');
  const credentials = at < 0 ? null : parseCredentials(authority.slice(0, at));
  const hostPort = at < 0 ? authority : authority.slice(at + 1);
  let address: NodeAddress;
  try {
    address = parseAddress(hostPort);
  } catch {
    throw invalid(`host and port are required (got '${hostPort}')`);
  }
  const options = query < 0 ? {} : parseOptions(rest.slice(query + 1));
  return { address, credentials, options };
}

function parseCredentials(text: string): Credentials {
  const colon = text.indexOf(':');
  if (colon < 0) {
    const token = decode(text);
    if (token === '') throw invalid('empty personal access token');
    return { kind: 'token', token };
  }
  const username = decode(text.slice(0, colon));
  const password = decode(text.slice(colon + 1));
  if (username === '' || password === '') throw invalid('username and password must both be non-empty');
  return { kind: 'password', username, password };
}

function parseOptions(query: string): ConnectionStringOptions {
  const out: { -readonly [K in keyof ConnectionStringOptions]: ConnectionStringOptions[K] } = {};
  if (query === '') return out;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw invalid(`option '${pair}' is not key=value`);
    const key = pair.slice(0, eq);
    const value = decode(pair.slice(eq + 1));
    switch (key) {
      case 'tls':
        out.tls = parseBool(key, value);
        break;
      case 'tls_domain':
        if (value === '') throw invalid(`option '${key}' is empty`);
        out.tlsDomain = value;
        break;
      case 'tls_ca_file':
        if (value === '') throw invalid(`option '${key}' is empty`);
        out.tlsCaFile = value;
        break;
      case 'reconnection_retries':
        out.reconnectionRetries = value === 'unlimited' ? Number.POSITIVE_INFINITY : parseCount(key, value);
        break;
      case 'reconnection_interval':
        out.reconnectionIntervalMs = parseDurationOption(key, value);
        break;
      case 'reestablish_after':
        out.reestablishAfterMs = parseDurationOption(key, value);
        break;
      case 'heartbeat_interval':
        out.heartbeatIntervalMs = parseDurationOption(key, value);
        break;
      case 'nodelay':
        out.noDelay = parseBool(key, value);
        break;
      default:
        throw invalid(`unknown option '${key}'`);
    }
  }
  if (out.tls !== true && (out.tlsDomain !== undefined || out.tlsCaFile !== undefined)) {
    throw invalid('tls_domain and tls_ca_file need tls=true');
  }
  return out;
}

function parseDurationOption(key: string, value: string): number {
  const parsed = parseDurationMs(value);
  if (!parsed.ok) throw invalid(`option '${key}': '${value}' is not a duration (e.g. 500ms, 5s, 1m30s): ${parsed.reason}`);
  return parsed.value;
}

function parseBool(key: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalid(`option '${key}' must be true or false`);
}

function parseCount(key: string, value: string): number {
  if (!/^\d+$/.test(value)) throw invalid(`option '${key}' must be a number or 'unlimited'`);
  return Number(value);
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid('bad percent-encoding');
  }
}

function invalid(detail: string): ShoalInvalidArgumentError {
  return new ShoalInvalidArgumentError(`invalid connection string: ${detail}`, ErrorCode.InvalidConnectionString);
}
