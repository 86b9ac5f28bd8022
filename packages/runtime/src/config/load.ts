/**
 * loadConfig: built-in defaults < file < environment < flags, then every rule, all errors at
 * once. Pure: the caller reads the file (and `.env`, if it wants one) and passes the text; the
 * only ambient read is the core count, and only when the caller does not inject it.
 */
import { availableParallelism as osAvailableParallelism } from 'node:os';
import { checkBounds } from './bounds.js';
import { checkRootEnvPair, readEnv } from './env.js';
import { Diagnostics, type ConfigError } from './errors.js';
import { readFile } from './file.js';
import { defaultLayer, emptyLayer, mergeLayers } from './layers.js';
import { resolveConfig, type ConfigFlags } from './resolve.js';
import type { ShoalConfig } from './types.js';
import { validateConfig } from './validate.js';

export interface LoadConfigInput {
  /** The TOML text of the config file; absent: built-in defaults (plus env and flags). */
  readonly file?: string;
  /** Usually `process.env`. Only `IGGY_*` and `SHOAL_*` names are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly flags?: ConfigFlags;
  /** Cores for the default shard count; default `os.availableParallelism()`. Inject it in tests. */
  readonly availableParallelism?: number;
}

export type LoadConfigResult =
  | { readonly ok: true; readonly config: ShoalConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly errors: readonly ConfigError[]; readonly warnings: readonly string[] };

export function loadConfig(input: LoadConfigInput): LoadConfigResult {
  const diagnostics = new Diagnostics();
  const flags = input.flags ?? {};
  const fileLayer = input.file === undefined ? emptyLayer() : readFile(input.file, diagnostics);
  const envLayer = readEnv(input.env, diagnostics);
  checkRootEnvPair(input.env, flags.withDefaultRootCredentials === true, diagnostics);
  if (diagnostics.errors.some((error) => error.kind === 'syntax')) {
    // Without the file's values every later rule would report noise.
    return { ok: false, errors: diagnostics.errors, warnings: diagnostics.warnings };
  }
  const merged = mergeLayers([defaultLayer(), fileLayer, envLayer]);
  checkBounds(merged, diagnostics);
  const cores = input.availableParallelism ?? osAvailableParallelism();
  const config = resolveConfig(merged, flags, cores, diagnostics);
  validateConfig(config, flags, diagnostics);
  if (diagnostics.errors.length > 0) return { ok: false, errors: diagnostics.errors, warnings: diagnostics.warnings };
  return { ok: true, config: deepFreeze(config), warnings: diagnostics.warnings };
}

/**
 * The config file path the caller should read: `--config`, else `SHOAL_CONFIG_PATH`, else
 * `IGGY_CONFIG_PATH` (the reference's variable); null means "no file, built-in defaults".
 */
export function configPathFrom(env: Readonly<Record<string, string | undefined>>, flags: ConfigFlags = {}): string | null {
  const candidates = [flags.configPath, env['SHOAL_CONFIG_PATH'], env['IGGY_CONFIG_PATH']];
  return candidates.find((path): path is string => path !== undefined && path !== '') ?? null;
}

/** One line per error, for printing before exiting. */
export function formatConfigErrors(errors: readonly ConfigError[]): string {
  return errors.map((error) => `config: ${error.message}`).join('\n');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
