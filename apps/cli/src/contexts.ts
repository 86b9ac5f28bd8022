import { ShoalInvalidArgumentError } from '@shoal/client';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { type Env, homeFile, readHomeFile, writePrivateFile } from './home.js';

/**
 * Named connection contexts, as the reference CLI keeps them: `$SHOAL_HOME/contexts.toml` (one
 * table per context; mode 0600 since a context may hold a password or a token) and the active
 * context's name in `$SHOAL_HOME/.active_context`. The `default` context always exists (empty:
 * the built-in defaults) and cannot be created, redefined or deleted; deleting the active context
 * switches back to it. Names are letters, digits, `-` and `_`.
 *
 *   [production]
 *   tcp_server_address = "10.0.0.5:8090"
 *   username = "admin"
 *
 * Keys use the reference's names (`tcp_server_address`, `username`, `password`, `token`,
 * `tcp_tls_enabled`, `tcp_tls_domain`, `tcp_tls_ca_file`) plus Shoal's `url` (a connection
 * string) and `timeout`; keys this CLI does not know are kept as they
 * are when the file is rewritten. Flags and environment variables override the active context.
 * TOML is read and written by `smol-toml` (small, dependency-free, TOML 1.0 compliant; the
 * server's configuration loader uses it too).
 */
export const DEFAULT_CONTEXT = 'default';
export const CONTEXTS_FILE = 'contexts.toml';
export const ACTIVE_CONTEXT_FILE = '.active_context';

export interface ContextConfig {
  readonly url?: string;
  readonly tcpServerAddress?: string;
  readonly username?: string;
  readonly password?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly tcpTlsEnabled?: boolean;
  readonly tcpTlsDomain?: string;
  readonly tcpTlsCaFile?: string;
}

/** TOML key of each field (the reference's names). */
const KEYS: readonly (readonly [Exclude<keyof ContextConfig, 'tcpTlsEnabled'>, string])[] = [
  ['url', 'url'],
  ['tcpServerAddress', 'tcp_server_address'],
  ['username', 'username'],
  ['password', 'password'],
  ['token', 'token'],
  ['timeout', 'timeout'],
  ['tcpTlsDomain', 'tcp_tls_domain'],
  ['tcpTlsCaFile', 'tcp_tls_ca_file'],
];
const TLS_ENABLED_KEY = 'tcp_tls_enabled';

type Table = Record<string, unknown>;

const NAME = /^[A-Za-z0-9_-]+$/;

export function validateContextName(name: string): void {
  if (!NAME.test(name)) throw new ShoalInvalidArgumentError(`context name '${name}' may only contain letters, digits, '-' and '_'`);
}

function readTables(env: Env): Record<string, Table> {
  const text = readHomeFile(env, CONTEXTS_FILE);
  if (text === null) return {};
  let parsed: Table;
  try {
    parsed = parseToml(text) as Table;
  } catch (error) {
    throw new ShoalInvalidArgumentError(`${homeFile(env, CONTEXTS_FILE)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const tables: Record<string, Table> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) tables[name] = value as Table;
  }
  return tables;
}

function toConfig(table: Table): ContextConfig {
  const config: Record<string, string | boolean> = {};
  for (const [field, key] of KEYS) {
    const value = table[key];
    if (typeof value === 'string' && value !== '') config[field] = value;
  }
  if (table[TLS_ENABLED_KEY] === true) config['tcpTlsEnabled'] = true;
  return config;
}

function writeTables(env: Env, tables: Record<string, Table>): void {
  const rest = Object.fromEntries(Object.entries(tables).filter(([name]) => name !== DEFAULT_CONTEXT));
  writePrivateFile(env, CONTEXTS_FILE, `${stringifyToml(rest)}\n`);
}

export interface ContextEntry {
  readonly name: string;
  readonly active: boolean;
  readonly config: ContextConfig;
}

export function activeContextName(env: Env): string {
  const name = readHomeFile(env, ACTIVE_CONTEXT_FILE)?.trim() ?? '';
  if (name === '' || name === DEFAULT_CONTEXT) return DEFAULT_CONTEXT;
  return name in readTables(env) ? name : DEFAULT_CONTEXT;
}

export function listContexts(env: Env): ContextEntry[] {
  const tables = readTables(env);
  const active = activeContextName(env);
  const names = [DEFAULT_CONTEXT, ...Object.keys(tables).filter((n) => n !== DEFAULT_CONTEXT).sort()];
  return names.map((name) => ({ name, active: name === active, config: name === DEFAULT_CONTEXT ? {} : toConfig(tables[name] ?? {}) }));
}

export function getContext(env: Env, name: string): ContextConfig {
  if (name === DEFAULT_CONTEXT) return {};
  const table = readTables(env)[name];
  if (table === undefined) throw new ShoalInvalidArgumentError(`context '${name}' does not exist (shoal context list)`);
  return toConfig(table);
}

/** The active context's settings (empty for `default`). */
export function activeContext(env: Env): { readonly name: string; readonly config: ContextConfig } {
  const name = activeContextName(env);
  return { name, config: getContext(env, name) };
}

export function createContext(env: Env, name: string, config: ContextConfig): string {
  validateContextName(name);
  if (name === DEFAULT_CONTEXT) throw new ShoalInvalidArgumentError(`'${DEFAULT_CONTEXT}' is reserved: it always exists and holds the built-in defaults`);
  const tables = readTables(env);
  if (name in tables) throw new ShoalInvalidArgumentError(`context '${name}' already exists (delete it first)`);
  const table: Table = {};
  for (const [field, key] of KEYS) {
    const value = config[field];
    if (value !== undefined && value !== '') table[key] = value;
  }
  if (config.tcpTlsEnabled === true) table[TLS_ENABLED_KEY] = true;
  tables[name] = table;
  writeTables(env, tables);
  return homeFile(env, CONTEXTS_FILE);
}

export function useContext(env: Env, name: string): void {
  if (name !== DEFAULT_CONTEXT && !(name in readTables(env))) throw new ShoalInvalidArgumentError(`context '${name}' does not exist (shoal context list)`);
  writePrivateFile(env, ACTIVE_CONTEXT_FILE, `${name}\n`);
}

/** Deletes a context; returns whether it was the active one (now `default`). */
export function deleteContext(env: Env, name: string): boolean {
  if (name === DEFAULT_CONTEXT) throw new ShoalInvalidArgumentError(`the '${DEFAULT_CONTEXT}' context cannot be deleted`);
  const tables = readTables(env);
  if (!(name in tables)) throw new ShoalInvalidArgumentError(`context '${name}' does not exist`);
  const wasActive = activeContextName(env) === name;
  delete tables[name];
  writeTables(env, tables);
  if (wasActive) useContext(env, DEFAULT_CONTEXT);
  return wasActive;
}
