import {
  AckLevel, ErrorCode, Operation, buildBatch, createConsumerGroupCommand, joinConsumerGroupCommand, readBatchHeader,
  sendMessagesCommand, sliceBatch, storeConsumerOffsetCommand, deleteConsumerOffsetCommand, getConsumerOffsetCommand,
  pollMessagesCommand, stringIdentifier, xxh3_64,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import xxhash from 'xxhash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Hash32, type MessageLog, type MessageRead, PartitionState, admitOffsetWrite, admitSendMessages, choosePartition, consumerKey,
  encodeDeleteOffsetBody, encodeStoreOffsetBody, encodeTruncatePartition, offsetWriteBodyProblem, pollPartition, resolvePollStart, resolveTarget,
} from '../src/index.js';
import { Harness, id } from './harness.js';

function batchOf(count: number, seed = 1): Uint8Array {
  const b = buildBatch(Array.from({ length: count }, (_, i) => ({ id: BigInt(seed * 1000 + i), payload: Uint8Array.of(seed, i), originTimestamp: 1000n + BigInt(i) })));
  if (!b.ok) throw new Error(b.reason);
  return b.value;
}

const P = { streamId: 1, topicId: 2, partitionId: 3 };

describe('partition stamping, verify, truncate, repair', () => {
  it('the primary stamps at the dirty offset; journaling advances it; commit moves the committed offset', () => {
    const p = new PartitionState(P);
    const s1 = p.stamp(batchOf(3), { timestamp: 100n });
    if (!s1.ok) throw new Error(s1.reason);
    expect(readBatchHeader(s1.bytes)).toMatchObject({ baseOffset: 0n, baseTimestamp: 100n, partitionId: 3n });
    p.journaled(1n, s1.bytes);
    expect(p.dirtyOffset).toBe(3n);
    const s2 = p.stamp(batchOf(2), { timestamp: 101n });
    if (!s2.ok) throw new Error(s2.reason);
    expect(readBatchHeader(s2.bytes)?.baseOffset).toBe(3n);
    p.journaled(2n, s2.bytes);
    expect([p.nextOffset, p.dirtyOffset]).toEqual([0n, 5n]);
    const reply = p.apply(1n, Operation.SendMessages, s1.bytes, 100n);
    expect(reply.ok && sendMessagesCommand.decodeResponse(reply.payload)).toEqual({ ok: true, value: { confirmations: [{ streamId: 1, topicId: 2, partitionId: 3, baseOffset: 0n }] } });
    expect([p.nextOffset, p.currentOffset]).toEqual([3n, 2n]);
  });

  it('a backup verifies base offset, timestamp, partition and checksums; refuses empty batches', () => {
    const primary = new PartitionState(P);
    const backup = new PartitionState(P);
    const s = primary.stamp(batchOf(2), { timestamp: 50n });
    if (!s.ok) throw new Error(s.reason);
    expect(backup.verify(s.bytes, 50n)).toBeNull();
    expect(backup.verify(s.bytes, 51n)).toBe('base_timestamp_mismatch');
    backup.journaled(1n, s.bytes);
    expect(backup.verify(s.bytes, 50n)).toBe('base_offset_mismatch');
    // A hole's fill below the journal head keeps the primary's stamp; everything else is checked.
    expect(backup.verify(s.bytes, 50n, false)).toBeNull();
    expect(backup.verify(s.bytes, 51n, false)).toBe('base_timestamp_mismatch');
    // The frame bodies are re-hashed (no body seal protects a partition prepare in transit), and
    // the batch checksum binds the stored frame checksums and the header.
    const fresh = new PartitionState(P);
    const body = s.bytes.slice();
    body[body.length - 1] = (body[body.length - 1] as number) ^ 1;
    expect(fresh.verify(body, 50n)).toBe('frame_checksum_mismatch');
    const other = new PartitionState({ ...P, partitionId: 4 });
    expect(other.verify(s.bytes, 50n)).toBe('partition_id_mismatch');
  });

  it('view-change truncation rolls the dirty offset back to the surviving tail', () => {
    const p = new PartitionState(P);
    for (let op = 1n; op <= 4n; op++) {
      const s = p.stamp(batchOf(2), { timestamp: op });
      if (!s.ok) throw new Error(s.reason);
      p.journaled(op, s.bytes);
      if (op === 1n) p.apply(1n, Operation.SendMessages, s.bytes, 1n);
    }
    expect(p.dirtyOffset).toBe(8n);
    p.truncateFrom(3n);
    expect(p.dirtyOffset).toBe(4n);
    p.truncateFrom(2n);
    expect(p.dirtyOffset).toBe(2n);
    expect(() => p.truncateFrom(1n)).toThrow();
  });

  it('repaired batches keep their stamp and lift the dirty offset to cover them', () => {
    const server = new PartitionState(P);
    const stamped: Uint8Array[] = [];
    for (let op = 1n; op <= 3n; op++) {
      const s = server.stamp(batchOf(3), { timestamp: op });
      if (!s.ok) throw new Error(s.reason);
      server.journaled(op, s.bytes);
      stamped.push(s.bytes);
    }
    const lagging = new PartitionState(P);
    lagging.journaled(3n, stamped[2] as Uint8Array, 'repair');
    expect(lagging.dirtyOffset).toBe(9n);
    lagging.journaled(1n, stamped[0] as Uint8Array, 'repair');
    expect(lagging.dirtyOffset).toBe(9n);
    lagging.journaled(2n, stamped[1] as Uint8Array, 'repair');
    for (let op = 1n; op <= 3n; op++) lagging.apply(op, Operation.SendMessages, stamped[Number(op) - 1] as Uint8Array, op);
    expect([lagging.nextOffset, lagging.dirtyOffset]).toEqual([9n, 9n]);
  });

  it('a purge resets offsets; prepares journaled before it count for nothing', () => {
    const p = new PartitionState(P);
    const s = p.stamp(batchOf(2), { timestamp: 1n });
    if (!s.ok) throw new Error(s.reason);
    p.journaled(1n, s.bytes);
    p.offsets.set({ kind: 'consumer', key: 1 }, 1n);
    expect(p.observePurge(1n)).toBe(true);
    expect(p.observePurge(1n)).toBe(false);
    expect([p.nextOffset, p.dirtyOffset, p.offsets.get({ kind: 'consumer', key: 1 })]).toEqual([0n, 0n, undefined]);
    expect(p.apply(1n, Operation.SendMessages, s.bytes, 1n).ok).toBe(true);
    expect(p.nextOffset).toBe(0n);
    const t = p.stamp(batchOf(1), { timestamp: 2n });
    if (!t.ok) throw new Error(t.reason);
    expect(readBatchHeader(t.bytes)?.baseOffset).toBe(0n);
  });

  it('shadow model: random stamp / journal / commit / truncate sequences keep offsets contiguous', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const prng = new Prng(seed);
      const p = new PartitionState(P);
      const journal: { op: bigint; bytes: Uint8Array; count: number }[] = [];
      let op = 0n;
      let committed = 0n;
      let committedOffset = 0n;
      for (let i = 0; i < 300; i++) {
        const r = prng.below(10);
        if (r < 5) {
          const count = 1 + prng.below(4);
          const s = p.stamp(batchOf(count, i % 250), { timestamp: BigInt(i) });
          if (!s.ok) throw new Error(s.reason);
          op += 1n;
          p.journaled(op, s.bytes);
          journal.push({ op, bytes: s.bytes, count });
        } else if (r < 8 && journal.length > 0) {
          const next = journal.shift() as { op: bigint; bytes: Uint8Array; count: number };
          p.apply(next.op, Operation.SendMessages, next.bytes, 0n);
          committed = next.op;
          committedOffset += BigInt(next.count);
        } else if (journal.length > 0) {
          const cut = journal[prng.below(journal.length)] as { op: bigint };
          p.truncateFrom(cut.op);
          journal.splice(journal.findIndex((e) => e.op === cut.op));
          op = cut.op - 1n;
        }
        const uncommitted = journal.reduce((n, e) => n + BigInt(e.count), 0n);
        expect([p.nextOffset, p.dirtyOffset, p.lastAppliedOp]).toEqual([committedOffset, committedOffset + uncommitted, committed]);
      }
    }
  });
});

describe('consumer offsets and ack levels', () => {
  it('Quorum proposes a resolved body; NoAck applies locally; delete of a missing offset is ConsumerOffsetNotFound', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    h.createTopic(0, 't', 2);
    const h32: Hash32 = (b) => b.length;
    const store = storeConsumerOffsetCommand.encodeRequest({ consumer: { kind: 'consumer', id: id(7) }, streamId: id(0), topicId: id(0), partitionId: 1, offset: 5n, ack: AckLevel.Quorum });
    const admitted = admitOffsetWrite(h.state, 161, store, { userId: 0, client: 1n, h32 });
    if (admitted.kind !== 'propose') throw new Error(admitted.kind);
    expect(admitted.target).toMatchObject({ partitionId: 1, group: 1n, consumer: { kind: 'consumer', key: 7 } });
    const p = new PartitionState({ streamId: 0, topicId: 0, partitionId: 1 });
    expect(p.apply(1n, Operation.StoreConsumerOffset, admitted.body, 1n).ok).toBe(true);
    expect(getConsumerOffsetCommand.decodeResponse(p.consumerOffsetReply({ kind: 'consumer', key: 7 }))).toEqual({ ok: true, value: { partitionId: 1, currentOffset: 0n, storedOffset: 5n } });
    expect(p.consumerOffsetReply({ kind: 'consumer', key: 8 })).toEqual(new Uint8Array(0));
    const del = deleteConsumerOffsetCommand.encodeRequest({ consumer: { kind: 'consumer', id: id(8) }, streamId: id(0), topicId: id(0), partitionId: 1, ack: AckLevel.NoAck });
    const d = admitOffsetWrite(h.state, 162, del, { userId: 0, client: 1n, h32 });
    if (d.kind !== 'propose') throw new Error(d.kind);
    expect(d.ack).toBe(AckLevel.NoAck);
    expect(p.applyOffsetWriteLocally(Operation.DeleteConsumerOffset, d.body).code).toBe(ErrorCode.ConsumerOffsetNotFound);
    p.autoCommit({ kind: 'consumer', key: 7 }, 3n);
    expect(p.offsets.get({ kind: 'consumer', key: 7 })).toBe(5n);
    expect(p.apply(2n, Operation.TruncatePartition, encodeTruncatePartition({ streamId: id(0), topicId: id(0), partitionId: 1, upToOffset: 9n }), 2n).ok).toBe(true);
    expect(p.deletedUpToOffset).toBe(9n);
    const inner = Uint8Array.of(2, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
    const sealed = encodeStoreOffsetBody({ consumer: { kind: 'consumer_group', key: 3 }, offset: 1n });
    expect(sealed.subarray(0, 13)).toEqual(inner);
    expect(new DataView(sealed.buffer, sealed.byteOffset).getBigUint64(13, true)).toBe(xxh3_64(inner));
  });

  // Partition prepares carry no body seal in the header: the body's own seal is all that catches
  // a bit flipped in transit (the simulator found one committed).
  it('an offset-write body with any one bit flipped does not decode', () => {
    const bodies: [number, Uint8Array][] = [
      [Operation.StoreConsumerOffset, encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 0x1234_5678 }, offset: 99n })],
      [Operation.DeleteConsumerOffset, encodeDeleteOffsetBody({ kind: 'consumer_group', key: 7 })],
    ];
    for (const [operation, body] of bodies) {
      expect(offsetWriteBodyProblem(operation, body)).toBeNull();
      for (let bit = 0; bit < body.length * 8; bit++) {
        const flipped = body.slice();
        flipped[bit >> 3] = (flipped[bit >> 3] as number) ^ (1 << (bit & 7));
        expect(offsetWriteBodyProblem(operation, flipped)).not.toBeNull();
      }
      expect(offsetWriteBodyProblem(operation, body.subarray(0, body.length - 1))).not.toBeNull();
    }
    expect(offsetWriteBodyProblem(Operation.SendMessages, new Uint8Array(3))).toBeNull();
  });

  it('consumer groups resolve the partition from the member assignment; non-members cannot write', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    h.createTopic(0, 't', 2);
    h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g' }));
    const h32: Hash32 = () => 0;
    const group = { kind: 'consumer_group' as const, id: stringIdentifier('g') };
    expect(resolveTarget(h.state, group, id(0), id(0), null, { userId: 0, client: 5n, h32, requireMembership: true })).toMatchObject({ ok: false, code: 5006 });
    h.run(Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }), 0, 5n);
    const first = resolveTarget(h.state, group, id(0), id(0), null, { userId: 0, client: 5n, h32, requireMembership: true, groupCounter: 1 });
    expect(first).toMatchObject({ ok: true, value: { partitionId: 1, consumer: { kind: 'consumer_group', key: 0 } } });
  });
});

describe('partitioning', () => {
  let h32: Hash32 = () => 0;
  beforeAll(async () => {
    const api = await xxhash();
    h32 = (bytes) => api.h32Raw(bytes, 0);
  });

  it('messages key: XXH32 seed 0 of the key modulo the partition count, partitions in id order', () => {
    const keys = ['user-1', 'user-2', 'order-42', 'ключ', 'x'].map((k) => new TextEncoder().encode(k));
    const ids = [0, 1, 2, 3, 4, 5, 6];
    for (const key of keys) {
      const choice = choosePartition({ kind: 'messages_key', key }, ids, 0, h32);
      expect(choice).toMatchObject({ ok: true, partitionId: ids[(h32(key) >>> 0) % ids.length] });
    }
    // Known XXH32 value (seed 0) of "abc": 0x32D153FF.
    expect(h32(new TextEncoder().encode('abc')) >>> 0).toBe(0x32d153ff);
    expect(consumerKey(stringIdentifier('abc'), h32)).toBe(0x32d153ff);
  });

  it('balanced round-robins with the host counter; partition id must exist; no partitions is NoPartitions', () => {
    let counter = 0;
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const c = choosePartition({ kind: 'balanced' }, [0, 1, 2], counter, h32);
      if (!c.ok) throw new Error('no');
      seen.push(c.partitionId);
      counter = c.nextBalancedCounter;
    }
    expect(seen).toEqual([0, 1, 2, 0, 1]);
    expect(choosePartition({ kind: 'partition_id', partitionId: 5 }, [0, 1], 0, h32)).toEqual({ ok: false, code: ErrorCode.PartitionNotFound });
    expect(choosePartition({ kind: 'balanced' }, [], 0, h32)).toEqual({ ok: false, code: ErrorCode.NoPartitions });
  });

  it('SendMessages admission validates the batch and routes to the packed group', () => {
    const hs = Harness.withRoot();
    hs.createStream('s');
    hs.createTopic(0, 't', 3);
    const batch = batchOf(2);
    const body = sendMessagesCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitioning: { kind: 'messages_key', key: Uint8Array.of(1) }, messagesCount: 2, batch });
    const r = admitSendMessages(hs.state, body, 0, 0, h32);
    expect(r.kind).toBe('route');
    const wrongCount = sendMessagesCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitioning: { kind: 'balanced' }, messagesCount: 3, batch });
    expect(admitSendMessages(hs.state, wrongCount, 0, 0, h32)).toEqual({ kind: 'reject', status: ErrorCode.InvalidMessagesCount });
    const corrupt = batch.slice();
    corrupt[corrupt.length - 1] = (corrupt[corrupt.length - 1] as number) ^ 1;
    const bad = sendMessagesCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitioning: { kind: 'balanced' }, messagesCount: 2, batch: corrupt });
    expect(admitSendMessages(hs.state, bad, 0, 0, h32)).toEqual({ kind: 'reject', status: ErrorCode.InvalidMessageChecksum });
  });
});

/** An in-memory MessageLog over stamped batches (what storage will implement). */
class FakeLog implements MessageLog {
  batches: Uint8Array[] = [];
  first = 0n;
  firstOffset(): bigint | null {
    return this.lastOffset() === null ? null : this.first;
  }
  lastOffset(): bigint | null {
    const last = this.batches[this.batches.length - 1];
    if (last === undefined) return null;
    const h = readBatchHeader(last);
    return (h?.baseOffset ?? 0n) + BigInt(h?.messageCount ?? 0) - 1n;
  }
  offsetAtTimestamp(ts: bigint): bigint | null {
    for (const b of this.batches) {
      const h = readBatchHeader(b);
      if (h !== null && h.baseTimestamp >= ts) return h.baseOffset > this.first ? h.baseOffset : this.first;
    }
    return null;
  }
  read(from: bigint, count: number): MessageRead {
    const out: Uint8Array[] = [];
    let want = count;
    for (const b of this.batches) {
      const h = readBatchHeader(b);
      if (h === null || want === 0) continue;
      const end = h.baseOffset + BigInt(h.messageCount);
      if (end <= from) continue;
      const start = from > h.baseOffset ? Number(from - h.baseOffset) : 0;
      const take = Math.min(h.messageCount - start, want);
      const slice = start === 0 && take === h.messageCount ? b : sliceBatch(b, start, start + take);
      if (slice instanceof Uint8Array) out.push(slice);
      else if (slice.ok) out.push(slice.value);
      want -= take;
    }
    return { parts: out, messageCount: count - want };
  }
}

describe('poll', () => {
  function filled(): { p: PartitionState; log: FakeLog } {
    const p = new PartitionState(P);
    const log = new FakeLog();
    for (let op = 1n; op <= 4n; op++) {
      const s = p.stamp(batchOf(3, Number(op)), { timestamp: op * 100n });
      if (!s.ok) throw new Error(s.reason);
      p.journaled(op, s.bytes);
      p.apply(op, Operation.SendMessages, s.bytes, op * 100n);
      log.batches.push(s.bytes);
    }
    return { p, log };
  }
  const consumer = { kind: 'consumer' as const, key: 1 };

  it.each([
    ['offset 4', { kind: 'offset', value: 4n }, 5, 4n],
    ['timestamp 250', { kind: 'timestamp', value: 250n }, 2, 6n],
    ['first', { kind: 'first', value: 0n }, 2, 0n],
    ['last 4', { kind: 'last', value: 0n }, 4, 8n],
    ['next without stored offset', { kind: 'next', value: 0n }, 2, 0n],
  ] as const)('%s', (_name, strategy, count, from) => {
    const { log } = filled();
    expect(resolvePollStart(strategy, count, undefined, log)).toEqual({ kind: 'read', from });
  });

  it('next continues after the stored offset; past the end is empty; retention clamps up', () => {
    const { log } = filled();
    expect(resolvePollStart({ kind: 'next', value: 0n }, 1, 6n, log)).toEqual({ kind: 'read', from: 7n });
    expect(resolvePollStart({ kind: 'offset', value: 12n }, 1, undefined, log)).toEqual({ kind: 'empty' });
    log.first = 3n;
    expect(resolvePollStart({ kind: 'offset', value: 0n }, 1, undefined, log)).toEqual({ kind: 'read', from: 3n });
    expect(resolvePollStart({ kind: 'next', value: 0n }, 1, undefined, new FakeLog())).toEqual({ kind: 'empty' });
  });

  it('builds the reply from sliced batch records and auto-commits only on the primary', () => {
    const { p, log } = filled();
    const r = pollPartition(p, log, { consumer, strategy: { kind: 'offset', value: 4n }, count: 4, autoCommit: true }, false);
    if (!r.ok) throw new Error(String(r.code));
    expect(p.offsets.get(consumer)).toBeUndefined();
    const decoded = pollMessagesCommand.decodeResponse(r.reply.payload());
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value).toMatchObject({ partitionId: 3, currentOffset: 11n, messagesCount: 4 });
    expect(r.reply.batches.map((b) => readBatchHeader(b)?.messageCount)).toEqual([2, 2]);
    const primary = pollPartition(p, log, { consumer, strategy: { kind: 'next', value: 0n }, count: 5, autoCommit: true }, true);
    expect(primary.ok && primary.reply.lastOffset).toBe(4n);
    expect(p.offsets.get(consumer)).toBe(4n);
    const again = pollPartition(p, log, { consumer, strategy: { kind: 'next', value: 0n }, count: 2, autoCommit: true }, true);
    expect(again.ok && again.reply.lastOffset).toBe(6n);
    expect(pollPartition(p, log, { consumer, strategy: { kind: 'first', value: 0n }, count: 0, autoCommit: false }, true)).toEqual({ ok: false, code: ErrorCode.InvalidMessagesCount });
  });
});
