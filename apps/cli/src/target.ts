import { readFileSync } from 'node:fs';
import {
  type Credentials, type NodeAddress, ShoalClient, ShoalInvalidArgumentError, type TlsOptions, formatAddress, parseAddress,
  parseConnectionString,
} from '@shoal/client';
import { parseDurationMs } from '@shoal/stdx';
import { type ContextConfig, activeContext } from './contexts.js';
import { type Env, readHomeFile, removeHomeFile, writePrivateFile } from './home.js';
import { type PromptIo, promptPassword } from './prompt.js';

/**
 * Where the CLI connects and who it is. Each setting is taken from the first place that has it:
 *
 *   1. flags: --url, --tcp-server-address, --token / -t, --username / -u, --password / -p
 *   2. the environment: $SHOAL_URL, $IGGY_USERNAME, $IGGY_PASSWORD
 *   3. the active context (`shoal context use NAME`)
 *   4. the stored login session (`shoal login --store-token`): its token, for its own address
 *   5. the default address 127.0.0.1:8090, no credentials
 *
 * An address comes from --url, --tcp-server-address, $SHOAL_URL, the context (its `url`, then its
 * `tcp_server_address`), the stored session. Credentials: --token, --username (+ --password,
 * $IGGY_PASSWORD, or the context's password when it names the same user), the --url
 * credentials, $IGGY_USERNAME (+ $IGGY_PASSWORD), the context (token, username + password, url
 * credentials), the stored session token. Whenever a user name is settled and no password is,
 * the CLI asks for it (prompt.ts).
 *
 * TLS: `--tcp-tls-enabled` (or `tls=true` in the URL, or the context's `tcp_tls_enabled` / URL),
 * `--tcp-tls-domain` / `tls_domain`, `--tcp-tls-ca-file` / `tls_ca_file`, in the same order; the
 * certificate and the host name are always checked.
 *
 * Nothing secret is written unless asked: `shoal login --store-token` keeps a personal access token
 * in $SHOAL_HOME/session.json (mode 0600); `shoal context create` keeps what it is given in
 * contexts.toml (mode 0600).
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
  readonly output?: string;
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

export const SESSION_FILE = 'session.json';

export function readStoredSession(env: Env): StoredSession | null {
  const text = readHomeFile(env, SESSION_FILE);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<StoredSession>;
    if (typeof value.address !== 'string' || typeof value.token !== 'string' || typeof value.tokenName !== 'string') return null;
    return { address: value.address, token: value.token, tokenName: value.tokenName, expiresAt: String(value.expiresAt ?? '0') };
  } catch {
    return null;
  }
}

export function writeStoredSession(env: Env, session: StoredSession): string {
  return writePrivateFile(env, SESSION_FILE, `${JSON.stringify(session, null, 2)}\n`);
}

export function removeStoredSession(env: Env): boolean {
  return removeHomeFile(env, SESSION_FILE);
}

export interface Target {
  readonly address: NodeAddress;
  readonly credentials: Credentials | null;
  readonly source: 'flags' | 'url' | 'env' | 'context' | 'stored' | 'prompt' | 'none';
  /** The active context's name. */
  readonly context: string;
  /** The request timeout (flag, then the context's, then 10 s). */
  readonly timeoutMs: number;
  /** null: plaintext. */
  readonly tls: TlsOptions | null;
}

const DEFAULT_ADDRESS: NodeAddress = { host: '127.0.0.1', port: 8090 };

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** A user name with its password, if one is known. */
interface Login {
  readonly username: string;
  readonly password: string | undefined;
  readonly source: Target['source'];
}

function loginFrom(options: GlobalOptions, env: Env, context: ContextConfig, urlCredentials: Credentials | null, contextUrlCredentials: Credentials | null): Credentials | Login | null {
  const envPassword = nonEmpty(env['IGGY_PASSWORD']);
  if (options.token !== undefined && options.username !== undefined) throw new ShoalInvalidArgumentError('--token and --username are mutually exclusive');
  if (options.token !== undefined) return { kind: 'token', token: options.token };
  if (options.username !== undefined) {
    const contextPassword = context.username === options.username ? context.password : undefined;
    return { username: options.username, password: options.password ?? envPassword ?? contextPassword, source: 'flags' };
  }
  if (urlCredentials !== null) return urlCredentials;
  const envUser = nonEmpty(env['IGGY_USERNAME']);
  if (envUser !== undefined) return { username: envUser, password: envPassword, source: 'env' };
  if (context.token !== undefined) return { kind: 'token', token: context.token };
  if (context.username !== undefined) return { username: context.username, password: context.password ?? envPassword, source: 'context' };
  return contextUrlCredentials;
}

/** Resolves the address and the credentials, asking for a missing password. */
export async function resolveTarget(options: GlobalOptions, env: Env, prompt: PromptIo): Promise<Target> {
  const { name: contextName, config: context } = activeContext(env);
  const urlText = nonEmpty(options.url) ?? nonEmpty(env['SHOAL_URL']);
  const url = urlText === undefined ? null : parseConnectionString(urlText);
  const contextUrl = context.url === undefined ? null : parseConnectionString(context.url);
  const stored = readStoredSession(env);
  const address = url?.address
    ?? (options.tcpServerAddress === undefined ? null : parseAddress(options.tcpServerAddress))
    ?? contextUrl?.address
    ?? (context.tcpServerAddress === undefined ? null : parseAddress(context.tcpServerAddress))
    ?? (stored === null ? null : parseAddress(stored.address))
    ?? DEFAULT_ADDRESS;
  const timeoutMs = requestTimeoutMs(options.timeout ?? context.timeout);
  const tls = resolveTls(options, url?.options ?? null, context, contextUrl?.options ?? null);
  const base = { address, context: contextName, timeoutMs, tls };

  const login = loginFrom(options, env, context, url?.credentials ?? null, contextUrl?.credentials ?? null);
  if (login !== null && 'kind' in login) {
    const source = options.token !== undefined ? 'flags' : login === url?.credentials ? 'url' : 'context';
    return { ...base, credentials: login, source };
  }
  if (login !== null) {
    if (login.password !== undefined) return { ...base, credentials: { kind: 'password', username: login.username, password: login.password }, source: login.source };
    const password = await promptPassword(prompt, login.username);
    return { ...base, credentials: { kind: 'password', username: login.username, password }, source: 'prompt' };
  }
  if (stored !== null && formatAddress(parseAddress(stored.address)) === formatAddress(address)) {
    return { ...base, credentials: { kind: 'token', token: stored.token }, source: 'stored' };
  }
  return { ...base, credentials: null, source: 'none' };
}

type UrlOptions = ReturnType<typeof parseConnectionString>['options'];

/** Flags, then the URL (flag or $SHOAL_URL), then the context's keys, then the context's URL. */
function resolveTls(options: GlobalOptions, url: UrlOptions | null, context: ContextConfig, contextUrl: UrlOptions | null): TlsOptions | null {
  const enabled = options.tcpTlsEnabled === true || url?.tls === true || context.tcpTlsEnabled === true || contextUrl?.tls === true;
  if (!enabled) {
    if (options.tcpTlsDomain !== undefined || options.tcpTlsCaFile !== undefined) throw new ShoalInvalidArgumentError('--tcp-tls-domain and --tcp-tls-ca-file need --tcp-tls-enabled');
    return null;
  }
  const domain = options.tcpTlsDomain ?? url?.tlsDomain ?? context.tcpTlsDomain ?? contextUrl?.tlsDomain;
  const caFile = options.tcpTlsCaFile ?? url?.tlsCaFile ?? context.tcpTlsCaFile ?? contextUrl?.tlsCaFile;
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

export function requestTimeoutMs(text: string | undefined): number {
  if (text === undefined) return 10_000;
  const parsed = parseDurationMs(text);
  if (!parsed.ok) throw new ShoalInvalidArgumentError(`timeout '${text}' is not a duration: ${parsed.reason}`);
  return parsed.value;
}

export function openClient(target: Target, withCredentials = true): ShoalClient {
  return new ShoalClient({
    address: target.address,
    ...(target.tls === null ? {} : { tls: target.tls }),
    ...(withCredentials && target.credentials !== null ? { credentials: target.credentials } : {}),
    requestTimeoutMs: target.timeoutMs,
    connectTimeoutMs: 5000,
    reconnect: { maxRetries: 1, intervalMs: 200 },
    cluster: { retry: { budgetMs: target.timeoutMs, attemptsMax: 3 } },
  });
}
