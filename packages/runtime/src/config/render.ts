/**
 * The resolved config as TOML with the reference key names, secrets masked: what the startup log
 * prints and what a node may write to `{system.path}/runtime/current_config.toml`. Durations and
 * sizes are printed in the parsers' own forms, so the text loads back to the same values (except
 * masked secrets).
 */
import { stringify } from 'smol-toml';
import { formatDuration, formatSize } from '@shoal/stdx';
import { KEYS, TABLE_ARRAYS, type KeySpec } from './schema.js';
import type { ShoalConfig } from './types.js';

export const REDACTED = '[redacted]';

/** TOML text of the effective configuration, with a comment header describing this node. */
export function renderConfig(config: ShoalConfig): string {
  const { node, system } = config;
  const listeners = Object.entries(node.listeners)
    .map(([name, endpoint]) => `${name} ${endpoint === null ? 'off' : `${endpoint.host}:${endpoint.port}`}`)
    .join(', ');
  const header = [
    `# node "${node.name}": replica ${node.replicaId} of ${node.replicaCount}; ${system.sharding.shardCount} shard(s)`,
    `# listeners: ${listeners}`,
  ];
  return `${header.join('\n')}\n${stringify(buildTable(config, '', ''))}\n`;
}

/** A copy of the config with every secret replaced by REDACTED (empty secrets stay empty). */
export function redactConfig(config: ShoalConfig): ShoalConfig {
  const copy = structuredClone(config) as { -readonly [K in keyof ShoalConfig]: ShoalConfig[K] };
  const mask = (secret: string): string => (secret === '' ? '' : REDACTED);
  copy.cluster = {
    ...copy.cluster,
    auth: {
      ...copy.cluster.auth,
      sharedSecret: mask(copy.cluster.auth.sharedSecret),
      previousSharedSecret: mask(copy.cluster.auth.previousSharedSecret),
    },
  };
  copy.root = { ...copy.root, password: copy.root.password === null ? null : mask(copy.root.password) };
  return copy;
}

/**
 * The typed field behind a concrete key path: camelCase segments, `Ms` after durations, `Bytes`
 * after sizes whose key does not already say bytes. `cluster.nodes[1].ports.tcp_replica` →
 * `config.cluster.nodes[1].ports.tcpReplica`.
 */
export function fieldValue(config: ShoalConfig, concretePath: string, spec: KeySpec): unknown {
  const parts = concretePath.split('.');
  let cursor: unknown = config;
  parts.forEach((part, index) => {
    const indexed = /^(\w+)\[(\d+)\]$/.exec(part);
    const last = index === parts.length - 1;
    const name = last ? fieldName(part, spec) : camelCase(indexed?.[1] ?? part);
    cursor = isRecord(cursor) ? cursor[name] : undefined;
    if (indexed !== null) cursor = Array.isArray(cursor) ? cursor[Number(indexed[2])] : undefined;
  });
  return cursor;
}

function fieldName(key: string, spec: KeySpec): string {
  if (spec.field !== undefined) return spec.field;
  const base = camelCase(key);
  if (spec.kind === 'duration') return `${base}Ms`;
  if (spec.kind === 'size' && !key.includes('bytes')) return `${base}Bytes`;
  return base;
}

function camelCase(key: string): string {
  return key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

type TomlOut = { [key: string]: string | number | boolean | TomlOut | TomlOut[] };

function buildTable(config: ShoalConfig, schemaPrefix: string, concretePrefix: string): TomlOut {
  const table: TomlOut = {};
  for (const spec of KEYS) {
    if (!spec.path.startsWith(schemaPrefix)) continue;
    const relative = spec.path.slice(schemaPrefix.length);
    if (relative.includes('[]')) continue;
    const value = fieldValue(config, `${concretePrefix}${relative}`, spec);
    if (value === null || value === undefined) continue;
    setNested(table, relative.split('.'), display(spec, value));
  }
  for (const array of TABLE_ARRAYS) {
    if (!array.path.startsWith(schemaPrefix)) continue;
    const relative = array.path.slice(schemaPrefix.length);
    if (relative.includes('[]')) continue;
    const items = fieldValue(config, `${concretePrefix}${relative}`, { path: array.path, kind: 'string', doc: '' });
    const count = Array.isArray(items) ? items.length : 0;
    const rendered: TomlOut[] = [];
    for (let index = 0; index < count; index += 1) {
      rendered.push(buildTable(config, `${array.path}[].`, `${concretePrefix}${relative}[${index}].`));
    }
    if (rendered.length > 0) setNested(table, relative.split('.'), rendered);
  }
  return table;
}

function display(spec: KeySpec, value: unknown): string | number | boolean {
  if (spec.secret === true) return value === '' ? '' : REDACTED;
  if (spec.kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (spec.kind === 'size' && typeof value === 'number') return formatSize(value);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}

function setNested(table: TomlOut, parts: readonly string[], value: string | number | boolean | TomlOut[]): void {
  let cursor = table;
  parts.slice(0, -1).forEach((part) => {
    const next = cursor[part];
    if (typeof next === 'object' && !Array.isArray(next)) {
      cursor = next;
    } else {
      const created: TomlOut = {};
      cursor[part] = created;
      cursor = created;
    }
  });
  cursor[parts[parts.length - 1] ?? ''] = value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
