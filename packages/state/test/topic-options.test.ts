import {
  CommandCode, ErrorCode, HeaderKind, type OptionEntry, OptionsScope, Operation, createTopicCommand, describeOptionsCommand,
  encodeHeaderValue, getTopicCommand, updateTopicCommand,
} from '@shoal/protocol';
import { U64_MAX } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import { TOPIC_DEFAULTS, answerRead, resolveTopicCreateOptions, resolveTopicUpdateOptions } from '../src/index.js';
import { Harness, id } from './harness.js';

const s = (key: string, value: string): OptionEntry => ({ key, valueKind: HeaderKind.String, value: encodeHeaderValue({ kind: 'string', value }) });
const u64 = (key: string, value: bigint): OptionEntry => ({ key, valueKind: HeaderKind.Uint64, value: encodeHeaderValue({ kind: 'uint64', value }) });
const u8 = (key: string, value: number): OptionEntry => ({ key, valueKind: HeaderKind.Uint8, value: encodeHeaderValue({ kind: 'uint8', value }) });
const b = (key: string, value: boolean): OptionEntry => ({ key, valueKind: HeaderKind.Bool, value: encodeHeaderValue({ kind: 'bool', value }) });
const f64 = (key: string): OptionEntry => ({ key, valueKind: HeaderKind.Float64, value: encodeHeaderValue({ kind: 'float64', value: 1.5 }) });

function created(options: OptionEntry[], partitions = 1) {
  const v = resolveTopicCreateOptions(options, partitions);
  if (!v.ok) throw new Error(`code ${v.code}`);
  const value = (key: string) => [...v.explicit, ...v.derived].find((o) => o.key === key);
  return { v, value };
}

const readU64 = (bytes: Uint8Array | undefined) => new DataView((bytes as Uint8Array).buffer, (bytes as Uint8Array).byteOffset).getBigUint64(0, true);

describe('topic options: create', () => {
  it('resolves every absent key to its default as a derived entry', () => {
    const { v } = created([]);
    expect(v.explicit).toEqual([]);
    expect(v.derived.map((o) => o.key)).toEqual([
      'compression_algorithm', 'enforce_fsync', 'max_topic_size', 'message_expiry', 'messages_required_to_save',
      'preallocate_segments', 'segment_size', 'size_of_messages_required_to_save',
    ]);
    expect(v.derived.every((o) => !o.explicit)).toBe(true);
  });

  it('re-encodes forgiving values canonically and keeps provenance', () => {
    const { v, value } = created([s('segment_size', '128 MiB'), s('message_expiry', '7 days'), s('enforce_fsync', 'TRUE'), s('compression_algorithm', 'gzip'), s('messages_required_to_save', '2048')]);
    expect(v.explicit.map((o) => o.key)).toEqual(['compression_algorithm', 'enforce_fsync', 'message_expiry', 'messages_required_to_save', 'segment_size']);
    expect(value('segment_size')?.kind).toBe(HeaderKind.Uint64);
    expect(readU64(value('segment_size')?.value)).toBe(128n * 1024n * 1024n);
    expect(readU64(value('message_expiry')?.value)).toBe(7n * 86_400n * 1_000_000n);
    expect(value('enforce_fsync')?.value).toEqual(Uint8Array.of(1));
    expect(new TextDecoder().decode(value('compression_algorithm')?.value)).toBe('gzip');
    expect(value('messages_required_to_save')?.kind).toBe(HeaderKind.Uint32);
  });

  it.each([
    ['1GB', 1_000_000_000n], ['1 GiB', 1n << 30n], ['1048576', 1n << 20n], ['1.5 MiB', 1_572_864n], ['2048KiB', 2n << 20n],
  ])('byte size %s', (text, bytes) => expect(readU64(created([s('size_of_messages_required_to_save', text)]).value('size_of_messages_required_to_save')?.value)).toBe(bytes));

  it.each([
    ['1h 30m', 5_400_000_000n], ['250ms', 250_000n], ['1d2h', 93_600_000_000n], ['none', U64_MAX], ['3000', 3000n], ['1 week', 604_800_000_000n],
  ])('expiry %s', (text, us) => expect(readU64(created([s('message_expiry', text)]).value('message_expiry')?.value)).toBe(us));

  it('the server-default sentinel 0 resolves to the default, still explicit', () => {
    const { value } = created([u64('max_topic_size', 0n), u64('message_expiry', 0n)]);
    expect(readU64(value('max_topic_size')?.value)).toBe(TOPIC_DEFAULTS.maxTopicSize);
    expect(value('max_topic_size')?.explicit).toBe(true);
    expect(readU64(value('message_expiry')?.value)).toBe(U64_MAX);
  });

  it.each([
    ['unknown key', [s('retention', '1')], ErrorCode.UnsupportedOptionKey],
    ['segment below 1 MiB', [s('segment_size', '512 KiB')], ErrorCode.InvalidOptionValue],
    ['segment above 1 GiB', [s('segment_size', '2 GiB')], ErrorCode.InvalidOptionValue],
    ['segment not a 512 multiple', [u64('segment_size', (1n << 20n) + 1n)], ErrorCode.InvalidOptionValue],
    ['messages_required_to_save 0', [u64('messages_required_to_save', 0n)], ErrorCode.InvalidOptionValue],
    ['messages_required_to_save too many', [u64('messages_required_to_save', 16_777_217n)], ErrorCode.InvalidOptionValue],
    ['size_of_messages above 1 GiB', [s('size_of_messages_required_to_save', '2GiB')], ErrorCode.InvalidOptionValue],
    ['compression brotli', [s('compression_algorithm', 'brotli')], ErrorCode.InvalidOptionValue],
    ['compression code 3', [u8('compression_algorithm', 3)], ErrorCode.InvalidOptionValue],
    ['bool from "yes"', [s('enforce_fsync', 'yes')], ErrorCode.InvalidOptionValue],
    ['float value', [f64('segment_size')], ErrorCode.InvalidOptionValue],
    ['max_topic_size below one segment', [s('max_topic_size', '1 KiB')], ErrorCode.InvalidOptionValue],
    ['humantime garbage', [s('message_expiry', '5 fortnights')], ErrorCode.InvalidOptionValue],
  ])('refuses %s', (_name, options, code) => {
    expect(resolveTopicCreateOptions(options, 1)).toEqual({ ok: false, code });
  });

  it('preallocation is capped at 64 GiB per create', () => {
    expect(resolveTopicCreateOptions([b('preallocate_segments', true)], 64).ok).toBe(true);
    expect(resolveTopicCreateOptions([b('preallocate_segments', true)], 65)).toEqual({ ok: false, code: ErrorCode.InvalidOptionValue });
    expect(resolveTopicCreateOptions([b('preallocate_segments', false)], 1000).ok).toBe(true);
  });
});

describe('topic options: update, storage and reads', () => {
  it('only the three updatable keys pass; the rest are refused as unsupported', () => {
    expect(resolveTopicUpdateOptions([s('message_expiry', '1h'), s('compression_algorithm', 'gzip'), s('max_topic_size', 'unlimited')], TOPIC_DEFAULTS).ok).toBe(true);
    for (const key of ['segment_size', 'enforce_fsync', 'messages_required_to_save', 'size_of_messages_required_to_save', 'preallocate_segments']) {
      expect(resolveTopicUpdateOptions([s(key, '1')], TOPIC_DEFAULTS)).toEqual({ ok: false, code: ErrorCode.UnsupportedOptionKey });
    }
  });

  it('GetTopic shows explicit and derived blocks; UpdateTopic patches and leaves the rest alone', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    const create = createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 2, name: 't', options: [s('segment_size', '128MiB')] });
    expect(h.run(Operation.CreateTopic, create).outcome?.ok).toBe(true);
    const get = () => {
      const out = answerRead(h.state, { code: CommandCode.GetTopic, body: getTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }), userId: 0, client: 1n });
      if (!out.ok) throw new Error(String(out.code));
      const d = getTopicCommand.decodeResponse(out.payload);
      if (!d.ok || d.value === null) throw new Error('decode');
      return d.value;
    };
    const before = get();
    expect(before.options.map((o) => o.key)).toEqual(['segment_size']);
    expect(before.derivedOptions).toHaveLength(7);
    expect(before.messageExpiry).toBe(U64_MAX);
    expect(before.partitions.map((p) => p.id)).toEqual([0, 1]);
    const update = updateTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 't2', options: [s('message_expiry', '2h'), s('compression_algorithm', 'gzip')] });
    expect(h.run(Operation.UpdateTopic, update).outcome?.ok).toBe(true);
    const after = get();
    expect(after.name).toBe('t2');
    expect(after.messageExpiry).toBe(7_200_000_000n);
    expect(after.compressionAlgorithm).toBe(2);
    expect(after.options.map((o) => o.key)).toEqual(['compression_algorithm', 'message_expiry', 'segment_size']);
    expect(after.derivedOptions).toHaveLength(5);
  });

  it('DescribeOptions lists the topic catalog with canonical defaults; stream and user catalogs are empty', () => {
    const ask = (scope: number) => {
      const out = answerRead(Harness.withRoot().state, { code: CommandCode.DescribeOptions, body: describeOptionsCommand.encodeRequest({ scope }), userId: 0, client: 1n });
      if (!out.ok) throw new Error(String(out.code));
      const d = describeOptionsCommand.decodeResponse(out.payload);
      if (!d.ok) throw new Error(d.reason);
      return d.value;
    };
    const topic = ask(OptionsScope.Topic);
    expect(topic.map((d) => d.key)).toContain('segment_size');
    const seg = topic.find((d) => d.key === 'segment_size');
    expect(readU64(seg?.defaultValue)).toBe(1n << 30n);
    expect(ask(OptionsScope.Stream)).toEqual([]);
    expect(ask(OptionsScope.User)).toEqual([]);
  });
});
