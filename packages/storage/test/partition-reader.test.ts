import { describe, expect, it } from 'vitest';
import { FrameCursor, validateBatch } from '@shoal/protocol';
import { PartitionStorage, SimDisk, pollParts, type Poll, type PartitionStorageOptions } from '../src/index.js';
import { concat, makeBatch, makeBatches, must } from './support/fixtures.js';

const DIR = '/p';
const BATCH_4 = makeBatch(0, 4).length;

function setup(options: Partial<PartitionStorageOptions> = {}): { disk: SimDisk; p: PartitionStorage } {
  const disk = new SimDisk({ seed: 1 });
  const opened = PartitionStorage.open(disk, DIR, { segmentSize: 2 * BATCH_4, ...options });
  if (!opened.ok) throw new Error('open');
  const p = opened.value;
  // 7 batches of 4 messages, offsets 0..27, timestamps 100 × batch number; 3 sealed segments + active.
  must(p.log.append(makeBatches(0, [4, 4, 4, 4, 4, 4, 4], 64, (o) => 100 * (o / 4 + 1))));
  return { disk, p };
}

/** Offsets of every message returned, read through the returned (possibly sliced) batches. */
function offsetsOf(poll: Poll): number[] {
  const out: number[] = [];
  for (const b of poll.batches) {
    const bytes = concat(b.parts);
    expect(validateBatch(bytes, { offsetDeltas: b.sliced ? 'contiguous' : 'index' }).ok).toBe(true);
    const base = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(8, true));
    const cursor = new FrameCursor(bytes);
    while (cursor.next()) out.push(base + cursor.offsetDelta);
  }
  return out;
}

describe('PartitionReader', () => {
  it('lendViews: a poll\'s views survive the next poll (they go to a socket unsent); the default reuses its buffer', () => {
    const lent = setup({ lendViews: true }).p;
    const first = must(lent.reader.byOffset(0, 4));
    const kept = concat(first.batches.flatMap((b) => b.parts));
    const copy = kept.slice();
    must(lent.reader.byOffset(8, 4));
    expect(concat(first.batches.flatMap((b) => b.parts))).toEqual(copy);
    // The default reader reads the next poll into the same buffer: its earlier views change.
    const reused = setup().p;
    const a = must(reused.reader.byOffset(0, 4));
    const before = concat(a.batches.flatMap((b) => b.parts)).slice();
    must(reused.reader.byOffset(8, 4));
    expect(concat(a.batches.flatMap((b) => b.parts))).not.toEqual(before);
  });

  it('reads by offset from inside a batch, slicing without re-encoding the frames', () => {
    const { p } = setup();
    const poll = must(p.reader.byOffset(2, 3));
    expect(offsetsOf(poll)).toEqual([2, 3, 4]);
    expect(poll.batches.map((b) => b.sliced)).toEqual([true, true]);
    expect(poll.nextOffset).toBe(5);
    const whole = must(p.reader.byOffset(4, 4));
    expect(whole.batches.map((b) => b.sliced)).toEqual([false]);
    expect(whole.batches[0]?.parts.length).toBe(1);
  });

  it('straddles segment boundaries', () => {
    const { p } = setup();
    expect(p.log.segments.length).toBe(4);
    const poll = must(p.reader.byOffset(6, 14));
    expect(offsetsOf(poll)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(poll.messageCount).toBe(14);
    const all = must(p.reader.first(1000));
    expect(offsetsOf(all)).toEqual(Array.from({ length: 28 }, (_, i) => i));
  });

  it('first, last, next and counts', () => {
    const { p } = setup();
    expect(offsetsOf(must(p.reader.first(5)))).toEqual([0, 1, 2, 3, 4]);
    expect(offsetsOf(must(p.reader.last(6)))).toEqual([22, 23, 24, 25, 26, 27]);
    expect(offsetsOf(must(p.reader.last(100)))).toHaveLength(28);
    expect(offsetsOf(must(p.reader.next(27, 10)))).toEqual([27]);
    expect(must(p.reader.next(28, 10)).messageCount).toBe(0);
    expect(must(p.reader.byOffset(0, 0)).messageCount).toBe(0);
  });

  it('reads by timestamp: first batch with base_timestamp >= t', () => {
    const { p } = setup();
    expect(offsetsOf(must(p.reader.byTimestamp(0, 2)))).toEqual([0, 1]);
    expect(offsetsOf(must(p.reader.byTimestamp(300, 2)))).toEqual([8, 9]);
    expect(offsetsOf(must(p.reader.byTimestamp(301, 2)))).toEqual([12, 13]);
    expect(offsetsOf(must(p.reader.byTimestamp(700, 100)))).toEqual([24, 25, 26, 27]);
    expect(must(p.reader.byTimestamp(701, 5)).messageCount).toBe(0);
  });

  it('bounds the bytes read per poll (but always makes progress)', () => {
    const { p } = setup({ readAheadBytesMax: 2 * BATCH_4 + 10 });
    const poll = must(p.reader.first(1000));
    expect(poll.messageCount).toBe(8);
    const tiny = setup({ readAheadBytesMax: 1 }).p;
    expect(must(tiny.reader.byOffset(5, 100)).messageCount).toBe(3);
  });

  it('reads below the log start from the start; after retention the start moves', () => {
    const { p } = setup();
    must(p.log.deleteOldestSealed(1));
    expect(offsetsOf(must(p.reader.byOffset(0, 2)))).toEqual([8, 9]);
  });

  it('fails closed on a damaged batch (checksum), and skips the re-hash when validate_checksum is off', () => {
    const { disk, p } = setup();
    disk.corruptAtRest(`${DIR}/00000000000000000008.log`, 314);
    const r = p.reader.byOffset(8, 2);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ kind: 'corrupt_batch', segmentStart: 8, position: 0, offset: 8 });
    expect(p.reader.byOffset(0, 4).ok).toBe(true);
    const lax = PartitionStorage.open(disk, DIR, { segmentSize: 2 * BATCH_4, validateChecksum: false });
    if (!lax.ok) throw new Error('open');
    const laxRead = lax.value.reader.byOffset(8, 2);
    expect(laxRead.ok ? null : laxRead.error).toBeNull();
  });
});

describe('PartitionReader lendViews read buffers', () => {
  const bufferOf = (poll: Poll): ArrayBufferLike => (poll.batches[0]?.parts[0] as Uint8Array).buffer;

  it('are reused only after the poll is released, once however often it is released', () => {
    const { p } = setup({ lendViews: true, readAheadBytesMax: 4096 });
    const a = must(p.reader.byOffset(0, 4));
    const kept = concat(a.batches.flatMap((b) => b.parts)).slice();
    const b = must(p.reader.byOffset(8, 4));
    // Unreleased: b read into another buffer, a's bytes are intact.
    expect(bufferOf(b)).not.toBe(bufferOf(a));
    expect(concat(a.batches.flatMap((x) => x.parts))).toEqual(kept);
    a.release();
    a.release();
    const c = must(p.reader.byOffset(12, 4));
    const d = must(p.reader.byOffset(16, 4));
    // a's buffer went back once: c takes it, d (a second taker) does not share it with c.
    expect(bufferOf(c)).toBe(bufferOf(a));
    expect(bufferOf(d)).not.toBe(bufferOf(c));
    expect(offsetsOf(c)).toEqual([12, 13, 14, 15]);
    expect(offsetsOf(d)).toEqual([16, 17, 18, 19]);
  });

  it('one poll across segments carves one buffer; a first batch above the buffer size gets its own', () => {
    const { p } = setup({ lendViews: true, readAheadBytesMax: 4096 });
    const across = must(p.reader.byOffset(6, 8));
    const buffers = new Set(across.batches.flatMap((b) => b.parts).filter((part) => part.length > 256).map((part) => part.buffer));
    expect(buffers.size).toBe(1);
    const small = setup({ lendViews: true, readAheadBytesMax: 128 }).p;
    const big = must(small.reader.byOffset(0, 4));
    expect(offsetsOf(big)).toEqual([0, 1, 2, 3]);
    expect((big.batches[0]?.parts[0] as Uint8Array).buffer.byteLength).toBe(BATCH_4);
    big.release();
  });
});

describe('pollParts', () => {
  it('joins adjacent views of one read into one part, never copying, bytes unchanged', () => {
    const { p } = setup({ lendViews: true });
    const whole = must(p.reader.byOffset(0, 16));
    // Four whole records over two segments, read into one pooled buffer one after the other.
    expect(pollParts(whole)).toHaveLength(1);
    expect(pollParts(whole)[0]).toEqual(concat(whole.batches.flatMap((b) => b.parts)));
    const sliced = must(p.reader.byOffset(2, 6));
    // The slice's new header, then its frames and the next whole record (adjacent in the read).
    const parts = pollParts(sliced);
    expect(parts.map((part) => part.length)).toEqual([256, sliced.bytes - 256]);
    expect(concat(parts)).toEqual(concat(sliced.batches.flatMap((b) => b.parts)));
    expect(parts[1]?.buffer).toBe(sliced.batches[1]?.parts[0]?.buffer);
  });
});
