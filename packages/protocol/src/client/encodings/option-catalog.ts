import { HeaderKind } from './header-kind.js';
import type { OptionEntry } from './options-block.js';

/**
 * The option catalogs (server/topic-options.mdx; encodings.mdx "Options block"). Only topics have
 * keys today; the stream and user catalogs are empty and any key sent for them is rejected.
 * Unknown keys are rejected at the wire edge (IggyError 4041 UnsupportedOptionKey), never skipped.
 * Value forms are forgiving (byte sizes as numbers or strings like "128 MiB", expiry as µs or
 * humantime): parsing values is the admitting server's job; this table gives keys, the kind a
 * default is encoded under (chosen: the pages do not name kinds), defaults and constraints.
 */
export const OptionsScope = { Topic: 1, Stream: 2, User: 3 } as const;
export type OptionsScope = (typeof OptionsScope)[keyof typeof OptionsScope];

export interface OptionSpec {
  readonly key: string;
  /** Canonical header kind of the stored value. */
  readonly kind: number;
  /** Human-readable default ("unlimited", "1 GiB"). */
  readonly defaultText: string;
  readonly constraints: string;
  readonly description: string;
  /** UpdateTopic may change it (compression_algorithm, message_expiry, max_topic_size). */
  readonly updatable: boolean;
}

const GIB = 1024 * 1024 * 1024;
const MIB = 1024 * 1024;

/** In the reference catalog's order (server responses.rs `topic_option_descriptors`): DescribeOptions lists it so. */
export const TOPIC_OPTION_CATALOG: readonly OptionSpec[] = Object.freeze([
  { key: 'compression_algorithm', kind: HeaderKind.String, defaultText: 'none', constraints: 'none or gzip', description: 'Placeholder: stored and reported, no compression applied yet.', updatable: true },
  { key: 'message_expiry', kind: HeaderKind.Uint64, defaultText: 'none', constraints: '', description: 'Delete sealed segments older than this.', updatable: true },
  { key: 'max_topic_size', kind: HeaderKind.Uint64, defaultText: 'unlimited', constraints: '', description: 'Delete the oldest sealed segments once the topic grows past this size.', updatable: true },
  { key: 'segment_size', kind: HeaderKind.Uint64, defaultText: '1 GiB', constraints: '512-byte multiple, at least 1 MiB, at most 1 GiB', description: 'Soft size limit per segment: a segment may close one whole batch past it.', updatable: false },
  { key: 'enforce_fsync', kind: HeaderKind.Bool, defaultText: 'false', constraints: '', description: "fsync every write to this topic's partitions.", updatable: false },
  { key: 'messages_required_to_save', kind: HeaderKind.Uint32, defaultText: '1024', constraints: 'non-zero, at most 16777216', description: 'Flush the journal once it holds this many messages.', updatable: false },
  { key: 'size_of_messages_required_to_save', kind: HeaderKind.Uint64, defaultText: '1 MiB', constraints: 'at most 1 GiB', description: 'Flush the journal once it holds this many bytes.', updatable: false },
  { key: 'preallocate_segments', kind: HeaderKind.Bool, defaultText: 'false', constraints: 'segment_size x partitions at most 64 GiB per create', description: "Reserve each segment's bytes up front where the filesystem supports it.", updatable: false },
].map((spec) => Object.freeze(spec)));

/** Numeric limits from topic-options.mdx. */
export const TOPIC_OPTION_LIMITS = Object.freeze({
  segmentSizeDefault: GIB,
  segmentSizeMin: MIB,
  segmentSizeMax: GIB,
  segmentSizeMultiple: 512,
  messagesRequiredToSaveDefault: 1024,
  messagesRequiredToSaveMax: 16_777_216,
  sizeOfMessagesRequiredToSaveDefault: MIB,
  sizeOfMessagesRequiredToSaveMax: GIB,
  preallocateBytesPerCreateMax: 64 * GIB,
  compressionAlgorithms: Object.freeze(['none', 'gzip'] as const),
});

export function optionCatalog(scope: OptionsScope): readonly OptionSpec[] {
  return scope === OptionsScope.Topic ? TOPIC_OPTION_CATALOG : [];
}

export function isOptionsScope(value: number): value is OptionsScope {
  return value === OptionsScope.Topic || value === OptionsScope.Stream || value === OptionsScope.User;
}

/**
 * Key admission for a create or an update: every key must be in the scope's catalog, and an update
 * may only carry updatable keys. Returns the offending reason and key, or null.
 */
export function checkOptionKeys(
  scope: OptionsScope, entries: readonly OptionEntry[], mode: 'create' | 'update',
): { readonly reason: 'unsupported_option_key' | 'option_not_updatable'; readonly key: string } | null {
  const catalog = optionCatalog(scope);
  for (const entry of entries) {
    const spec = catalog.find((s) => s.key === entry.key);
    if (spec === undefined) return { reason: 'unsupported_option_key', key: entry.key };
    if (mode === 'update' && !spec.updatable) return { reason: 'option_not_updatable', key: entry.key };
  }
  return null;
}
