import { describe, expect, it } from 'vitest';
import {
  INDEX_ENTRY_SIZE,
  SegmentIndex,
  SimDisk,
  classifyPurgeRecord,
  decodeIndex,
  encodePurgeRecord,
  parseSegmentFileName,
  segmentBaseName,
  walkBatches,
} from '../src/index.js';
import { concat, makeBatches } from './support/fixtures.js';

describe('segment index codec', () => {
  const index = new SegmentIndex(2);
  index.push(100, 5_000, 0);
  index.push(104, 5_000, 704);
  index.push(110, 6_000, 1408);
  const bytes = index.encode();

  it('round-trips 24-byte entries and finds by offset and by timestamp', () => {
    expect(bytes.length).toBe(3 * INDEX_ENTRY_SIZE);
    const decoded = decodeIndex(bytes, 100);
    expect(decoded.kind).toBe('ok');
    if (decoded.kind !== 'ok') return;
    const d = decoded.index;
    expect([0, 1, 2].map((i) => [d.offsetAt(i), d.timestampAt(i), d.positionAt(i)])).toEqual([
      [100, 5000, 0],
      [104, 5000, 704],
      [110, 6000, 1408],
    ]);
    expect([99, 100, 103, 104, 109, 110, 1e9].map((o) => d.floorByOffset(o))).toEqual([-1, 0, 0, 1, 1, 2, 2]);
    expect([0, 5000, 5001, 6000, 6001].map((t) => d.ceilByTimestamp(t))).toEqual([0, 0, 2, 2, 3]);
  });

  it('classifies torn, non-monotonic and misplaced indexes', () => {
    const torn = decodeIndex(concat([bytes, new Uint8Array(5)]), 100);
    expect(torn.kind === 'ok' && torn.tornBytes).toBe(5);
    expect(decodeIndex(bytes, 99)).toMatchObject({ kind: 'invalid', reason: 'index_first_entry_not_segment_start' });
    const swapped = concat([bytes.subarray(0, 24), bytes.subarray(48, 72), bytes.subarray(24, 48)]);
    expect(decodeIndex(swapped, 100)).toMatchObject({ kind: 'invalid', reason: 'index_not_monotonic', at: 2 });
    const huge = bytes.slice();
    huge[7] = 0xff;
    expect(decodeIndex(huge, 100).kind).toBe('invalid');
    expect(() => index.push(110, 0, 2000)).toThrow(/offset/);
  });

  it('names segment files by their 20-digit start offset', () => {
    expect(segmentBaseName(16_000_000)).toBe('00000000000016000000');
    expect(parseSegmentFileName('00000000000016000000.log')).toEqual({ start: 16_000_000, kind: 'log' });
    expect(parseSegmentFileName('00000000000016000000.index')).toEqual({ start: 16_000_000, kind: 'index' });
    expect(parseSegmentFileName('16000000.log')).toBeNull();
    expect(parseSegmentFileName('00000000000016000000.log.tmp')).toBeNull();
  });
});

describe('purge.gen', () => {
  it('round-trips 16 bytes and classifies damage', () => {
    const bytes = encodePurgeRecord({ generation: 3n, createdRevision: 77n });
    expect(classifyPurgeRecord(bytes)).toEqual({ kind: 'ok', record: { generation: 3n, createdRevision: 77n } });
    expect(classifyPurgeRecord(null).kind).toBe('missing');
    expect(classifyPurgeRecord(bytes.subarray(0, 15)).kind).toBe('corrupt');
  });
});

describe('segment walker', () => {
  it('walks whole verified batches and names the first failure', () => {
    const disk = new SimDisk({ seed: 1 });
    const log = concat(makeBatches(10, [3, 2, 4]));
    const fd = disk.open('/log', 'create');
    disk.write(fd, log, 0, log.length, 0);
    const whole = walkBatches(disk, fd, 0, log.length, 10, true);
    expect(whole).toEqual({ end: log.length, nextOffset: 19, batches: 3, stop: null });
    expect(walkBatches(disk, fd, 0, log.length - 1, 10, true).stop?.reason).toBe('batch_past_end');
    expect(walkBatches(disk, fd, 0, log.length, 11, true).stop?.reason).toBe('base_offset_10_expected_11');
    const zeros = new Uint8Array(300);
    disk.write(fd, zeros, 0, zeros.length, log.length);
    expect(walkBatches(disk, fd, 0, log.length + 300, 10, true).stop?.reason).toBe('zero_fill');
    const flipped = log.slice();
    flipped[log.length - 3] = (flipped[log.length - 3] as number) ^ 1;
    disk.write(fd, flipped, 0, flipped.length, 0);
    const bad = walkBatches(disk, fd, 0, log.length, 10, true);
    expect(bad.batches).toBe(2);
    expect(bad.stop?.reason).toBe('frame_checksum_mismatch');
  });
});
