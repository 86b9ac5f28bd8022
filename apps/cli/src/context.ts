import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  type Credentials, type NodeAddress, ShoalClient, ShoalInvalidArgumentError, type TlsOptions, formatAddress, parseAddress,
  parseConnectionString,
} from '@shoal/client';
import { parseDurationMs } from '@shoal/stdx';

/**
 * Where the CLI connects and who it is, from (first match wins):
 *
 *   address      --url, --tcp-server-address, $SHOAL_URL, the stored session's address, 127.0.0.1:8090
 *   credentials  --token / -t, --username + --password (-u / -p), the --url credentials,
 *                $IGGY_USERNAME + $IGGY_PASSWORD, the stored session token
 *
 * TLS: `--tcp-tls-enabled` (or `tls=true` in the URL), `--tcp-tls-domain` / `tls_domain`,
 * `--tcp-tls-ca-file` / `tls_ca_file`; the certificate and the host name are always checked.
 *
 * Nothing secret is written to disk unless asked: `shoal login --store-token` creates a personal
 * access token and keeps it (mode 0600) in $SHOAL_HOME/session.json (default ~/.shoal); `shoal
 * logout` deletes it on the server and on disk.
 */
export interface GlobalOptions {
  readonly url?: string;
  readonly tcpServerAddress?: string;
  readonly tcpTlsEnabled?: boolean;
  readonly tcpTlsDomain?: string;
  readonly tcpTlsCaFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly token?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly timeout?: string;
}

export interface StoredSession {
  readonly address: string;
  readonly tokenName: string;
  readonly token: string;
  /** µs since the epoch, 0 = never. */
  readonly expiresAt: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

export function shoalHome(env: Env): string {
  return env['SHOAL_HOME'] ?? join(homedir(), '.shoal');
}

export function sessionPath(env: Env): string {
  return join(shoalHome(env), 'session.json');
}

export function readStoredSession(env: Env): StoredSession | null {
  const path = sessionPath(env);
  if (!existsSync(path)) return null;
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredSession>;
    if (typeof value.address !== 'string' || typeof value.token !== 'string' || typeof value.tokenName !== 'string') return null;
    return { address: value.address, token: value.token, tokenName: value.tokenName, expiresAt: String(value.expiresAt ?? '0') };
  } catch {
    return null;
  }
}

export function writeStoredSession(env: Env, session: StoredSession): string {
  const dir = shoalHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = sessionPath(env);
  writeFileSync(path, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

export function removeStoredSession(env: Env): boolean {
  const path = sessionPath(env);
  if (!existsSync(path)) return false;
  rmSync(path);
  return true;
}

export interface Target {
  readonly address: NodeAddress;
  readonly credentials: Credentials | null;
  readonly source: 'flags' | 'url' | 'env' | 'stored' | 'none';
  /** null: plaintext. */
  readonly tls?: TlsOptions | null;
}

export function resolveTarget(options: GlobalOptions, env: Env): Target {
  const target = resolveAddressAndCredentials(options, env);
  return { ...target, tls: resolveTls(options, env) };
}

/** The flags win over the URL's `tls`, `tls_domain`, `tls_ca_file`. */
function resolveTls(options: GlobalOptions, env: Env): TlsOptions | null {
  const url = options.url ?? env['SHOAL_URL'];
  const fromUrl = url === undefined || url === '' ? {} : parseConnectionString(url).options;
  const enabled = options.tcpTlsEnabled === true || fromUrl.tls === true;
  const domain = options.tcpTlsDomain ?? fromUrl.tlsDomain;
  const caFile = options.tcpTlsCaFile ?? fromUrl.tlsCaFile;
  if (!enabled) {
    if (options.tcpTlsDomain !== undefined || options.tcpTlsCaFile !== undefined) throw new ShoalInvalidArgumentError('--tcp-tls-domain and --tcp-tls-ca-file need --tcp-tls-enabled');
    return null;
  }
  let ca: Buffer | undefined;
  if (caFile !== undefined) {
    try {
      ca = readFileSync(caFile);
    } catch (error) {
      throw new ShoalInvalidArgumentError(`cannot read the TLS CA file ${caFile}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { ...(domain === undefined ? {} : { servername: domain }), ...(ca === undefined ? {} : { ca }) };
}

function resolveAddressAndCredentials(options: GlobalOptions, env: Env): Target {
  const url = options.url ?? env['SHOAL_URL'];
  const parsedUrl = url === undefined || url === '' ? null : parseConnectionString(url);
  const stored = readStoredSession(env);
  const address = parsedUrl?.address
    ?? (options.tcpServerAddress === undefined ? null : parseAddress(options.tcpServerAddress))
    ?? (stored === null ? null : parseAddress(stored.address))
    ?? { host: '127.0.0.1', port: 8090 };
  if (options.token !== undefined && options.username !== undefined) throw new ShoalInvalidArgumentError('--token and --username are mutually exclusive');
  if (options.token !== undefined) return { address, credentials: { kind: 'token', token: options.token }, source: 'flags' };
  if (options.username !== undefined) {
    const password = options.password ?? env['IGGY_PASSWORD'];
    if (password === undefined) throw new ShoalInvalidArgumentError(`no password for '${options.username}': pass --password or set IGGY_PASSWORD`);
    return { address, credentials: { kind: 'password', username: options.username, password }, source: 'flags' };
  }
  if (parsedUrl?.credentials !== null && parsedUrl?.credentials !== undefined) return { address, credentials: parsedUrl.credentials, source: 'url' };
  const envUser = env['IGGY_USERNAME'];
  const envPassword = env['IGGY_PASSWORD'];
  if (envUser !== undefined && envPassword !== undefined) return { address, credentials: { kind: 'password', username: envUser, password: envPassword }, source: 'env' };
  if (stored !== null && formatAddress(parseAddress(stored.address)) === formatAddress(address)) {
    return { address, credentials: { kind: 'token', token: stored.token }, source: 'stored' };
  }
  return { address, credentials: null, source: 'none' };
}

export function requestTimeoutMs(options: GlobalOptions): number {
  if (options.timeout === undefined) return 10_000;
  const parsed = parseDurationMs(options.timeout);
  if (!parsed.ok) throw new ShoalInvalidArgumentError(`--timeout '${options.timeout}' is not a duration: ${parsed.reason}`);
  return parsed.value;
}

export function openClient(target: Target, options: GlobalOptions, withCredentials = true): ShoalClient {
  return new ShoalClient({
    address: target.address,
    ...(target.tls === null || target.tls === undefined ? {} : { tls: target.tls }),
    ...(withCredentials && target.credentials !== null ? { credentials: target.credentials } : {}),
    requestTimeoutMs: requestTimeoutMs(options),
    connectTimeoutMs: 5000,
    reconnect: { maxRetries: 1, intervalMs: 200 },
    cluster: { retry: { budgetMs: requestTimeoutMs(options), attemptsMax: 3 } },
  });
}
