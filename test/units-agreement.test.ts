/**
 * One duration/size syntax on every surface: the node's configuration, topic options (admitted
 * by the state machine), SDK connection strings and the CLI all read a value through the parser
 * of @shoal/stdx (units.ts), so the same text means the same amount everywhere, and text one
 * surface refuses, every surface refuses.
 */
import { describe, expect, it } from 'vitest';
import { parseConnectionString } from '@shoal/client';
import { HeaderKind, encodeHeaderValue, type OptionEntry } from '@shoal/protocol';
import { loadConfig, type ShoalConfig } from '@shoal/runtime';
import { resolveTopicCreateOptions } from '@shoal/state';
import { parseExpiryMicros, parseSize } from '../apps/cli/src/parse.js';

const option = (key: string, value: string): OptionEntry => ({ key, valueKind: HeaderKind.String, value: encodeHeaderValue({ kind: 'string', value }) });

function topicOption(key: string, text: string): bigint | null {
  const verdict = resolveTopicCreateOptions([option(key, text)], 1);
  if (!verdict.ok) return null;
  const stored = verdict.explicit.find((o) => o.key === key);
  return stored === undefined ? null : new DataView(stored.value.buffer, stored.value.byteOffset).getBigUint64(0, true);
}

function configValue(env: Record<string, string>, pick: (c: ShoalConfig) => number): number | null {
  const config = configOf(env);
  return config === null ? null : pick(config);
}

function configOf(env: Record<string, string>): ShoalConfig | null {
  const loaded = loadConfig({ env, availableParallelism: 2 });
  return loaded.ok ? loaded.config : null;
}

function connectionStringMs(text: string): number | null {
  try {
    return parseConnectionString(`iggy://u:p@127.0.0.1:1?heartbeat_interval=${encodeURIComponent(text)}`).options.heartbeatIntervalMs ?? null;
  } catch {
    return null;
  }
}

function cliMicros(text: string): bigint | null {
  try {
    return parseExpiryMicros(text.split(' ')) ?? null;
  } catch {
    return null;
  }
}

function cliBytes(text: string): bigint | null {
  try {
    return parseSize(text) ?? null;
  } catch {
    return null;
  }
}

describe('one duration syntax', () => {
  it.each([
    ['45s', 45_000], ['1m 30s', 90_000], ['1m30s', 90_000], ['2 minutes', 120_000], ['1h', 3_600_000], ['1 day 12h', 129_600_000], ['2 wks', 1_209_600_000],
  ])('%j is %d ms in the config, a connection string, the CLI and a topic option', (text, ms) => {
    expect(configValue({ IGGY_HEARTBEAT_INTERVAL: text }, (c) => c.heartbeat.intervalMs)).toBe(ms);
    expect(connectionStringMs(text)).toBe(ms);
    expect(cliMicros(text)).toBe(BigInt(ms) * 1000n);
    expect(topicOption('message_expiry', text)).toBe(BigInt(ms) * 1000n);
  });

  it.each(['1.5s', '5', '5S', '10 parsecs', 's5'])('%j is refused everywhere', (text) => {
    expect(configOf({ IGGY_HEARTBEAT_INTERVAL: text })).toBeNull();
    expect(connectionStringMs(text)).toBeNull();
    expect(cliMicros(text)).toBeNull();
    if (text !== '5') expect(topicOption('message_expiry', text)).toBeNull(); // a bare number is µs on the wire
  });
});

describe('one size syntax', () => {
  it.each([
    ['2 GiB', 2 ** 31], ['2GiB', 2 ** 31], ['1500mb', 1.5e9], ['1.5 GiB', 1.5 * 2 ** 30], ['2G', 2e9], ['2147483648', 2 ** 31],
  ])('%j is %d bytes in the config, the CLI and a topic option', (text, bytes) => {
    expect(configValue({ IGGY_PARTITION_TRANSFER_SERVED_CACHE_BYTES_MAX: text }, (c) => c.partition.transferServedCacheBytesMax)).toBe(bytes);
    expect(cliBytes(text)).toBe(BigInt(bytes));
    expect(topicOption('max_topic_size', text)).toBe(BigInt(bytes));
  });

  it.each(['0.1 B', '1 XB', '64 MiBs', '1e3', 'MiB'])('%j is refused everywhere', (text) => {
    expect(configOf({ IGGY_PARTITION_TRANSFER_SERVED_CACHE_BYTES_MAX: text })).toBeNull();
    expect(cliBytes(text)).toBeNull();
    expect(topicOption('max_topic_size', text)).toBeNull();
  });

  it('unlimited is u64::MAX for the CLI and a topic option (the reference MaxTopicSize::Unlimited)', () => {
    expect(cliBytes('unlimited')).toBe(0xffff_ffff_ffff_ffffn);
    expect(topicOption('max_topic_size', 'unlimited')).toBe(0xffff_ffff_ffff_ffffn);
  });
});
