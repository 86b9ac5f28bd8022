import { describe, expect, it } from 'vitest';
import { Prng, fromHex, toHex } from '@shoal/stdx';
import { FrameCursor, forEachFrame } from '../src/batch/index.js';
import { batchVector, mustBuild, randomMessages } from './batch-fixtures.js';

describe('FrameCursor', () => {
  it('walks producer_batch: fields and views match the vector', () => {
    const v = batchVector('producer_batch');
    const bytes = fromHex(v.hex);
    const cursor = new FrameCursor(bytes);
    for (const [i, f] of v.frames.entries()) {
      expect(cursor.next()).toBe(true);
      expect(cursor.index).toBe(i);
      expect(cursor.checksum()).toBe(BigInt(f['checksum'] as string));
      expect(cursor.id()).toBe(BigInt(f['id'] as string));
      expect(cursor.offsetDelta).toBe(f['offset_delta']);
      expect(cursor.timestampDelta).toBe(f['timestamp_delta']);
      expect(cursor.payloadLength).toBe(f['payload_length']);
      expect(cursor.userHeadersLength).toBe(f['user_headers_length']);
      expect(toHex(cursor.frame())).toBe(f['hex']);
      expect(toHex(cursor.payload())).toBe(v.inputs.messages[i]?.payload_hex);
      expect(toHex(cursor.userHeaders())).toBe(v.inputs.messages[i]?.user_headers_hex);
      expect(cursor.payload().buffer).toBe(bytes.buffer);
    }
    expect(cursor.next()).toBe(false);
    expect(cursor.reason).toBeNull();
  });

  it('is iterable with for..of (one reused cursor)', () => {
    const bytes = mustBuild(randomMessages(new Prng(1), 6));
    const seen = new Set<FrameCursor>();
    const deltas: number[] = [];
    for (const frame of new FrameCursor(bytes)) {
      seen.add(frame);
      deltas.push(frame.offsetDelta);
    }
    expect(deltas).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen.size).toBe(1);
  });

  it('forEachFrame counts, stops early, and reports malformed batches', () => {
    const bytes = mustBuild(randomMessages(new Prng(2), 4));
    expect(forEachFrame(bytes, () => undefined)).toEqual({ ok: true, value: 4 });
    expect(forEachFrame(bytes, (f) => f.index < 1)).toEqual({ ok: true, value: 2 });
    const tooMany = bytes.slice();
    new DataView(tooMany.buffer).setUint32(48, 5, true);
    expect(forEachFrame(tooMany, () => undefined)).toMatchObject({ ok: false, reason: 'message_count_mismatch', frameIndex: 4 });
    const tooFew = bytes.slice();
    new DataView(tooFew.buffer).setUint32(48, 3, true);
    expect(forEachFrame(tooFew, () => undefined)).toMatchObject({ ok: false, reason: 'message_count_mismatch' });
    expect(forEachFrame(bytes.subarray(0, 100), () => undefined)).toMatchObject({ ok: false, reason: 'batch_too_short' });
    expect(forEachFrame(bytes.subarray(0, bytes.length - 1), () => undefined)).toMatchObject({ ok: false, reason: 'batch_truncated' });
    const overrun = bytes.slice();
    new DataView(overrun.buffer).setUint32(256 + 36, 1 << 20, true);
    expect(forEachFrame(overrun, () => undefined)).toMatchObject({ ok: false, reason: 'frame_overrun', frameIndex: 0 });
  });

  it('walks only batch_length bytes of a longer buffer (a segment log)', () => {
    const a = mustBuild(randomMessages(new Prng(3), 2));
    const b = mustBuild(randomMessages(new Prng(4), 3));
    const log = new Uint8Array(a.length + b.length);
    log.set(a);
    log.set(b, a.length);
    expect(forEachFrame(log, () => undefined)).toEqual({ ok: true, value: 2 });
    expect(forEachFrame(log.subarray(a.length), () => undefined)).toEqual({ ok: true, value: 3 });
  });
});
