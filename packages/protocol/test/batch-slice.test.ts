import { describe, expect, it } from 'vitest';
import { Prng, fromHex, toHex } from '@shoal/stdx';
import { FrameCursor, readBatchHeader, sliceBatch, sliceBatchParts, stampBatch, validateBatch } from '../src/batch/index.js';
import { batchVector, mustBuild, randomMessages } from './batch-fixtures.js';

function frameHexes(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const cursor = new FrameCursor(bytes);
  while (cursor.next()) out.push(toHex(cursor.frame()));
  return out;
}

function stampedBatch(prng: Prng, count: number): Uint8Array {
  const bytes = mustBuild(randomMessages(prng, count));
  const verdict = stampBatch(bytes, { partitionId: 3n, baseOffset: 1_000n + BigInt(prng.below(1000)), baseTimestamp: 99n });
  if (!verdict.ok) throw new Error(verdict.reason);
  return bytes;
}

describe('sliceBatch', () => {
  it('round-trips every [from, to): validates as contiguous, offsets resolve, frames byte-identical', () => {
    const prng = new Prng(31);
    const bytes = stampedBatch(prng, 7);
    const header = readBatchHeader(bytes);
    const frames = frameHexes(bytes);
    for (let from = 0; from < 7; from++) {
      for (let to = from + 1; to <= 7; to++) {
        const slice = sliceBatch(bytes, from, to);
        if (!slice.ok) throw new Error(slice.reason);
        const verdict = validateBatch(slice.value, { offsetDeltas: 'contiguous' });
        expect(verdict.ok, `[${from}, ${to})`).toBe(true);
        if (!verdict.ok) continue;
        expect(verdict.value).toMatchObject({
          messageCount: to - from,
          partitionId: header?.partitionId,
          baseOffset: header?.baseOffset,
          baseTimestamp: header?.baseTimestamp,
          originTimestamp: header?.originTimestamp,
          firstOffsetDelta: from,
          lastOffsetDelta: to - 1,
        });
        // The first polled offset is base_offset + offset_delta of the first frame.
        expect(verdict.value.baseOffset + BigInt(verdict.value.firstOffsetDelta)).toBe((header?.baseOffset ?? 0n) + BigInt(from));
        expect(frameHexes(slice.value)).toEqual(frames.slice(from, to));
        if (from > 0) expect(validateBatch(slice.value)).toMatchObject({ ok: false, reason: 'frame_offset_delta_mismatch' });
      }
    }
  });

  it('the whole range gives back the stored batch byte for byte', () => {
    const v = batchVector('server_stamped_batch');
    const slice = sliceBatch(fromHex(v.hex), 0, 3);
    expect(slice.ok && toHex(slice.value)).toBe(v.hex);
  });

  it('parts: a new header plus a view of the stored frames (no copy)', () => {
    const bytes = stampedBatch(new Prng(2), 5);
    const parts = sliceBatchParts(bytes, 1, 4);
    if (!parts.ok) throw new Error(parts.reason);
    expect(parts.value.frames.buffer).toBe(bytes.buffer);
    expect(parts.value.header.length).toBe(256);
    expect(parts.value.batchLength).toBe(256 + parts.value.frames.length);
    const joined = sliceBatch(bytes, 1, 4);
    expect(joined.ok && toHex(joined.value)).toBe(toHex(parts.value.header) + toHex(parts.value.frames));
    expect(readBatchHeader(parts.value.header)?.batchChecksum).toBe(parts.value.batchChecksum);
  });

  it('a slice of a slice is the slice of the original', () => {
    const prng = new Prng(8);
    for (let round = 0; round < 30; round++) {
      const count = 2 + prng.below(8);
      const bytes = stampedBatch(prng, count);
      const from = prng.below(count - 1);
      const to = from + 1 + prng.below(count - from);
      const outer = sliceBatch(bytes, from, to);
      if (!outer.ok) throw new Error(outer.reason);
      const innerFrom = prng.below(to - from);
      const innerTo = innerFrom + 1 + prng.below(to - from - innerFrom);
      const inner = sliceBatch(outer.value, innerFrom, innerTo);
      const direct = sliceBatch(bytes, from + innerFrom, from + innerTo);
      expect(inner.ok && toHex(inner.value)).toBe(direct.ok && toHex(direct.value));
    }
  });

  it('refuses empty or out-of-range ranges and malformed stored bytes', () => {
    const bytes = stampedBatch(new Prng(4), 3);
    for (const [from, to] of [[0, 0], [2, 2], [2, 1], [-1, 2], [0, 4], [0.5, 2], [Number.NaN, 1]] as const) {
      expect(sliceBatch(bytes, from, to), `[${from}, ${to})`).toMatchObject({ ok: false, reason: 'slice_out_of_range' });
    }
    expect(sliceBatch(bytes.subarray(0, 300), 0, 1)).toMatchObject({ ok: false, reason: 'batch_truncated' });
    const broken = bytes.slice();
    new DataView(broken.buffer).setUint32(256 + 36, 0xffff, true);
    expect(sliceBatch(broken, 0, 1)).toMatchObject({ ok: false, reason: 'frame_overrun', frameIndex: 0 });
  });
});
