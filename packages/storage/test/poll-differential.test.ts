/**
 * Poll replies served from the stored bytes (record digest check, slices as a new header and a
 * view of the frames) against a REFERENCE that decodes every message of the stored batches and
 * assembles the reply from the spec (messages.mdx): per stored batch touched, its first 32
 * header bytes, `batch_length = 256 + frames`, `message_count`, `batch_checksum` = XXH3 of the
 * header fields and the kept frames' checksums, the frames. Random batches (user headers, empty
 * payloads), polls from inside a batch, count and byte limits, segment boundaries, empty results;
 * the same polls on a reopened log (index from disk: every record verified frame by frame first).
 */
import { describe, expect, it } from 'vitest';
import {
  BATCH_HEADER, BATCH_HEADER_SIZE, FrameCursor, MESSAGE_FRAME_HEADER_SIZE, buildBatch, encodeUserHeaders, stampBatch,
  xxh3_64, type BatchMessage,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { PartitionStorage, SimDisk, pollParts, type PartitionStorageOptions, type Poll } from '../src/index.js';
import { concat, makeBatch, must } from './support/fixtures.js';

const DIR = '/p';

interface StoredMessage {
  readonly offset: number;
  /** The frame exactly as stored (header, payload, user headers). */
  readonly frame: Uint8Array;
  /** The stored batch's first 32 header bytes (partition, base offset, base and origin timestamps). */
  readonly batchFields: Uint8Array;
  readonly batch: number;
}

function randomBatch(prng: Prng, base: number, count: number): Uint8Array {
  const messages: BatchMessage[] = Array.from({ length: count }, (_, i) => {
    const headers = prng.chance(1, 2)
      ? encodeUserHeaders(Array.from({ length: prng.range(1, 3) }, () => ({
        keyKind: 2, key: prng.bytes(prng.range(1, 12)), valueKind: prng.range(1, 15), value: prng.bytes(prng.range(1, 40)),
      })))
      : undefined;
    return {
      id: prng.u64() << 64n | BigInt(base + i),
      payload: prng.bytes(prng.chance(1, 8) ? 0 : prng.range(1, 400)),
      ...(headers === undefined ? {} : { userHeaders: headers }),
      originTimestamp: 1_700_000_000_000_000n + BigInt(prng.range(0, 1_000_000)),
    };
  });
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  const stamped = stampBatch(built.value, { partitionId: 3n, baseOffset: BigInt(base), baseTimestamp: BigInt(2_000_000 + base) });
  if (!stamped.ok) throw new Error(stamped.reason);
  return built.value;
}

/** Every message of `batches` decoded: what the reference assembles replies from. */
function decodeAll(batches: readonly Uint8Array[]): StoredMessage[] {
  const out: StoredMessage[] = [];
  batches.forEach((bytes, batch) => {
    const base = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(BATCH_HEADER.baseOffset.offset, true));
    const cursor = new FrameCursor(bytes);
    let at = BATCH_HEADER_SIZE;
    while (cursor.next()) {
      const length = MESSAGE_FRAME_HEADER_SIZE + cursor.payload().length + cursor.userHeaders().length;
      out.push({ offset: base + cursor.offsetDelta, frame: bytes.subarray(at, at + length), batchFields: bytes.subarray(0, 32), batch });
      at += length;
    }
    expect(cursor.reason).toBeNull();
  });
  return out;
}

/** The reply's batch bytes for messages [from, from + count) as the spec assembles them. */
function reference(messages: readonly StoredMessage[], from: number, count: number): Uint8Array {
  const wanted = messages.filter((m) => m.offset >= from).slice(0, count);
  const groups: StoredMessage[][] = [];
  for (const m of wanted) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last[0]?.batch === m.batch) last.push(m);
    else groups.push([m]);
  }
  return concat(groups.map((group) => {
    const frames = concat(group.map((m) => m.frame));
    const header = new Uint8Array(BATCH_HEADER_SIZE);
    const view = new DataView(header.buffer);
    header.set(group[0]?.batchFields as Uint8Array, 0);
    view.setBigUint64(BATCH_HEADER.batchLength.offset, BigInt(BATCH_HEADER_SIZE + frames.length), true);
    view.setUint32(BATCH_HEADER.messageCount.offset, group.length, true);
    const input = concat([header.subarray(0, 40), header.subarray(48, 52), ...group.map((m) => m.frame.subarray(0, 8))]);
    view.setBigUint64(BATCH_HEADER.batchChecksum.offset, xxh3_64(input), true);
    return concat([header, frames]);
  }));
}

function open(disk: SimDisk, options: Partial<PartitionStorageOptions>): PartitionStorage {
  const opened = PartitionStorage.open(disk, DIR, { segmentSize: 6_000, lendViews: true, ...options });
  if (!opened.ok) throw new Error('open');
  return opened.value;
}

const replied = (poll: Poll): Uint8Array => concat(poll.batches.flatMap((b) => b.parts));

describe('poll replies from stored bytes', () => {
  it('equal the decode-and-assemble reference for random batches, polls and limits, before and after a reopen', () => {
    const prng = new Prng(13);
    const disk = new SimDisk({ seed: 13 });
    const storage = open(disk, {});
    const batches: Uint8Array[] = [];
    let pending: Uint8Array[] = [];
    let next = 0;
    for (let i = 0; i < 40; i++) {
      const count = prng.range(1, 12);
      pending.push(randomBatch(prng, next, count));
      next += count;
      // Commit steps of one to a few batches (one gathered write each).
      if (prng.chance(1, 3) || i === 39) {
        must(storage.log.append(pending));
        batches.push(...pending);
        pending = [];
      }
    }
    expect(storage.log.nextOffset).toBe(next);
    expect(storage.log.segments.length).toBeGreaterThan(3);
    const messages = decodeAll(batches);
    const polls = Array.from({ length: 60 }, () => ({ from: prng.range(0, next + 3), count: prng.range(1, 60) }));
    polls.push({ from: next, count: 5 }, { from: next + 100, count: 1 }, { from: 0, count: 10_000 });
    const check = (s: PartitionStorage): void => {
      for (const { from, count } of polls) {
        const poll = must(s.reader.byOffset(from, count));
        const expected = reference(messages, from, count);
        // Buffer.equals: vitest's toEqual walks a Uint8Array element by element (slow at this size).
        expect(Buffer.from(replied(poll)).equals(expected), `poll ${from} × ${count}`).toBe(true);
        expect(Buffer.from(concat(pollParts(poll))).equals(expected), `joined parts ${from} × ${count}`).toBe(true);
        expect(poll.messageCount).toBe(messages.filter((m) => m.offset >= from).slice(0, count).length);
      }
    };
    check(storage);
    // Appended by this process: every record re-verified by its digest alone.
    expect(storage.reader.fullChecks).toBe(0);
    storage.close();

    const reopened = open(disk, {});
    check(reopened);
    // The index came from disk: each record checked frame by frame once (at most), then by digest.
    const slow = reopened.reader.fullChecks;
    expect(slow).toBeGreaterThan(0);
    expect(slow).toBeLessThanOrEqual(batches.length);
    check(reopened);
    expect(reopened.reader.fullChecks).toBe(slow);

    // A byte bound cuts whole batches, never the first: the reference of what was returned.
    const bounded = open(disk, { readAheadBytesMax: 1_500 });
    for (const { from, count } of polls.slice(0, 40)) {
      const poll = must(bounded.reader.byOffset(from, count));
      expect(Buffer.from(replied(poll)).equals(reference(messages, from, poll.messageCount))).toBe(true);
    }
  });

  it('fails closed when the bytes at rest are another valid batch (same offsets, other payloads)', () => {
    const disk = new SimDisk({ seed: 5 });
    const storage = open(disk, { segmentSize: 1 << 20 });
    must(storage.log.append([makeBatch(0, 4), makeBatch(4, 4)]));
    const other = makeBatch(4, 4, 64, 1_000_004, 99);
    const original = replied(must(storage.reader.byOffset(4, 4)));
    expect(other.length).toBe(original.length);
    expect(other).not.toEqual(original);
    const fd = disk.open(`${DIR}/00000000000000000000.log`, 'readwrite');
    disk.write(fd, other, 0, other.length, makeBatch(0, 4).length);
    disk.fsync(fd);
    disk.close(fd);
    const r = storage.reader.byOffset(4, 4);
    expect(r.ok ? null : r.error).toMatchObject({ kind: 'corrupt_batch', reason: 'record_digest_mismatch', offset: 4 });
    // Without the digest (a reopen), the misdirected batch is self-consistent: served as it is.
    expect(replied(must(open(disk, { segmentSize: 1 << 20 }).reader.byOffset(4, 4)))).toEqual(other);
  });
});
