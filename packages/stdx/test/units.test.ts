import { describe, expect, it } from 'vitest';
import {
  U64_MAX, formatDuration, formatSize, parseConfigDurationMs, parseDuration, parseDurationMs, parseExpiry, parseSize,
  parseSizeBytes, parseSizeLimit,
} from '@shoal/stdx';

const SEC = 1_000_000_000n;

describe('parseDuration (humantime, nanoseconds)', () => {
  it.each([
    ['500ms', 500_000_000n], ['5s', 5n * SEC], ['5 s', 5n * SEC], ['1h 30m', 5_400n * SEC], ['1h30m', 5_400n * SEC],
    ['1day 12h', 129_600n * SEC], ['7 days', 604_800n * SEC], ['2 wks', 1_209_600n * SEC], ['1M', 2_630_016n * SEC],
    ['1 year', 31_557_600n * SEC], ['250ns', 250n], ['3µs', 3_000n], ['3 usec', 3_000n], ['0', 0n], ['000', 0n],
    ['  10ms  ', 10_000_000n], ['1m 1s 1ms', 61_001_000_000n], ['90 mins', 5_400n * SEC],
  ])('%j', (text, ns) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: ns });
  });

  it.each([
    ['', 'empty'], ['5', 'missing unit'], ['1.5s', 'cannot parse'], ['-5s', 'cannot parse'], ['5S', 'unknown unit "S"'],
    ['5 parsecs', 'unknown unit'], ['s5', 'cannot parse'], ['5s garbage', 'cannot parse'], ['disabled', 'cannot parse'],
  ])('refuses %j (%s)', (text, reason) => {
    const parsed = parseDuration(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it('m is a minute and M a month', () => {
    expect(parseDurationMs('1m')).toEqual({ ok: true, value: 60_000 });
    expect(parseDurationMs('1M')).toEqual({ ok: true, value: 2_630_016_000 });
  });

  it('ms keep sub-millisecond fractions and refuse what a double cannot hold exactly', () => {
    expect(parseDurationMs('500us')).toEqual({ ok: true, value: 0.5 });
    expect(parseDurationMs('99999999999999999999y').ok).toBe(false);
  });

  it('configuration durations read the IggyDuration zero words', () => {
    for (const word of ['0', 'disabled', 'unlimited', 'none', 'Disabled']) expect(parseConfigDurationMs(word)).toEqual({ ok: true, value: 0 });
    expect(parseConfigDurationMs('5s')).toEqual({ ok: true, value: 5_000 });
  });

  it('formats so that it parses back', () => {
    for (const ms of [0, 0.5, 10, 250, 61_001, 120_000, 3_600_000, 7 * 86_400_000]) {
      expect(parseConfigDurationMs(formatDuration(ms))).toEqual({ ok: true, value: ms });
    }
  });
});

describe('parseSize (bytes)', () => {
  it.each([
    ['64 MiB', 64n << 20n], ['1GB', 1_000_000_000n], ['2 mb', 2_000_000n], ['1200 B', 1200n], ['4096', 4096n],
    ['1.5 KiB', 1536n], ['15G', 15_000_000_000n], ['128k', 128_000n], ['1 TiB', 1n << 40n], ['0', 0n], ['2 PiB', 2n << 50n],
  ])('%j', (text, bytes) => {
    expect(parseSize(text)).toEqual({ ok: true, value: bytes });
  });

  it.each([
    ['', 'empty'], ['MiB', 'cannot parse'], ['-1 MB', 'cannot parse'], ['1.2.3 MB', 'cannot parse'], ['1 XB', 'unknown size unit'],
    ['0.1 B', 'whole number'], ['64 MiBs', 'unknown size unit'], ['1e3', 'cannot parse'],
  ])('refuses %j (%s)', (text, reason) => {
    const parsed = parseSize(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it('safe-integer bytes refuse what a double cannot hold', () => {
    expect(parseSizeBytes('99999 PiB').ok).toBe(false);
    expect(parseSizeBytes('1 GiB')).toEqual({ ok: true, value: 2 ** 30 });
  });

  it('formats so that it parses back', () => {
    for (const bytes of [0, 1, 1000, 1024, 1536, 2 ** 30 + 64 * 2 ** 20, 4e9]) expect(parseSizeBytes(formatSize(bytes))).toEqual({ ok: true, value: bytes });
  });
});

describe('sentinels', () => {
  it('expiry: server_default, never, or a duration', () => {
    expect(parseExpiry('server_default')).toEqual({ ok: true, value: { kind: 'server_default' } });
    for (const word of ['unlimited', 'none', 'never', 'never_expire', 'NEVER']) expect(parseExpiry(word)).toEqual({ ok: true, value: { kind: 'never' } });
    expect(parseExpiry('1day 12h')).toEqual({ ok: true, value: { kind: 'after', ns: 129_600n * SEC } });
    expect(parseExpiry('soon').ok).toBe(false);
  });

  it('size limit: server_default, unlimited, or a size', () => {
    expect(parseSizeLimit('server_default')).toEqual({ ok: true, value: { kind: 'server_default' } });
    expect(parseSizeLimit('unlimited')).toEqual({ ok: true, value: { kind: 'unlimited' } });
    expect(parseSizeLimit('15GB')).toEqual({ ok: true, value: { kind: 'bytes', bytes: 15_000_000_000n } });
    expect(U64_MAX).toBe(0xffff_ffff_ffff_ffffn);
  });
});
