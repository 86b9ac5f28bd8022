/**
 * Flags + file + environment → a validated configuration, or the lines to print before exiting.
 * Synchronous and free of the libuv pool, so the launcher can use it before sizing the pool.
 */
import { readFileSync } from 'node:fs';
import { configPathFrom, formatConfigErrors, loadConfig, type ConfigFlags, type ShoalConfig } from '@shoal/runtime/config';

export type Loaded =
  | { readonly ok: true; readonly config: ShoalConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly reason: 'config_invalid' | 'config_unreadable'; readonly message: string };

export function loadNodeConfig(flags: ConfigFlags, env: Readonly<Record<string, string | undefined>>): Loaded {
  const path = configPathFrom(env, flags);
  let file: string | undefined;
  if (path !== null) {
    try {
      file = readFileSync(path, 'utf8');
    } catch (error) {
      return { ok: false, reason: 'config_unreadable', message: `config: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  const result = loadConfig({ env, flags: path === null ? flags : { ...flags, configPath: path }, ...(file === undefined ? {} : { file }) });
  if (!result.ok) return { ok: false, reason: 'config_invalid', message: formatConfigErrors(result.errors) };
  return { ok: true, config: result.config, warnings: result.warnings };
}

/**
 * The libuv thread pool for this node: one thread per shard plus the metadata worker and the
 * main thread, at least libuv's default 4. Shoal's storage writes with synchronous calls on the
 * owning thread and hashes passwords in piscina threads, so the pool is only a safety margin for
 * any async fs a thread does; it is sized anyway because it is process-wide and fixed at first use.
 */
export function threadPoolSizeFor(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, parse: (argv: readonly string[]) => { kind: string; flags?: ConfigFlags }): number {
  const parsed = parse(argv);
  const loaded = parsed.kind === 'run' && parsed.flags !== undefined ? loadNodeConfig(parsed.flags, env) : null;
  const shards = loaded !== null && loaded.ok ? loaded.config.system.sharding.shardCount : 1;
  return Math.max(4, shards + 2);
}
