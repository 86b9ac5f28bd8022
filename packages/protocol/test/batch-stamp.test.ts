import { describe, expect, it } from 'vitest';
import { AssertionError, Prng, fromHex, toHex } from '@shoal/stdx';
import { stampBatch, validateBatch } from '../src/batch/index.js';
import { batchVector, mustBuild, randomMessages } from './batch-fixtures.js';

describe('stampBatch', () => {
  it('turns producer_batch into server_stamped_batch in place', () => {
    const stamped = batchVector('server_stamped_batch');
    const bytes = fromHex(batchVector('producer_batch').hex);
    const verdict = stampBatch(bytes, {
      partitionId: BigInt(stamped.header['partition_id'] as string),
      baseOffset: BigInt(stamped.header['base_offset'] as string),
      baseTimestamp: BigInt(stamped.header['base_timestamp'] as string),
    });
    expect(verdict).toEqual({ ok: true, value: BigInt(stamped.header['batch_checksum'] as string) });
    expect(toHex(bytes)).toBe(stamped.hex);
  });

  it('changes only bytes 0..24 and 40..48; the result validates; restamping is repeatable', () => {
    const prng = new Prng(21);
    for (let round = 0; round < 50; round++) {
      const original = mustBuild(randomMessages(prng, 1 + prng.below(10)));
      const bytes = original.slice();
      const stamp = { partitionId: prng.u64(), baseOffset: prng.u64(), baseTimestamp: prng.u64() };
      const first = stampBatch(bytes, stamp);
      expect(first.ok).toBe(true);
      for (let i = 0; i < bytes.length; i++) {
        if ((i >= 0 && i < 24) || (i >= 40 && i < 48)) continue;
        expect(bytes[i], `byte ${i}`).toBe(original[i]);
      }
      const verdict = validateBatch(bytes);
      expect(verdict.ok).toBe(true);
      if (verdict.ok) expect(verdict.value).toMatchObject(stamp);
      expect(stampBatch(bytes, stamp)).toEqual(first);
      expect(stampBatch(bytes, { partitionId: 0n, baseOffset: 0n, baseTimestamp: 0n }).ok).toBe(true);
      expect(toHex(bytes)).toBe(toHex(original));
    }
  });

  it('leaves a malformed batch untouched and says why', () => {
    const bytes = fromHex(batchVector('producer_batch').hex);
    new DataView(bytes.buffer).setUint32(48, 4, true);
    const before = toHex(bytes);
    expect(stampBatch(bytes, { partitionId: 1n, baseOffset: 2n, baseTimestamp: 3n })).toMatchObject({
      ok: false,
      reason: 'message_count_mismatch',
    });
    expect(toHex(bytes)).toBe(before);
    expect(stampBatch(new Uint8Array(10), { partitionId: 1n, baseOffset: 2n, baseTimestamp: 3n })).toMatchObject({
      reason: 'batch_too_short',
    });
  });

  it('asserts on stamp values that are not u64 (a server bug, not input)', () => {
    const bytes = fromHex(batchVector('producer_batch').hex);
    expect(() => stampBatch(bytes, { partitionId: -1n, baseOffset: 0n, baseTimestamp: 0n })).toThrow(AssertionError);
    expect(() => stampBatch(bytes, { partitionId: 0n, baseOffset: 1n << 64n, baseTimestamp: 0n })).toThrow(AssertionError);
  });
});
