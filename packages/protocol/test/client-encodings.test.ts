import { describe, expect, it } from 'vitest';
import { AssertionError, fromHex, toHex } from '@shoal/stdx';
import {
  HeaderKind, OPTIONS_BYTES_MAX, OPTIONS_ENTRIES_MAX, OptionsScope, TOPIC_OPTION_CATALOG, checkName, checkOptionEntries,
  checkOptionKeys, decodeConsumer, decodeHeaderValue, decodeIdentifier, decodeName, decodeOptionalPartitionId,
  decodeOptionsBlock, decodePartitioning, decodePollingStrategy, decodeUserHeaders, encodeConsumer, encodeHeaderValue,
  encodeIdentifier, encodeName, encodeOptionalPartitionId, encodeOptionsBlock, encodePartitioning, encodePollingStrategy,
  encodeUserHeaders, headerKindName, headerKindWidth, isKnownHeaderKind, iterateUserHeaders, numericIdentifier,
  optionCatalog, stringIdentifier, validateOptionsBlock, validateUserHeaders, type HeaderValue, type UserHeaderEntry,
} from '../src/client/index.js';

const te = new TextEncoder();

/** One TLV field `[kind][len u32][data]`. */
function field(kind: number, data: Uint8Array | string): Uint8Array {
  const bytes = typeof data === 'string' ? te.encode(data) : data;
  const out = new Uint8Array(5 + bytes.length);
  out[0] = kind;
  new DataView(out.buffer).setUint32(1, bytes.length, true);
  out.set(bytes, 5);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe('Name', () => {
  it('is 1..255 UTF-8 bytes behind a u8 length', () => {
    expect(toHex(encodeName('ab'))).toBe('026162');
    expect(decodeName(fromHex('026162'))).toEqual({ ok: true, value: 'ab' });
    expect(decodeName(fromHex('00'))).toEqual({ ok: false, reason: 'empty_name' });
    expect(decodeName(fromHex('0261'))).toEqual({ ok: false, reason: 'truncated_name' });
    expect(decodeName(fromHex('01ff'))).toEqual({ ok: false, reason: 'invalid_utf8_name' });
    expect(decodeName(fromHex('02616263'))).toEqual({ ok: false, reason: 'trailing_bytes' });
    expect(checkName('')).toBe('name_empty');
    expect(checkName('x'.repeat(255))).toBeNull();
    expect(checkName('x'.repeat(256))).toBe('name_too_long');
    expect(checkName('\ud800')).toBe('name_not_utf8');
    expect(() => encodeName('é'.repeat(128))).toThrow(AssertionError);
  });
});

describe('Identifier', () => {
  it('numeric and string forms round-trip', () => {
    expect(toHex(encodeIdentifier(numericIdentifier(1)))).toBe('010401000000');
    expect(toHex(encodeIdentifier(stringIdentifier('s')))).toBe('020173');
    for (const id of [numericIdentifier(0), numericIdentifier(0xffff_ffff), stringIdentifier('é'), stringIdentifier('x'.repeat(255))]) {
      expect(decodeIdentifier(encodeIdentifier(id))).toEqual({ ok: true, value: id });
    }
  });

  it('rejects the rust_test_values cases and more', () => {
    expect(decodeIdentifier(fromHex('ff0401000000'))).toEqual({ ok: false, reason: 'unknown_identifier_kind' });
    expect(decodeIdentifier(fromHex('0103010000'))).toEqual({ ok: false, reason: 'numeric_identifier_length' });
    expect(decodeIdentifier(fromHex('0202fffe'))).toEqual({ ok: false, reason: 'invalid_utf8_identifier' });
    expect(decodeIdentifier(fromHex('0200'))).toEqual({ ok: false, reason: 'empty_string_identifier' });
    expect(decodeIdentifier(fromHex('0001'))).toEqual({ ok: false, reason: 'unknown_identifier_kind' });
    expect(decodeIdentifier(fromHex('0104010000'))).toEqual({ ok: false, reason: 'truncated_identifier' });
    expect(decodeIdentifier(fromHex('01'))).toEqual({ ok: false, reason: 'truncated_identifier_length' });
    expect(() => stringIdentifier('')).toThrow(AssertionError);
    expect(() => numericIdentifier(-1)).toThrow(AssertionError);
  });
});

describe('Consumer and optional partition id', () => {
  it('consumer kinds 1 and 2', () => {
    const consumer = { kind: 'consumer_group' as const, id: stringIdentifier('g') };
    expect(toHex(encodeConsumer(consumer))).toBe('02020167');
    expect(decodeConsumer(encodeConsumer(consumer))).toEqual({ ok: true, value: consumer });
    expect(decodeConsumer(fromHex('03010401000000'))).toEqual({ ok: false, reason: 'unknown_consumer_kind' });
  });

  it('5 fixed bytes; flag 0 means none and zero value bytes', () => {
    expect(toHex(encodeOptionalPartitionId(7))).toBe('0107000000');
    expect(toHex(encodeOptionalPartitionId(null))).toBe('0000000000');
    expect(decodeOptionalPartitionId(fromHex('0107000000'))).toEqual({ ok: true, value: 7 });
    expect(decodeOptionalPartitionId(fromHex('0000000000'))).toEqual({ ok: true, value: null });
    // As the reference reads it: set only with flag 1; any other flag is none, value ignored.
    expect(decodeOptionalPartitionId(fromHex('0007000000'))).toEqual({ ok: true, value: null });
    expect(decodeOptionalPartitionId(fromHex('0209000000'))).toEqual({ ok: true, value: null });
    expect(decodeOptionalPartitionId(fromHex('01070000'))).toEqual({ ok: false, reason: 'truncated_partition_id' });
  });
});

describe('Partitioning', () => {
  it('the three kinds round-trip', () => {
    expect(toHex(encodePartitioning({ kind: 'balanced' }))).toBe('0100');
    expect(toHex(encodePartitioning({ kind: 'partition_id', partitionId: 1 }))).toBe('020401000000');
    const key = { kind: 'messages_key' as const, key: Uint8Array.of(0xff, 0, 1) };
    expect(toHex(encodePartitioning(key))).toBe('0303ff0001');
    expect(decodePartitioning(encodePartitioning(key))).toEqual({ ok: true, value: key });
    expect(decodePartitioning(encodePartitioning({ kind: 'messages_key', key: new Uint8Array(255) })).ok).toBe(true);
    expect(() => encodePartitioning({ kind: 'messages_key', key: new Uint8Array(0) })).toThrow(AssertionError);
  });

  it('rejects the rust_test_values cases', () => {
    expect(decodePartitioning(fromHex('0300'))).toEqual({ ok: false, reason: 'empty_messages_key' });
    expect(decodePartitioning(fromHex('ff00'))).toEqual({ ok: false, reason: 'unknown_partitioning_kind' });
    expect(decodePartitioning(fromHex('010100'))).toEqual({ ok: false, reason: 'balanced_partitioning_with_value' });
    expect(decodePartitioning(fromHex('0203000000'))).toEqual({ ok: false, reason: 'partition_id_partitioning_length' });
    expect(decodePartitioning(fromHex('0305aabb'))).toEqual({ ok: false, reason: 'truncated_messages_key' });
  });
});

describe('Polling strategy', () => {
  it('9 bytes, kinds 1..5, value kept verbatim', () => {
    const strategy = { kind: 'last' as const, value: 123n };
    expect(toHex(encodePollingStrategy(strategy))).toBe('047b00000000000000');
    expect(decodePollingStrategy(encodePollingStrategy(strategy))).toEqual({ ok: true, value: strategy });
    expect(decodePollingStrategy(fromHex('060000000000000000'))).toEqual({ ok: false, reason: 'unknown_polling_kind' });
    expect(decodePollingStrategy(fromHex('0000000000000000'))).toEqual({ ok: false, reason: 'truncated_polling_value' });
  });
});

describe('Header kinds', () => {
  it('codes 1..15 with names and widths', () => {
    expect(headerKindName(HeaderKind.Uint128)).toBe('Uint128');
    expect(headerKindWidth(HeaderKind.Bool)).toBe(1);
    expect(headerKindWidth(HeaderKind.String)).toBeNull();
    expect(isKnownHeaderKind(16)).toBe(false);
  });

  it('typed values round-trip; unknown kinds are preserved raw', () => {
    const values: HeaderValue[] = [
      { kind: 'raw', value: Uint8Array.of(1, 2) }, { kind: 'string', value: 'héllo' }, { kind: 'bool', value: true },
      { kind: 'int8', value: -5 }, { kind: 'int16', value: -300 }, { kind: 'int32', value: -70000 }, { kind: 'int64', value: -(1n << 40n) },
      { kind: 'int128', value: -(1n << 100n) }, { kind: 'uint8', value: 250 }, { kind: 'uint16', value: 65000 }, { kind: 'uint32', value: 4e9 },
      { kind: 'uint64', value: (1n << 64n) - 1n }, { kind: 'uint128', value: (1n << 128n) - 1n }, { kind: 'float32', value: 1.5 },
      { kind: 'float64', value: Math.PI }, { kind: 'unknown', code: 200, value: Uint8Array.of(9) },
    ];
    for (const v of values) {
      const code = v.kind === 'unknown' ? v.code : (HeaderKind as Record<string, number>)[v.kind.charAt(0).toUpperCase() + v.kind.slice(1)] ?? 0;
      expect(decodeHeaderValue(code, encodeHeaderValue(v)), v.kind).toEqual({ ok: true, value: v });
    }
    expect(decodeHeaderValue(HeaderKind.Bool, Uint8Array.of(2))).toEqual({ ok: false, reason: 'header_value_invalid_bool' });
    expect(decodeHeaderValue(HeaderKind.Uint32, Uint8Array.of(1, 2))).toEqual({ ok: false, reason: 'header_value_width' });
    expect(decodeHeaderValue(HeaderKind.String, Uint8Array.of(0xff))).toEqual({ ok: false, reason: 'header_value_invalid_utf8' });
    expect(decodeHeaderValue(0, Uint8Array.of(1))).toEqual({ ok: false, reason: 'header_kind_zero' });
  });
});

describe('User headers block', () => {
  const entries: UserHeaderEntry[] = [
    { keyKind: HeaderKind.String, key: te.encode('key-1'), valueKind: HeaderKind.String, value: te.encode('value-1') },
    { keyKind: HeaderKind.Uint32, key: Uint8Array.of(1, 0, 0, 0), valueKind: 250, value: Uint8Array.of(7) },
  ];

  it('encodes, validates and iterates (unknown value kinds and typed keys preserved)', () => {
    const block = encodeUserHeaders(entries);
    expect(toHex(block.subarray(0, 10))).toBe('0205000000' + '6b65792d31');
    expect(validateUserHeaders(block)).toEqual({ ok: true, value: 2 });
    expect([...iterateUserHeaders(block)]).toEqual(entries);
    expect(decodeUserHeaders(block)).toEqual({ ok: true, value: entries });
    expect(validateUserHeaders(new Uint8Array(0))).toEqual({ ok: true, value: 0 });
  });

  it('matches the vector block of message 1003 (n: uint32 42, flag: bool true)', () => {
    const block = fromHex('02010000006e0b040000002a0000000204000000666c6167030100000001');
    expect(validateUserHeaders(block)).toEqual({ ok: true, value: 2 });
  });

  it('rejects kind 0, lengths 0 and 256, odd field counts, overruns and trailing bytes', () => {
    expect(validateUserHeaders(concat(field(0, 'k'), field(2, 'v')))).toEqual({ ok: false, reason: 'header_kind_zero' });
    expect(validateUserHeaders(concat(field(2, ''), field(2, 'v')))).toEqual({ ok: false, reason: 'header_field_length' });
    expect(validateUserHeaders(concat(field(2, 'x'.repeat(256)), field(2, 'v')))).toEqual({ ok: false, reason: 'header_field_length' });
    expect(validateUserHeaders(concat(field(2, 'x'.repeat(255)), field(2, 'v'))).ok).toBe(true);
    expect(validateUserHeaders(field(2, 'k'))).toEqual({ ok: false, reason: 'header_field_count_odd' });
    const block = encodeUserHeaders(entries);
    const pairEnd = encodeUserHeaders(entries.slice(0, 1)).length;
    for (let cut = 1; cut < block.length; cut++) expect(validateUserHeaders(block.subarray(0, cut)).ok, String(cut)).toBe(cut === pairEnd);
    expect(validateUserHeaders(concat(block, Uint8Array.of(2))).ok).toBe(false);
  });
});

describe('Options block', () => {
  const opt = (key: string, value = 'v', kind: number = HeaderKind.String): Uint8Array => concat(field(HeaderKind.String, key), field(kind, value));

  it('round-trips, preserves unknown value kinds, empty is zero entries', () => {
    const entries = [{ key: 'segment_size', valueKind: HeaderKind.String, value: te.encode('128 MiB') }, { key: 'future', valueKind: 200, value: te.encode('opaque') }];
    const block = encodeOptionsBlock(entries);
    expect(decodeOptionsBlock(block)).toEqual({ ok: true, value: entries });
    expect(validateOptionsBlock(new Uint8Array(0))).toEqual({ ok: true, value: 0 });
  });

  it('string keys only, valid UTF-8, no duplicates', () => {
    expect(validateOptionsBlock(concat(field(HeaderKind.Uint64, new Uint8Array(8)), field(2, 'v')))).toEqual({ ok: false, reason: 'option_key_not_string' });
    expect(validateOptionsBlock(concat(field(2, Uint8Array.of(0xff, 0xfe)), field(2, 'v')))).toEqual({ ok: false, reason: 'option_key_invalid_utf8' });
    expect(validateOptionsBlock(concat(opt('a'), opt('b'), opt('a')))).toEqual({ ok: false, reason: 'option_key_duplicate' });
  });

  it('at most 1024 entries', () => {
    const keys = Array.from({ length: OPTIONS_ENTRIES_MAX + 1 }, (_, i) => `key_${i}`);
    expect(validateOptionsBlock(concat(...keys.slice(0, OPTIONS_ENTRIES_MAX).map((k) => opt(k))))).toEqual({ ok: true, value: 1024 });
    expect(validateOptionsBlock(concat(...keys.map((k) => opt(k))))).toEqual({ ok: false, reason: 'options_too_many_entries' });
  });

  it('at most 100000 bytes (checked before the walk)', () => {
    const big = Array.from({ length: 200 }, (_, i) => opt(String(i).padStart(255, '0'), 'v'.repeat(255)));
    const block = concat(...big);
    expect(block.length).toBeGreaterThan(OPTIONS_BYTES_MAX);
    expect(validateOptionsBlock(block)).toEqual({ ok: false, reason: 'options_block_too_large' });
    expect(validateOptionsBlock(new Uint8Array(OPTIONS_BYTES_MAX + 1))).toEqual({ ok: false, reason: 'options_block_too_large' });
    expect(validateOptionsBlock(concat(...big.slice(0, 190))).ok).toBe(true);
  });

  it('exact consumption: any truncation or trailing byte fails', () => {
    const block = concat(opt('segment_size', '1 GiB'));
    for (let cut = 1; cut < block.length; cut++) expect(validateOptionsBlock(block.subarray(0, cut)).ok, String(cut)).toBe(false);
    expect(validateOptionsBlock(concat(block, Uint8Array.of(0))).ok).toBe(false);
  });

  it('encoder-side checks', () => {
    expect(checkOptionEntries([{ key: 'a', valueKind: 2, value: Uint8Array.of(1) }, { key: 'a', valueKind: 2, value: Uint8Array.of(1) }])).toBe('option_key_duplicate');
    expect(checkOptionEntries([{ key: '', valueKind: 2, value: Uint8Array.of(1) }])).toBe('option_key_length');
    expect(checkOptionEntries([{ key: 'a', valueKind: 0, value: Uint8Array.of(1) }])).toBe('option_value_kind');
    expect(() => encodeOptionsBlock([{ key: 'a', valueKind: 2, value: new Uint8Array(0) }])).toThrow(AssertionError);
  });

  it('catalogs: topic keys, empty stream and user catalogs, create-only keys', () => {
    expect(TOPIC_OPTION_CATALOG.map((s) => s.key)).toEqual([
      'max_topic_size', 'message_expiry', 'compression_algorithm', 'segment_size', 'enforce_fsync', 'messages_required_to_save',
      'size_of_messages_required_to_save', 'preallocate_segments',
    ]);
    expect(TOPIC_OPTION_CATALOG.filter((s) => s.updatable).map((s) => s.key)).toEqual(['max_topic_size', 'message_expiry', 'compression_algorithm']);
    expect(optionCatalog(OptionsScope.Stream)).toEqual([]);
    const segment = [{ key: 'segment_size', valueKind: 2, value: te.encode('1 GiB') }];
    expect(checkOptionKeys(OptionsScope.Topic, segment, 'create')).toBeNull();
    expect(checkOptionKeys(OptionsScope.Topic, segment, 'update')).toEqual({ reason: 'option_not_updatable', key: 'segment_size' });
    expect(checkOptionKeys(OptionsScope.Stream, segment, 'create')).toEqual({ reason: 'unsupported_option_key', key: 'segment_size' });
  });
});
