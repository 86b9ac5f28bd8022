import { describe, expect, it } from 'vitest';
import { formatDuration, formatSize, msToTicks, parseConfigDurationMs, parseSizeBytes, TICK_MS } from '../src/index.js';
import { cluster, loadOk } from './config-fixtures.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['5s', 5_000],
    ['5 s', 5_000],
    ['2m', 120_000],
    ['1 day', 86_400_000],
    ['7 days', 7 * 86_400_000],
    ['1h 30m', 5_400_000],
    ['1h30m', 5_400_000],
    ['1 h', 3_600_000],
    ['30 seconds', 30_000],
    ['2 weeks', 14 * 86_400_000],
    ['1M', 2_630_016_000],
    ['1 year', 31_557_600_000],
    ['250000ns', 0.25],
    ['500us', 0.5],
    ['  10ms  ', 10],
    ['1m 1s 1ms', 61_001],
  ])('parses %j as %d ms', (text, ms) => {
    expect(parseConfigDurationMs(text)).toEqual({ ok: true, value: ms });
  });

  it.each(['0', 'disabled', 'unlimited', 'none'])('reads the sentinel %j as zero', (text) => {
    expect(parseConfigDurationMs(text)).toEqual({ ok: true, value: 0 });
  });

  it.each([
    ['', 'empty'],
    ['abc', 'cannot parse'],
    ['5', 'missing unit'],
    ['-5s', 'cannot parse'],
    ['1.5s', 'cannot parse'],
    ['5 parsecs', 'unknown unit "parsecs"'],
    ['5s garbage', 'cannot parse'],
    ['s5', 'cannot parse'],
    ['5S', 'unknown unit "S"'],
    ['99999999999999999999y', 'too large'],
  ])('refuses %j (%s)', (text, reason) => {
    const parsed = parseConfigDurationMs(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it.each([0, 0.5, 10, 250, 500, 1_000, 61_001, 120_000, 3_600_000, 7 * 86_400_000])('formats %d ms so it parses back', (ms) => {
    expect(parseConfigDurationMs(formatDuration(ms))).toEqual({ ok: true, value: ms });
  });

  it('formats in the largest exact unit', () => {
    expect(formatDuration(5_000)).toBe('5s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(7 * 86_400_000)).toBe('7d');
  });
});

describe('parseSize', () => {
  it.each([
    ['64 MiB', 64 * 2 ** 20],
    ['1GB', 1_000_000_000],
    ['2 MB', 2_000_000],
    ['1200 B', 1200],
    ['4096', 4096],
    ['1.5 KiB', 1536],
    ['1 kib', 1024],
    ['1 gib', 2 ** 30],
    ['0', 0],
    ['2176 MiB', 2176 * 2 ** 20],
    ['1 TiB', 2 ** 40],
  ])('parses %j as %d bytes', (text, bytes) => {
    expect(parseSizeBytes(text)).toEqual({ ok: true, value: bytes });
  });

  it.each([
    ['', 'empty'],
    ['MiB', 'cannot parse'],
    ['-1 MB', 'cannot parse'],
    ['1.2.3 MB', 'cannot parse'],
    ['1 XB', 'unknown size unit'],
    ['0.1 B', 'whole number of bytes'],
    ['64 MiBs', 'unknown size unit'],
    ['1e3', 'cannot parse'],
    ['99999 PiB', 'too large'],
  ])('refuses %j (%s)', (text, reason) => {
    const parsed = parseSizeBytes(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it('formats with the smallest exact number', () => {
    expect(formatSize(64 * 2 ** 20)).toBe('64 MiB');
    expect(formatSize(4_000_000_000)).toBe('4 GB');
    expect(formatSize(1088 * 2 ** 20)).toBe('1088 MiB');
    expect(formatSize(1200)).toBe('1200 B');
    expect(formatSize(0)).toBe('0 B');
    for (const bytes of [1, 1000, 1024, 1536, 2 ** 30 + 64 * 2 ** 20]) expect(parseSizeBytes(formatSize(bytes))).toEqual({ ok: true, value: bytes });
  });
});

describe('ticks', () => {
  it('is integer division by 10 ms with a floor of one tick', () => {
    expect(TICK_MS).toBe(10);
    expect(msToTicks(5_000)).toBe(500);
    expect(msToTicks(250)).toBe(25);
    expect(msToTicks(1_005)).toBe(100);
    expect(msToTicks(19)).toBe(1);
    expect(msToTicks(15)).toBe(1);
    expect(msToTicks(10)).toBe(1);
    expect(msToTicks(9)).toBe(1);
    expect(msToTicks(0.5)).toBe(1);
  });

  it('gives the spec defaults (replication-semantics §4.2)', () => {
    const { config } = loadOk();
    expect(config.cluster).toMatchObject({
      prepareRetransmitIntervalTicks: 25,
      commitBroadcastIntervalTicks: 50,
      heartbeatTimeoutTicks: 500,
      viewChangeRetransmitIntervalTicks: 50,
      viewChangeStatusTimeoutTicks: 500,
      requestStartViewRetransmitIntervalTicks: 100,
      repairRetryIntervalTicks: 100,
      superblockWedgedFatalWrites: 120,
    });
  });

  it('converts configured durations, rounding down', () => {
    const { config } = loadOk(cluster({
      IGGY_CLUSTER_PREPARE_RETRANSMIT_INTERVAL: '15ms',
      IGGY_CLUSTER_COMMIT_BROADCAST_INTERVAL: '5ms',
      IGGY_CLUSTER_REPAIR_RETRY_INTERVAL: '1005ms',
      IGGY_CLUSTER_HEARTBEAT_TIMEOUT: '2s 9ms',
    }));
    expect(config.cluster.prepareRetransmitIntervalMs).toBe(15);
    expect(config.cluster.prepareRetransmitIntervalTicks).toBe(1);
    expect(config.cluster.commitBroadcastIntervalTicks).toBe(1);
    expect(config.cluster.repairRetryIntervalTicks).toBe(100);
    expect(config.cluster.heartbeatTimeoutTicks).toBe(200);
  });
});
