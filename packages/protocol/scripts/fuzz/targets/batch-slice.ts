import { Prng } from '@shoal/stdx';
import type { FuzzTarget } from '../target.js';
import { xxh3_64 } from '../../../src/hash/xxh3.js';
import { batchSeeds, fingerprint } from './batch-validate.js';
import { FrameCursor, sliceBatch, sliceBatchParts, stampBatch, validateBatch } from '../../../src/batch/index.js';

/**
 * Slicing, on inputs RESEALED first (every frame checksum and the batch checksum recomputed over
 * the mutated bytes, where the structure allows), so mutations of lengths, counts and deltas
 * reach the structural rules and the slicer instead of dying at a checksum. Every slice of an
 * accepted batch must validate as `contiguous`, keep the stored base fields and carry the same
 * frame bytes.
 */
const target: FuzzTarget = {
  name: 'batch-slice',
  seeds: (prng) => batchSeeds(prng),
  run(input) {
    const bytes = input.slice();
    reseal(bytes);
    const verdict = validateBatch(bytes, { offsetDeltas: 'contiguous' });
    if (!verdict.ok) {
      const parts = sliceBatchParts(bytes, 0, 1);
      return `${verdict.reason}:${verdict.frameIndex}:${parts.ok ? 'sliceable' : parts.reason}`;
    }
    const count = verdict.value.messageCount;
    const prng = new Prng(BigInt(count) * 0x1_0000_0000n + BigInt(bytes.length));
    const out: string[] = [];
    for (let k = 0; k < Math.min(6, (count * (count + 1)) / 2); k++) {
      const from = prng.below(count);
      const to = from + 1 + prng.below(count - from);
      const slice = sliceBatch(bytes, from, to);
      if (!slice.ok) throw new Error(`slice [${from}, ${to}) of an accepted batch: ${slice.reason}`);
      const sliced = validateBatch(slice.value, { offsetDeltas: 'contiguous' });
      if (!sliced.ok) throw new Error(`slice [${from}, ${to}) does not validate: ${sliced.reason}`);
      if (sliced.value.baseOffset !== verdict.value.baseOffset || sliced.value.originTimestamp !== verdict.value.originTimestamp) {
        throw new Error('slice lost the stored base fields');
      }
      if (sliced.value.firstOffsetDelta !== verdict.value.firstOffsetDelta + from) throw new Error('slice offsets do not resolve');
      out.push(`${from}-${to}:${fingerprint(slice.value)}`);
    }
    return `ok:${count}:${out.join(',')}`;
  },
};

/** Recomputes each frame checksum the cursor can reach, then the batch checksum (in place). */
function reseal(bytes: Uint8Array): void {
  const cursor = new FrameCursor(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (cursor.next()) view.setBigUint64(cursor.start, xxh3_64(bytes.subarray(cursor.start + 8, cursor.end)), true);
  if (bytes.length >= 256) {
    stampBatch(bytes, {
      partitionId: view.getBigUint64(0, true),
      baseOffset: view.getBigUint64(8, true),
      baseTimestamp: view.getBigUint64(16, true),
    });
  }
}

export default target;
