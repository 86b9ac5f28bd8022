import { describe, expect, it } from 'vitest';
import { Prng, toHex } from '@shoal/stdx';
import { xxh3_64 } from '../src/hash/xxh3.js';
import { FrameCursor, buildBatch, readBatchHeader, validateBatch } from '../src/batch/index.js';
import { batchVector, mustBuild, randomMessages, vectorMessages } from './batch-fixtures.js';

describe('buildBatch', () => {
  it('reproduces producer_batch byte for byte', () => {
    const v = batchVector('producer_batch');
    expect(toHex(mustBuild(vectorMessages(v)))).toBe(v.hex);
  });

  it('reproduces single_message_batch (empty payload, no user headers)', () => {
    const v = batchVector('single_message_batch');
    expect(toHex(mustBuild(vectorMessages(v)))).toBe(v.hex);
  });

  it('takes origin_timestamp from the earliest message, deltas against it, offset_delta = index', () => {
    const bytes = mustBuild([
      { id: 1n, payload: new Uint8Array(1), originTimestamp: 5_000n },
      { id: 2n, payload: new Uint8Array(1), originTimestamp: 1_000n },
      { id: 3n, payload: new Uint8Array(1), originTimestamp: 1_000n + 0xffff_ffffn },
    ]);
    expect(readBatchHeader(bytes)?.originTimestamp).toBe(1_000n);
    const cursor = new FrameCursor(bytes);
    const seen: [number, number][] = [];
    while (cursor.next()) seen.push([cursor.offsetDelta, cursor.timestampDelta]);
    expect(seen).toEqual([[0, 4_000], [1, 0], [2, 0xffff_ffff]]);
    expect(validateBatch(bytes).ok).toBe(true);
  });

  it('writes each frame checksum as XXH3 of frame bytes 8..end', () => {
    const bytes = mustBuild(randomMessages(new Prng(3), 20));
    const cursor = new FrameCursor(bytes);
    while (cursor.next()) expect(cursor.checksum()).toBe(xxh3_64(bytes.subarray(cursor.start + 8, cursor.end)));
  });

  it('refuses a span above u32 microseconds, naming the latest message', () => {
    const verdict = buildBatch([
      { id: 1n, payload: new Uint8Array(0), originTimestamp: 10n },
      { id: 2n, payload: new Uint8Array(0), originTimestamp: 10n + 0x1_0000_0000n },
    ]);
    expect(verdict).toEqual({ ok: false, reason: 'timestamp_span_too_large', messageIndex: 1 });
  });

  it('refuses bad inputs with a reason, never an exception', () => {
    const ok = { id: 1n, payload: new Uint8Array(0), originTimestamp: 1n };
    expect(buildBatch([])).toMatchObject({ ok: false, reason: 'batch_empty' });
    expect(buildBatch([ok, { ...ok, id: 1n << 128n }])).toMatchObject({ reason: 'message_id_out_of_range', messageIndex: 1 });
    expect(buildBatch([{ ...ok, id: -1n }])).toMatchObject({ reason: 'message_id_out_of_range' });
    expect(buildBatch([{ ...ok, originTimestamp: 1n << 64n }])).toMatchObject({ reason: 'origin_timestamp_out_of_range' });
    expect(buildBatch([{ ...ok, payload: new Uint8Array(11) }], { maxPayloadBytes: 10 })).toMatchObject({ reason: 'frame_payload_too_large' });
    expect(buildBatch([{ ...ok, userHeaders: new Uint8Array(11) }], { maxUserHeadersBytes: 10 })).toMatchObject({ reason: 'frame_user_headers_too_large' });
    expect(buildBatch([ok, ok], { maxMessages: 1 })).toMatchObject({ reason: 'batch_too_many_messages' });
    expect(buildBatch([ok, ok], { maxBytes: 256 + 48 })).toMatchObject({ reason: 'batch_too_large', messageIndex: 1 });
  });

  it('builds batches that validate, for random inputs (property)', () => {
    const prng = new Prng(11);
    for (let round = 0; round < 200; round++) {
      const messages = randomMessages(prng, 1 + prng.below(12));
      const bytes = mustBuild(messages);
      const verdict = validateBatch(bytes);
      expect(verdict.ok).toBe(true);
      const cursor = new FrameCursor(bytes);
      for (const m of messages) {
        expect(cursor.next()).toBe(true);
        expect(cursor.id()).toBe(m.id);
        expect(toHex(cursor.payload())).toBe(toHex(m.payload));
        expect(toHex(cursor.userHeaders())).toBe(toHex(m.userHeaders ?? new Uint8Array(0)));
      }
      expect(cursor.next()).toBe(false);
      expect(cursor.reason).toBeNull();
    }
  });
});
