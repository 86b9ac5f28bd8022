/**
 * `shoal-server --config shoal.toml [--replica-id N] [--fresh]` (the reference server's flags,
 * plus `--config`). Pure: argv in, flags or a usage error out.
 */
import type { ConfigFlags } from '@shoal/runtime/config';

export type ParsedFlags =
  | { readonly kind: 'run'; readonly flags: ConfigFlags }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'error'; readonly message: string };

export const USAGE = `Usage: shoal-server [--config <file.toml>] [--replica-id <N>] [--fresh] [--with-default-root-credentials]

  --config <file>     TOML configuration (default: SHOAL_CONFIG_PATH, IGGY_CONFIG_PATH, or built-in defaults)
  --replica-id <N>    this node's replica_id in [[cluster.nodes]] (required when cluster.enabled)
  --fresh, -f         wipe the data directory (system.path) before boot
  --with-default-root-credentials
                      a newly created root user is iggy / iggy (INSECURE, development only; the
                      environment's IGGY_ROOT_USERNAME / IGGY_ROOT_PASSWORD still win). Without it
                      and without those variables, a single node creating its root user generates a
                      random password and logs it once; a cluster refuses its first boot
  --help, -h          this text
  --version, -V       print the version

Environment: IGGY_<SECTION>_<KEY> / SHOAL_<SECTION>_<KEY> override any key (docs/configuration.md).`;

export function parseFlags(argv: readonly string[]): ParsedFlags {
  let configPath: string | undefined;
  let replicaId: number | undefined;
  let fresh = false;
  let withDefaultRootCredentials = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | null => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) return null;
      i += 1;
      return next;
    };
    switch (name) {
      case '--help':
      case '-h':
        return { kind: 'help' };
      case '--version':
      case '-V':
        return { kind: 'version' };
      case '--fresh':
      case '-f':
        fresh = true;
        break;
      case '--with-default-root-credentials':
        if (inline !== undefined) return { kind: 'error', message: `${name} takes no value` };
        withDefaultRootCredentials = true;
        break;
      case '--config':
      case '-c': {
        const path = value();
        if (path === null || path === '') return { kind: 'error', message: `${name} needs a file path` };
        configPath = path;
        break;
      }
      case '--replica-id': {
        const text = value();
        if (text === null || !/^\d+$/.test(text) || Number(text) > 255) return { kind: 'error', message: `${name} needs an integer 0..255` };
        replicaId = Number(text);
        break;
      }
      default:
        return { kind: 'error', message: `unknown argument ${arg}` };
    }
  }
  return {
    kind: 'run',
    flags: { fresh, ...(withDefaultRootCredentials ? { withDefaultRootCredentials } : {}), ...(configPath === undefined ? {} : { configPath }), ...(replicaId === undefined ? {} : { replicaId }) },
  };
}
