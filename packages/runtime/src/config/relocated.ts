/**
 * Keys the reference server has moved or removed. The relocated ones refuse boot (as in the
 * reference: the storage knobs became create-only topic options, so a topic created while the
 * old key was silently ignored could never be given the setting afterwards). Removed sections
 * and reference sections that Shoal does not implement are unknown keys like any other, but get
 * a hint that says why.
 */

export interface RelocatedKey {
  /** TOML path; a whole section when `section` is set. */
  readonly path: string;
  readonly section: boolean;
  /** The replacement, or null when the feature is gone. */
  readonly replacement: string | null;
}

export const RELOCATED_KEYS: readonly RelocatedKey[] = [
  { path: 'system.topic.max_size', section: false, replacement: 'the `max_topic_size` topic option' },
  { path: 'system.topic.message_expiry', section: false, replacement: 'the `message_expiry` topic option' },
  { path: 'system.partition.enforce_fsync', section: false, replacement: 'the `enforce_fsync` topic option' },
  {
    path: 'system.partition.messages_required_to_save',
    section: false,
    replacement: 'the `messages_required_to_save` topic option',
  },
  {
    path: 'system.partition.size_of_messages_required_to_save',
    section: false,
    replacement: 'the `size_of_messages_required_to_save` topic option',
  },
  { path: 'system.segment.size', section: false, replacement: 'the `segment_size` topic option' },
  { path: 'system.segment.preallocate', section: false, replacement: 'the `preallocate_segments` topic option' },
  { path: 'system.message_deduplication', section: true, replacement: null },
  { path: 'extra', section: true, replacement: null },
];

/** The refusal text for a relocated key found at `path` (which may be inside a relocated section). */
export function relocatedMessage(key: RelocatedKey): string {
  if (key.replacement !== null) {
    return `relocated: this is now ${key.replacement}, set per topic at creation (see Topic options); remove this key`;
  }
  const what = key.path === 'extra' ? 'removed (admission caps are compile-time constants)' : 'removed with the feature';
  return `${what}, no replacement; remove this ${key.section ? 'section' : 'key'}`;
}

/** The relocated key that `path` is, or lies inside. */
export function findRelocated(path: string): RelocatedKey | undefined {
  return RELOCATED_KEYS.find((key) => path === key.path || (key.section && path.startsWith(`${key.path}.`)));
}

/** Env-var forms (`SYSTEM_SEGMENT_SIZE`, `EXTRA_...`) of the relocated keys. */
export function findRelocatedEnv(envKey: string): RelocatedKey | undefined {
  return RELOCATED_KEYS.find((key) => {
    const name = key.path.replace(/\./g, '_').toUpperCase();
    return envKey === name || (key.section && envKey.startsWith(`${name}_`));
  });
}

/** Why a reference-server section is not a Shoal key. */
const UNSUPPORTED_SECTIONS: readonly (readonly [string, string])[] = [
  ['quic', 'Shoal serves clients over TCP only'],
  ['websocket', 'Shoal serves clients over TCP only'],
  ['tcp.tls', 'Shoal has no client-plane TLS yet'],
  ['tcp.socket', 'removed from the reference server'],
  ['http.jwt', "Shoal's HTTP listener serves metrics only"],
  ['http.cors', "Shoal's HTTP listener serves metrics only"],
  ['http.tls', "Shoal's HTTP listener serves metrics only"],
  ['http.web_ui', "Shoal's HTTP listener serves metrics only"],
  ['telemetry', 'Shoal has no OpenTelemetry export'],
  ['data_maintenance', 'Shoal has no segment cleaner yet'],
  ['system.encryption', 'Shoal has no encryption at rest'],
  ['system.memory_pool', 'Node manages Shoal memory'],
  ['system.state', 'removed from the reference server'],
  ['system.backup', 'removed from the reference server'],
  ['system.compression', 'removed from the reference server'],
  ['message_saver', 'removed from the reference server'],
];

export function unsupportedHint(path: string): string | undefined {
  for (const [section, why] of UNSUPPORTED_SECTIONS) {
    if (path === section || path.startsWith(`${section}.`)) {
      return `a reference-server key that Shoal does not implement (${why}); remove it`;
    }
  }
  return undefined;
}
