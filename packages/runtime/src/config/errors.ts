/**
 * A reason the configuration refuses boot. `message` is the full line to print: it starts with
 * the key path and states the rule, e.g.
 *
 *   cluster.heartbeat_timeout: must be >= 2s and >= 4 × cluster.commit_broadcast_interval (got 1s)
 */

export type ConfigErrorKind =
  /** The file is not valid TOML. */
  | 'syntax'
  /** A key (or env override) that Shoal does not know. */
  | 'unknown_key'
  /** A key the reference server moved to a topic option or removed; boot is refused on purpose. */
  | 'relocated_key'
  /** The value has the wrong type or does not parse (duration, size, address, ...). */
  | 'type'
  /** The value is outside its bounds. */
  | 'range'
  /** A required key is missing. */
  | 'required'
  /** A rule across keys, or a rule about one key that is not a plain bound. */
  | 'rule';

export interface ConfigError {
  readonly kind: ConfigErrorKind;
  /** TOML key path (`cluster.nodes[1].ports.tcp`), or `--replica-id` for a flag. */
  readonly path: string;
  /** Where the offending value came from: `file`, `default`, an env var name, or a flag. */
  readonly origin: string | null;
  readonly message: string;
}

export function configError(kind: ConfigErrorKind, path: string, rule: string, origin: string | null = null): ConfigError {
  return { kind, path, origin, message: `${path}: ${rule}` };
}

/** Collects errors and warnings; everything is checked, then boot is refused once, with all of them. */
export class Diagnostics {
  readonly errors: ConfigError[] = [];
  readonly warnings: string[] = [];

  error(kind: ConfigErrorKind, path: string, rule: string, origin: string | null = null): void {
    this.errors.push(configError(kind, path, rule, origin));
  }

  warn(message: string): void {
    this.warnings.push(message);
  }
}
