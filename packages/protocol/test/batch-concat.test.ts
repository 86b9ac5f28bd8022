import { describe, expect, it } from 'vitest';
import { Prng, fromHex, toHex } from '@shoal/stdx';
import { BATCH_HEADER, concatBatches, stampBatch, validateBatch } from '../src/batch/index.js';
import { batchVector, mustBuild, randomMessages, vectorMessages } from './batch-fixtures.js';

/**
 * Group commit joins queued SendMessages batches into one prepare body: the result must be
 * exactly the batch one producer would have built from all the messages, so every backup (and
 * the reference server) takes it as an ordinary batch.
 */
describe('concatBatches', () => {
  it('joins the vectors into the batch buildBatch makes of all their messages, byte for byte', () => {
    // A stamped input joins like its producer form: the stamp fields are the server's, not kept.
    const a = batchVector('producer_batch');
    const b = batchVector('server_stamped_batch');
    for (const order of [[a, b], [b, a, a]]) {
      const joined = concatBatches(order.map((v) => fromHex(v.hex)));
      expect(joined.ok).toBe(true);
      if (!joined.ok) continue;
      const expected = mustBuild(order.flatMap((v) => vectorMessages(v)));
      expect(toHex(joined.value.bytes)).toBe(toHex(expected));
      expect(joined.value.starts).toEqual(order.map((_, i) => 3 * i));
      const verdict = validateBatch(joined.value.bytes, { offsetDeltas: 'index' });
      expect(verdict.ok).toBe(true);
    }
  });

  it('random batches: the same bytes as one build of all the messages; the result stamps and validates', () => {
    const prng = new Prng(77);
    for (let round = 0; round < 40; round++) {
      const groups = Array.from({ length: 1 + prng.below(6) }, () => randomMessages(prng, 1 + prng.below(8)));
      const batches = groups.map((g) => mustBuild(g));
      const joined = concatBatches(batches);
      expect(joined.ok).toBe(true);
      if (!joined.ok) continue;
      expect(toHex(joined.value.bytes)).toBe(toHex(mustBuild(groups.flat())));
      let start = 0;
      expect(joined.value.starts).toEqual(groups.map((g) => {
        const at = start;
        start += g.length;
        return at;
      }));
      const stamped = joined.value.bytes.slice();
      expect(stampBatch(stamped, { partitionId: 3n, baseOffset: 1000n, baseTimestamp: 5n }).ok).toBe(true);
      const verdict = validateBatch(stamped, { offsetDeltas: 'index' });
      expect(verdict.ok && verdict.value.messageCount).toBe(groups.flat().length);
    }
  });

  it('refuses origins more than a u32 of microseconds apart, and inputs that are not batches', () => {
    const prng = new Prng(5);
    const early = mustBuild(randomMessages(prng, 2));
    const late = mustBuild(randomMessages(prng, 2)).slice();
    const origin = new DataView(late.buffer).getBigUint64(BATCH_HEADER.originTimestamp.offset, true);
    const far = mustBuild(randomMessages(prng, 1).map((m) => ({ ...m, originTimestamp: origin + 0x1_0000_0000n * 2n })));
    expect(concatBatches([early, far])).toEqual({ ok: false, reason: 'timestamp_span_too_large' });
    // The vectors' single message is stamped at origin 5 µs, the others at 1.7e15 µs.
    const single = fromHex(batchVector('single_message_batch').hex);
    expect(concatBatches([fromHex(batchVector('producer_batch').hex), single])).toEqual({ ok: false, reason: 'timestamp_span_too_large' });
    expect(concatBatches([early, early.subarray(0, 100)])).toEqual({ ok: false, reason: 'batch_malformed' });
    expect(concatBatches([early, early.subarray(0, early.length - 1)])).toEqual({ ok: false, reason: 'batch_malformed' });
  });
});
