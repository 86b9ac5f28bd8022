/**
 * Keys the reference server has moved or removed. The relocated ones refuse boot (as in the
 * reference: the storage knobs became create-only topic options, so a topic created while the
 * old key was silently ignored could never be given the setting afterwards). Sections the
 * reference removed are unknown keys like any other, but get a hint that says why (the live
 * reference sections Shoal does not implement are accepted or refused by reference-only.ts).
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

/** Why a section the reference server removed is not a Shoal key (its live sections: reference-only.ts). */
const UNSUPPORTED_SECTIONS: readonly (readonly [string, string])[] = [
  ['tcp.socket', 'removed from the reference server'],
  ['system.state', 'removed from the reference server'],
  ['system.backup', 'removed from the reference server'],
  ['system.compression', 'removed from the reference server'],
  ['message_saver', 'removed from the reference server'],
];

export function unsupportedHint(path: string): string | undefined {
  for (const [section, why] of UNSUPPORTED_SECTIONS) {
    if (path === section || path.startsWith(`${section}.`)) {
      return `a key the reference server no longer has (${why}); remove it`;
    }
  }
  return undefined;
}
