import { buildBatch, encodeUserHeaders, sliceBatch, stampBatch } from '@shoal/protocol';
import { describe, expect, it } from 'vitest';
import {
  BalancedPartitioner, ShoalInvalidArgumentError, ShoalProtocolError, decodePolledMessages, encodeMessageHeaders, loadXxh32,
  partitionForKey, partitionForKeySync, toBatchMessages,
} from '../src/index.js';

describe('client-side partitioning', () => {
  it('XXH32 seed 0 of the key bytes, mod the partition count (the reference server function)', async () => {
    const hash = await loadXxh32();
    // Reference XXH32 values (seed 0): "abc" = 0x32D153FF, "Nobody inspects the spammish repetition" = 0xE2293B2F.
    expect(hash(new TextEncoder().encode('abc'))).toBe(0x32d153ff);
    expect(hash(new TextEncoder().encode('Nobody inspects the spammish repetition'))).toBe(0xe2293b2f);
    expect(await partitionForKey('abc', 7)).toBe(0x32d153ff % 7);
    expect(partitionForKeySync(Uint8Array.of(0x61, 0x62, 0x63), 3)).toBe(0x32d153ff % 3);
    expect(() => partitionForKeySync('', 3)).toThrow(ShoalInvalidArgumentError);
    expect(() => partitionForKeySync('x'.repeat(256), 3)).toThrow(ShoalInvalidArgumentError);
  });

  it('balanced is round robin and follows a changing partition count', () => {
    const p = new BalancedPartitioner();
    expect([3, 3, 3, 3].map((n) => p.next(n))).toEqual([0, 1, 2, 0]);
    expect([2, 2].map((n) => p.next(n))).toEqual([1, 0]);
  });
});

describe('messages on the wire', () => {
  it('headers: shorthands and typed values, key order kept', () => {
    const block = encodeMessageHeaders([['b', 'text'], ['a', true], ['n', { kind: 'uint32', value: 7 }], ['r', Uint8Array.of(1, 2)]]);
    const expected = encodeUserHeaders([
      { keyKind: 2, key: new TextEncoder().encode('b'), valueKind: 2, value: new TextEncoder().encode('text') },
      { keyKind: 2, key: new TextEncoder().encode('a'), valueKind: 3, value: Uint8Array.of(1) },
      { keyKind: 2, key: new TextEncoder().encode('n'), valueKind: 11, value: Uint8Array.of(7, 0, 0, 0) },
      { keyKind: 2, key: new TextEncoder().encode('r'), valueKind: 1, value: Uint8Array.of(1, 2) },
    ]);
    expect(block).toEqual(expected);
    expect(() => encodeMessageHeaders({ k: '' })).toThrow(ShoalInvalidArgumentError);
  });

  it('decodes several batch records, including a server slice, with absolute offsets and times', () => {
    const opts = { randomId: () => 9n, nowMicros: () => 1000n };
    const first = buildBatch(toBatchMessages([{ payload: 'a', originTimestamp: 100n }, { payload: 'b', originTimestamp: 150n, headers: { h: 'v' } }], opts));
    const second = buildBatch(toBatchMessages([{ payload: 'c' }, { payload: 'd' }, { payload: 'e' }], opts));
    if (!first.ok || !second.ok) throw new Error('build');
    stampBatch(first.value, { partitionId: 2n, baseOffset: 10n, baseTimestamp: 5000n });
    stampBatch(second.value, { partitionId: 2n, baseOffset: 12n, baseTimestamp: 6000n });
    const slice = sliceBatch(second.value, 1, 3);
    if (!slice.ok) throw new Error('slice');
    const records = new Uint8Array(first.value.length + slice.value.length);
    records.set(first.value);
    records.set(slice.value, first.value.length);
    const messages = decodePolledMessages({ partitionId: 2, currentOffset: 14n, messagesCount: 4, batches: records });
    expect(messages.map((m) => [m.offset, new TextDecoder().decode(m.payload), m.timestamp])).toEqual([
      [10n, 'a', 5000n], [11n, 'b', 5000n], [13n, 'd', 6000n], [14n, 'e', 6000n],
    ]);
    expect(messages[1]?.originTimestamp).toBe(150n);
    expect(messages[1]?.headers).toEqual({ h: { kind: 'string', value: 'v' } });
    expect(messages[0]?.id).toBe(9n);

    const corrupt = records.slice();
    corrupt[first.value.length - 1] = (corrupt[first.value.length - 1] as number) ^ 0xff;
    expect(() => decodePolledMessages({ partitionId: 2, currentOffset: 14n, messagesCount: 4, batches: corrupt })).toThrow(ShoalProtocolError);
    expect(decodePolledMessages({ partitionId: 2, currentOffset: 14n, messagesCount: 4, batches: corrupt }, { verifyChecksums: false })).toHaveLength(4);
  });
});
