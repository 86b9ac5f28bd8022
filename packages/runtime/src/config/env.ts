/**
 * The environment layer. Every key can be overridden by `IGGY_<PATH>`, the TOML path uppercased
 * with dots (and table nesting) turned into `_`, and array items by index:
 *
 *   IGGY_TCP_ADDRESS=0.0.0.0:8090            [tcp] address
 *   IGGY_SYSTEM_SHARDING_CPU_ALLOCATION=4    [system.sharding] cpu_allocation
 *   IGGY_CLUSTER_NODES_0_PORTS_TCP_REPLICA=9090
 *
 * `SHOAL_<PATH>` is an alias; when both name one key, `SHOAL_` wins.
 *
 * Unknown names: an `IGGY_` variable that names no key is only a warning (the reference ignores
 * them, and Iggy's SDK and CLI read `IGGY_` variables of their own); a `SHOAL_` variable that
 * starts like a config section but names no key refuses boot, like an unknown key in the file.
 */
import type { Diagnostics } from './errors.js';
import { emptyLayer, type Layer } from './layers.js';
import { findRelocatedEnv, relocatedMessage } from './relocated.js';
import { KEYS, SECTIONS, TABLE_ARRAYS, KEY_BY_PATH, TABLE_ARRAY_BY_PATH } from './schema.js';
import { fromEnv } from './values.js';

export const ENV_PREFIXES = ['IGGY_', 'SHOAL_'] as const;

/** Variables with the prefix that are not config keys and are read elsewhere. */
const OUTSIDE_SCHEMA: ReadonlySet<string> = new Set(['CONFIG_PATH', 'ENV_PATH']);

/** First words of config-looking names, for the unknown-variable check. */
const SECTION_WORDS: readonly string[] = [
  ...new Set(SECTIONS.filter((section) => !section.path.includes('.')).map((section) => section.path.toUpperCase())),
  'QUIC', 'WEBSOCKET', 'TELEMETRY', 'DATA_MAINTENANCE', 'EXTRA', 'MESSAGE_SAVER',
];

interface EnvScope {
  /** Env name (relative to the scope) → key name (relative to the scope's schema path). */
  readonly leaves: ReadonlyMap<string, string>;
  /** Env name of an array (relative) → its relative key name and item scope. */
  readonly arrays: ReadonlyMap<string, { readonly key: string; readonly itemsMax: number; readonly scope: EnvScope }>;
}

const ROOT_SCOPE: EnvScope = buildScope('');

export function readEnv(env: Readonly<Record<string, string | undefined>>, diagnostics: Diagnostics): Layer {
  const layer = emptyLayer();
  const names = Object.keys(env).sort();
  // IGGY_ first, SHOAL_ second: the later write wins.
  for (const prefix of ENV_PREFIXES) {
    for (const name of names) {
      const raw = env[name];
      if (raw === undefined || !name.startsWith(prefix)) continue;
      readVariable(name, name.slice(prefix.length), raw, prefix, layer, diagnostics);
    }
  }
  return layer;
}

/** The concrete key path an env name (without prefix) sets, or undefined. */
export function envKeyToPath(envKey: string): string | undefined {
  return resolveInScope(envKey, ROOT_SCOPE, '');
}

function readVariable(name: string, envKey: string, raw: string, prefix: string, layer: Layer, diagnostics: Diagnostics): void {
  if (OUTSIDE_SCHEMA.has(envKey)) return;
  const relocated = findRelocatedEnv(envKey);
  if (relocated !== undefined) {
    diagnostics.error('relocated_key', relocated.path, `${relocatedMessage(relocated)} (set by ${name})`, name);
    return;
  }
  const resolved = resolveIndexed(envKey, name, diagnostics);
  if (resolved === null) return;
  if (resolved === undefined) {
    if (!SECTION_WORDS.some((word) => envKey.startsWith(`${word}_`))) return;
    if (prefix === 'SHOAL_') diagnostics.error('unknown_key', name, 'names no configuration key', name);
    else diagnostics.warn(`${name}: names no configuration key; ignored`);
    return;
  }
  const spec = KEY_BY_PATH.get(resolved.replace(/\[\d+\]/g, '[]'));
  if (spec === undefined) return;
  const converted = fromEnv(spec, raw);
  if (converted.ok) layer.entries.set(resolved, { value: converted.value, origin: name });
  else diagnostics.error('type', resolved, `${converted.reason} (from ${name})`, name);
}

/** Like envKeyToPath, but refuses indexes beyond an array's cap. null: refused (already reported). */
function resolveIndexed(envKey: string, name: string, diagnostics: Diagnostics): string | undefined | null {
  const path = envKeyToPath(envKey);
  if (path === undefined) return undefined;
  for (const match of path.matchAll(/\[(\d+)\]/g)) {
    const arrayPath = path.slice(0, match.index).replace(/\[\d+\]/g, '[]');
    const itemsMax = TABLE_ARRAY_BY_PATH.get(arrayPath)?.itemsMax ?? 0;
    if (Number(match[1]) >= itemsMax) {
      diagnostics.error('range', path.slice(0, (match.index ?? 0) + match[0].length), `index out of range: at most ${itemsMax} entries (from ${name})`, name);
      return null;
    }
  }
  return path;
}

function resolveInScope(envKey: string, scope: EnvScope, concretePrefix: string): string | undefined {
  const leaf = scope.leaves.get(envKey);
  if (leaf !== undefined) return `${concretePrefix}${leaf}`;
  for (const [arrayName, array] of scope.arrays) {
    const match = new RegExp(`^${arrayName}_(\\d+)_(.+)$`).exec(envKey);
    if (match === null) continue;
    const index = Number(match[1]);
    const rest = match[2] ?? '';
    const found = resolveInScope(rest, array.scope, `${concretePrefix}${array.key}[${index}].`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The scope of keys under `schemaPrefix` (`''` or `cluster.nodes[].`) that are not inside a nested array. */
function buildScope(schemaPrefix: string): EnvScope {
  const leaves = new Map<string, string>();
  for (const key of KEYS) {
    if (!key.path.startsWith(schemaPrefix)) continue;
    const relative = key.path.slice(schemaPrefix.length);
    if (relative.includes('[]')) continue;
    const envName = toEnvName(relative);
    if (leaves.has(envName)) throw new Error(`config schema: env name ${envName} is ambiguous`);
    leaves.set(envName, relative);
  }
  const arrays = new Map<string, { key: string; itemsMax: number; scope: EnvScope }>();
  for (const array of TABLE_ARRAYS) {
    if (!array.path.startsWith(schemaPrefix)) continue;
    const relative = array.path.slice(schemaPrefix.length);
    if (relative.includes('[]')) continue;
    arrays.set(toEnvName(relative), { key: relative, itemsMax: array.itemsMax, scope: buildScope(`${array.path}[].`) });
  }
  return { leaves, arrays };
}

function toEnvName(relativePath: string): string {
  return relativePath.replace(/\./g, '_').toUpperCase();
}

/**
 * The reference reads IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD "always as a pair": one without
 * the other refuses boot, unless `--with-default-root-credentials` supplies the missing one.
 */
export function checkRootEnvPair(env: Readonly<Record<string, string | undefined>>, withDefault: boolean, diagnostics: Diagnostics): void {
  if (withDefault) return;
  const isSet = (key: string): boolean => ENV_PREFIXES.some((prefix) => env[`${prefix}${key}`] !== undefined);
  const username = isSet('ROOT_USERNAME');
  const password = isSet('ROOT_PASSWORD');
  if (username === password) return;
  const given = username ? 'IGGY_ROOT_USERNAME' : 'IGGY_ROOT_PASSWORD';
  const missing = username ? 'IGGY_ROOT_PASSWORD' : 'IGGY_ROOT_USERNAME';
  diagnostics.error('rule', username ? 'root.password' : 'root.username',
    `${given} is set but ${missing} is not: root credentials come from the environment as a pair (or pass --with-default-root-credentials)`, given);
}
