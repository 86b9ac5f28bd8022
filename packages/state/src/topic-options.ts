import {
  ErrorCode, HeaderKind, OptionsScope, TOPIC_OPTION_CATALOG, TOPIC_OPTION_LIMITS, decodeHeaderValue, encodeHeaderValue,
  optionCatalog, type OptionDescriptor, type OptionEntry, type OptionSpec,
} from '@shoal/protocol';
import { U64_MAX, assert, parseExpiry as parseExpiryText, parseSizeLimit } from '@shoal/stdx';
import type { CompressionAlgorithm, OptionMap, StoredOption } from './model.js';

/**
 * The topic option catalog at work (server/topic-options.mdx, encodings.mdx "Options block").
 *
 * Admission turns the client's block into two canonical lists: EXPLICIT (the keys the client sent,
 * re-parsed and re-encoded under the catalog kind) and DERIVED (every other key, at its default).
 * Both travel in the CreateTopicWithAssignments body and are stored; GetTopic shows them as the
 * options and derived-options blocks. Updates are patches of the three updatable keys.
 *
 * Value forms accepted (forgiving, as the reference; strings go through the one duration/size
 * parser of @shoal/stdx, units.ts, that the configuration, the SDK and the CLI use too):
 *   byte sizes   unsigned integer kinds (bytes), or a string: "1048576", "128 MiB", "1GB", "1.5 GiB"
 *                (a whole number of bytes), "unlimited"/"none" (max_topic_size only: u64::MAX),
 *                "server_default" (0: resolved to the default)
 *   expiry       unsigned integer kinds or a decimal string (µs), or a humantime string: "7 days",
 *                "1h 30m", "250ms" (truncated to µs); "none"/"never"/"never_expire"/"unlimited"
 *                (u64::MAX), "server_default" (0)
 *   booleans     Bool, or a string "true"/"false" (any case), or an unsigned integer 0/1
 *   compression  a string "none"/"gzip" (any case), or the code 1/2 as an unsigned integer
 *   counts       unsigned integer kinds, or a decimal string
 * Signed integer kinds are accepted when non-negative; floats and raw bytes are refused.
 *
 * Sentinels: 0 for max_topic_size / message_expiry means "server default" and is resolved to the
 * default at admission (the stored value is the resolved one, provenance stays explicit).
 * Codes: unknown key → UnsupportedOptionKey (4041), also for a create-only key in an update;
 * an unparseable or out-of-range value → InvalidOptionValue (4042).
 */
export const TopicOptionKey = {
  MaxTopicSize: 'max_topic_size',
  MessageExpiry: 'message_expiry',
  CompressionAlgorithm: 'compression_algorithm',
  SegmentSize: 'segment_size',
  EnforceFsync: 'enforce_fsync',
  MessagesRequiredToSave: 'messages_required_to_save',
  SizeOfMessagesRequiredToSave: 'size_of_messages_required_to_save',
  PreallocateSegments: 'preallocate_segments',
} as const;

/** The typed projection of a topic's stored options. */
export interface TopicSettings {
  readonly maxTopicSize: bigint;
  readonly messageExpiry: bigint;
  readonly compression: CompressionAlgorithm;
  readonly segmentSize: bigint;
  readonly enforceFsync: boolean;
  readonly messagesRequiredToSave: number;
  readonly sizeOfMessagesRequiredToSave: bigint;
  readonly preallocateSegments: boolean;
}

export const TOPIC_DEFAULTS: TopicSettings = Object.freeze({
  maxTopicSize: U64_MAX,
  messageExpiry: U64_MAX,
  compression: 'none',
  segmentSize: BigInt(TOPIC_OPTION_LIMITS.segmentSizeDefault),
  enforceFsync: false,
  messagesRequiredToSave: TOPIC_OPTION_LIMITS.messagesRequiredToSaveDefault,
  sizeOfMessagesRequiredToSave: BigInt(TOPIC_OPTION_LIMITS.sizeOfMessagesRequiredToSaveDefault),
  preallocateSegments: false,
});

export type OptionsVerdict =
  | { readonly ok: true; readonly explicit: StoredOption[]; readonly derived: StoredOption[] }
  | { readonly ok: false; readonly code: number };

type Parsed = bigint | boolean | string;

function specOf(key: string): OptionSpec | undefined {
  return TOPIC_OPTION_CATALOG.find((s) => s.key === key);
}

/** Stream and user scopes: the catalogs are empty, so any key is refused. */
export function checkEmptyScope(entries: readonly OptionEntry[]): number | null {
  return entries.length === 0 ? null : ErrorCode.UnsupportedOptionKey;
}

/** CreateTopic admission: explicit (canonical) + derived (defaults) entries, or a code. */
export function resolveTopicCreateOptions(entries: readonly OptionEntry[], partitionsCount: number): OptionsVerdict {
  const values = new Map<string, Parsed>();
  for (const entry of entries) {
    const spec = specOf(entry.key);
    if (spec === undefined) return { ok: false, code: ErrorCode.UnsupportedOptionKey };
    const parsed = parseValue(spec.key, entry);
    if (parsed === null) return { ok: false, code: ErrorCode.InvalidOptionValue };
    values.set(spec.key, parsed);
  }
  const settings = settingsFrom(values, TOPIC_DEFAULTS);
  const problem = checkLimits(settings, partitionsCount);
  if (problem !== null) return { ok: false, code: problem };
  const explicit: StoredOption[] = [];
  const derived: StoredOption[] = [];
  for (const spec of TOPIC_OPTION_CATALOG) {
    const stored = encodeSetting(spec, settingValue(settings, spec.key), values.has(spec.key));
    (values.has(spec.key) ? explicit : derived).push(stored);
  }
  return { ok: true, explicit: sortByKey(explicit), derived: sortByKey(derived) };
}

/** UpdateTopic admission and apply: the patch (explicit entries of updatable keys), or a code. */
export function resolveTopicUpdateOptions(entries: readonly OptionEntry[], current: TopicSettings): OptionsVerdict {
  const values = new Map<string, Parsed>();
  for (const entry of entries) {
    const spec = specOf(entry.key);
    if (spec === undefined || !spec.updatable) return { ok: false, code: ErrorCode.UnsupportedOptionKey };
    const parsed = parseValue(spec.key, entry);
    if (parsed === null) return { ok: false, code: ErrorCode.InvalidOptionValue };
    values.set(spec.key, parsed);
  }
  const settings = settingsFrom(values, current);
  if (!maxTopicSizeFits(settings)) return { ok: false, code: ErrorCode.InvalidOptionValue };
  const explicit: StoredOption[] = [];
  for (const spec of TOPIC_OPTION_CATALOG) {
    if (values.has(spec.key)) explicit.push(encodeSetting(spec, settingValue(settings, spec.key), true));
  }
  return { ok: true, explicit: sortByKey(explicit), derived: [] };
}

/**
 * Reads committed canonical entries back (apply side). Lenient on unknown keys (skipped: a build
 * that predates a key must not diverge from peers that committed it) but strict on the kind of a
 * known key, which admission wrote itself.
 */
export function readCommittedOptions(entries: readonly OptionEntry[], explicit: boolean): StoredOption[] | null {
  const out: StoredOption[] = [];
  for (const entry of entries) {
    const spec = specOf(entry.key);
    if (spec === undefined) continue;
    if (entry.valueKind !== spec.kind || parseValue(spec.key, entry) === null) return null;
    out.push({ key: entry.key, kind: entry.valueKind, value: entry.value.slice(), explicit });
  }
  return out;
}

export function topicSettingsOf(options: OptionMap): TopicSettings {
  const values = new Map<string, Parsed>();
  for (const stored of options.values()) {
    const parsed = parseValue(stored.key, { key: stored.key, valueKind: stored.kind, value: stored.value });
    if (parsed !== null) values.set(stored.key, parsed);
  }
  return settingsFrom(values, TOPIC_DEFAULTS);
}

/** DescribeOptions: key, canonical kind, default bytes (canonical encoding) and description. */
export function describeOptions(scope: number): OptionDescriptor[] {
  if (scope !== OptionsScope.Topic) {
    assert(optionCatalog(scope as OptionsScope).length === 0, 'stream and user option catalogs are empty');
    return [];
  }
  return TOPIC_OPTION_CATALOG.map((spec) => ({
    key: spec.key,
    kind: spec.kind,
    defaultValue: encodeSetting(spec, settingValue(TOPIC_DEFAULTS, spec.key), false).value,
    description: spec.description,
  }));
}

function sortByKey(options: StoredOption[]): StoredOption[] {
  return options.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function settingsFrom(values: ReadonlyMap<string, Parsed>, base: TopicSettings): TopicSettings {
  const big = (key: string, fallback: bigint, sentinelDefault: bigint | null): bigint => {
    const v = values.get(key);
    if (typeof v !== 'bigint') return fallback;
    return v === 0n && sentinelDefault !== null ? sentinelDefault : v;
  };
  const bool = (key: string, fallback: boolean): boolean => {
    const v = values.get(key);
    return typeof v === 'boolean' ? v : fallback;
  };
  const compression = values.get(TopicOptionKey.CompressionAlgorithm);
  return {
    maxTopicSize: big(TopicOptionKey.MaxTopicSize, base.maxTopicSize, TOPIC_DEFAULTS.maxTopicSize),
    messageExpiry: big(TopicOptionKey.MessageExpiry, base.messageExpiry, TOPIC_DEFAULTS.messageExpiry),
    compression: compression === 'gzip' || compression === 'none' ? compression : base.compression,
    segmentSize: big(TopicOptionKey.SegmentSize, base.segmentSize, null),
    enforceFsync: bool(TopicOptionKey.EnforceFsync, base.enforceFsync),
    messagesRequiredToSave: Number(big(TopicOptionKey.MessagesRequiredToSave, BigInt(base.messagesRequiredToSave), null)),
    sizeOfMessagesRequiredToSave: big(TopicOptionKey.SizeOfMessagesRequiredToSave, base.sizeOfMessagesRequiredToSave, null),
    preallocateSegments: bool(TopicOptionKey.PreallocateSegments, base.preallocateSegments),
  };
}

function settingValue(s: TopicSettings, key: string): Parsed {
  switch (key) {
    case TopicOptionKey.MaxTopicSize: return s.maxTopicSize;
    case TopicOptionKey.MessageExpiry: return s.messageExpiry;
    case TopicOptionKey.CompressionAlgorithm: return s.compression;
    case TopicOptionKey.SegmentSize: return s.segmentSize;
    case TopicOptionKey.EnforceFsync: return s.enforceFsync;
    case TopicOptionKey.MessagesRequiredToSave: return BigInt(s.messagesRequiredToSave);
    case TopicOptionKey.SizeOfMessagesRequiredToSave: return s.sizeOfMessagesRequiredToSave;
    case TopicOptionKey.PreallocateSegments: return s.preallocateSegments;
    default: assert(false, `unknown topic option ${key}`);
  }
}

function maxTopicSizeFits(s: TopicSettings): boolean {
  return s.maxTopicSize === U64_MAX || s.maxTopicSize >= s.segmentSize;
}

function checkLimits(s: TopicSettings, partitionsCount: number): number | null {
  const L = TOPIC_OPTION_LIMITS;
  const bad = ErrorCode.InvalidOptionValue;
  if (s.segmentSize < BigInt(L.segmentSizeMin) || s.segmentSize > BigInt(L.segmentSizeMax)) return bad;
  if (s.segmentSize % BigInt(L.segmentSizeMultiple) !== 0n) return bad;
  if (s.messagesRequiredToSave < 1 || s.messagesRequiredToSave > L.messagesRequiredToSaveMax) return bad;
  if (s.sizeOfMessagesRequiredToSave > BigInt(L.sizeOfMessagesRequiredToSaveMax)) return bad;
  if (s.preallocateSegments && s.segmentSize * BigInt(partitionsCount) > BigInt(L.preallocateBytesPerCreateMax)) return bad;
  if (!maxTopicSizeFits(s)) return bad;
  return null;
}

function encodeSetting(spec: OptionSpec, value: Parsed, explicit: boolean): StoredOption {
  let bytes: Uint8Array;
  switch (spec.kind) {
    case HeaderKind.Uint64: bytes = encodeHeaderValue({ kind: 'uint64', value: value as bigint }); break;
    case HeaderKind.Uint32: bytes = encodeHeaderValue({ kind: 'uint32', value: Number(value as bigint) }); break;
    case HeaderKind.Bool: bytes = encodeHeaderValue({ kind: 'bool', value: value as boolean }); break;
    case HeaderKind.String: bytes = encodeHeaderValue({ kind: 'string', value: value as string }); break;
    default: assert(false, `catalog kind ${spec.kind}`);
  }
  return { key: spec.key, kind: spec.kind, value: bytes, explicit };
}

// ---- value parsing -------------------------------------------------------------------------

function parseValue(key: string, entry: OptionEntry): Parsed | null {
  switch (key) {
    case TopicOptionKey.MaxTopicSize: return parseByteSize(entry, true);
    case TopicOptionKey.SegmentSize:
    case TopicOptionKey.SizeOfMessagesRequiredToSave: return parseByteSize(entry, false);
    case TopicOptionKey.MessageExpiry: return parseExpiry(entry);
    case TopicOptionKey.CompressionAlgorithm: return parseCompression(entry);
    case TopicOptionKey.EnforceFsync:
    case TopicOptionKey.PreallocateSegments: return parseBool(entry);
    case TopicOptionKey.MessagesRequiredToSave: {
      const n = parseCount(entry);
      return n !== null && n <= 0xffff_ffffn ? n : null;
    }
    default: return null;
  }
}

/** Typed value of an entry: an unsigned integer, a string, a bool, or null (refused kinds). */
function typed(entry: OptionEntry): bigint | string | boolean | null {
  const decoded = decodeHeaderValue(entry.valueKind, entry.value);
  if (!decoded.ok) return null;
  const v = decoded.value;
  switch (v.kind) {
    case 'uint8': case 'uint16': case 'uint32': case 'int8': case 'int16': case 'int32':
      return v.value >= 0 ? BigInt(v.value) : null;
    case 'uint64': case 'int64':
      return v.value >= 0n && v.value <= U64_MAX ? v.value : null;
    case 'string': return v.value;
    case 'bool': return v.value;
    default: return null;
  }
}

function parseCount(entry: OptionEntry): bigint | null {
  const v = typed(entry);
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' && /^\s*\d{1,20}\s*$/.test(v)) {
    const n = BigInt(v.trim());
    return n <= U64_MAX ? n : null;
  }
  return null;
}

function parseBool(entry: OptionEntry): boolean | null {
  const v = typed(entry);
  if (typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v === 0n ? false : v === 1n ? true : null;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    return t === 'true' ? true : t === 'false' ? false : null;
  }
  return null;
}

function parseCompression(entry: OptionEntry): CompressionAlgorithm | null {
  const v = typed(entry);
  if (typeof v === 'bigint') return v === 1n ? 'none' : v === 2n ? 'gzip' : null;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    return t === 'none' || t === 'gzip' ? t : null;
  }
  return null;
}

function parseByteSize(entry: OptionEntry, allowUnlimited: boolean): bigint | null {
  const v = typed(entry);
  if (typeof v === 'bigint') return v;
  if (typeof v !== 'string') return null;
  const parsed = parseSizeLimit(v);
  if (!parsed.ok) return null;
  switch (parsed.value.kind) {
    case 'server_default': return 0n;
    case 'unlimited': return allowUnlimited ? U64_MAX : null;
    case 'bytes': return parsed.value.bytes <= U64_MAX ? parsed.value.bytes : null;
  }
}

function parseExpiry(entry: OptionEntry): bigint | null {
  const v = typed(entry);
  if (typeof v === 'bigint') return v;
  if (typeof v !== 'string') return null;
  // A decimal string is microseconds, like the integer kinds (wire leniency, not duration syntax).
  if (/^\s*\d{1,20}\s*$/.test(v)) {
    const us = BigInt(v.trim());
    return us <= U64_MAX ? us : null;
  }
  const parsed = parseExpiryText(v);
  if (!parsed.ok) return null;
  switch (parsed.value.kind) {
    case 'server_default': return 0n;
    case 'never': return U64_MAX;
    case 'after': {
      const us = parsed.value.ns / 1000n;
      return us <= U64_MAX ? us : null;
    }
  }
}
