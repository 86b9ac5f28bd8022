/**
 * Sections of the reference server's configuration (apache/iggy core/server/config.toml) that
 * tune what Shoal does not have. So that the reference's stock file boots unchanged, they are
 * accepted, read only to be judged, with ONE warning per section that names it and says why it
 * has no effect. The exception is security (secure by default, docs/configuration.md "Reference
 * sections"): a key that asks for a protection Shoal cannot give (TLS on a listener Shoal serves
 * in plaintext or not at all, encryption at rest) refuses boot, naming the key, and so does an
 * unknown key inside a security section (a typo there must not pass as "off").
 */
import type { Diagnostics } from './errors.js';

export interface ReferenceOnlySection {
  /** TOML table path. */
  readonly path: string;
  /** Why it has no effect in Shoal (completes "accepted and ignored: ..."). */
  readonly why: string;
  /** The reference's keys in this table (the env-variable names are built from them). */
  readonly keys: readonly string[];
  /**
   * Keys that switch a protection on, with the protection's name: `true` refuses boot.
   * A section with any is a security section (unknown keys in it refuse too).
   */
  readonly protections?: Readonly<Record<string, string>>;
}

export const REFERENCE_ONLY_SECTIONS: readonly ReferenceOnlySection[] = [
  {
    path: 'quic', why: 'Shoal serves clients over TCP only',
    keys: ['enabled', 'address', 'max_concurrent_bidi_streams', 'datagram_send_buffer_size', 'initial_mtu', 'send_window',
      'receive_window', 'stream_receive_window', 'keep_alive_interval', 'max_idle_timeout',
      'certificate.self_signed', 'certificate.cert_file', 'certificate.key_file'],
  },
  {
    path: 'websocket', why: 'Shoal serves clients over TCP only',
    keys: ['enabled', 'address', 'read_buffer_size', 'write_buffer_size', 'max_write_buffer_size', 'max_message_size',
      'max_frame_size', 'accept_unmasked_frames'],
  },
  {
    path: 'websocket.tls', why: 'Shoal serves no WebSocket listener',
    keys: ['enabled', 'self_signed', 'cert_file', 'key_file'],
    protections: { enabled: 'TLS on the WebSocket listener (Shoal serves no WebSocket at all)' },
  },
  { path: 'http.web_ui', why: "Shoal's HTTP listener serves no web UI of the reference's", keys: [] },
  {
    path: 'http.cors', why: "Shoal's HTTP listener serves no API, so it sends no CORS headers",
    keys: ['enabled', 'allowed_methods', 'allowed_origins', 'allowed_headers', 'exposed_headers', 'allow_credentials', 'allow_private_network'],
  },
  {
    path: 'http.jwt', why: "Shoal's HTTP listener serves no API to sign tokens for; its /metrics takes a personal access token as the bearer instead (docs/operations.md)",
    keys: ['algorithm', 'issuer', 'audience', 'valid_issuers', 'valid_audiences', 'access_token_expiry', 'clock_skew',
      'not_before', 'encoding_secret', 'decoding_secret', 'use_base64_secret'],
  },
  {
    path: 'http.tls', why: "Shoal's HTTP listener is plaintext",
    keys: ['enabled', 'cert_file', 'key_file'],
    protections: { enabled: 'TLS on the HTTP listener' },
  },
  {
    path: 'telemetry', why: 'Shoal has no OpenTelemetry export',
    keys: ['enabled', 'service_name', 'logs.transport', 'logs.endpoint', 'traces.transport', 'traces.endpoint'],
  },
  { path: 'data_maintenance.messages', why: 'Shoal has no background message cleaner (topic options bound retention)', keys: ['cleaner_enabled', 'interval'] },
  {
    path: 'system.encryption', why: 'Shoal has no encryption at rest',
    keys: ['enabled', 'key'],
    protections: { enabled: 'encryption at rest' },
  },
  { path: 'system.memory_pool', why: 'Node manages Shoal memory', keys: ['enabled', 'size', 'bucket_capacity'] },
];

/** `http.web_ui` is a key of `[http]` in the reference, handled like a one-key section. */
const SINGLE_KEYS = new Set(REFERENCE_ONLY_SECTIONS.filter((s) => s.keys.length === 0).map((s) => s.path));

/** The deepest reference-only section `path` is, or lies inside. */
export function findReferenceOnly(path: string): ReferenceOnlySection | undefined {
  let best: ReferenceOnlySection | undefined;
  for (const section of REFERENCE_ONLY_SECTIONS) {
    if (path === section.path || path.startsWith(`${section.path}.`)) {
      if (best === undefined || section.path.length > best.path.length) best = section;
    }
  }
  return best;
}

/** A reference-only section the reference spells under `top` (`quic`, `system`, ...): for env names. */
export function referenceOnlyEnvKey(envKey: string): { readonly section: ReferenceOnlySection; readonly key: string | null } | undefined {
  let best: { section: ReferenceOnlySection; key: string | null } | undefined;
  for (const section of REFERENCE_ONLY_SECTIONS) {
    const prefix = toEnv(section.path);
    if (SINGLE_KEYS.has(section.path)) {
      if (envKey === prefix) best = { section, key: null };
      continue;
    }
    if (!envKey.startsWith(`${prefix}_`)) continue;
    const rest = envKey.slice(prefix.length + 1);
    const key = section.keys.find((k) => toEnv(k) === rest) ?? null;
    if (best === undefined || section.path.length > best.section.path.length) best = { section, key };
  }
  return best;
}

/** Per load: one warning per section seen, errors for protections asked for. */
export class ReferenceOnlyJudge {
  readonly #warned = new Set<string>();
  readonly #diagnostics: Diagnostics;

  constructor(diagnostics: Diagnostics) {
    this.#diagnostics = diagnostics;
  }

  /**
   * One value found in a reference-only section. `key` is its name inside the section (null: a
   * subtable or a one-key section); `origin` is `file` or the env variable.
   */
  judge(section: ReferenceOnlySection, key: string | null, value: unknown, where: string, origin: string): void {
    const protection = key === null ? undefined : section.protections?.[key];
    if (protection !== undefined && asksFor(value)) {
      this.#diagnostics.error('rule', where,
        `asks for ${protection}, which Shoal does not have: refusing to boot rather than run without it (remove it or set it to false)`, origin);
      return;
    }
    if (section.protections !== undefined && key !== null && !section.keys.includes(key)) {
      this.#diagnostics.error('unknown_key', where, `unknown key in the security section [${section.path}]`, origin);
      return;
    }
    if (this.#warned.has(section.path)) return;
    this.#warned.add(section.path);
    const what = SINGLE_KEYS.has(section.path) ? section.path : `[${section.path}]`;
    this.#diagnostics.warn(`${what}: a reference-server setting accepted and ignored: ${section.why}`);
  }
}

function asksFor(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.trim().toLowerCase() === 'true';
  return false;
}

function toEnv(path: string): string {
  return path.replace(/\./g, '_').toUpperCase();
}
