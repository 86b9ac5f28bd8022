import type { Prng } from '@shoal/stdx';
import type { FuzzTarget } from '../target.js';
import { buildBatch, forEachFrame, stampBatch, validateBatch, type BatchMessage } from '../../../src/batch/index.js';

/**
 * Admission validation of untrusted batch bytes. Beyond "never throws, never over-reads": an
 * accepted batch must also pass the weaker `contiguous` rule, iterate to exactly `message_count`
 * frames, and stay valid after stamping.
 */
const target: FuzzTarget = {
  name: 'batch-validate',
  seeds: (prng) => batchSeeds(prng),
  run(input) {
    const verdict = validateBatch(input);
    if (!verdict.ok) return `${verdict.reason}:${verdict.frameIndex}`;
    const summary = verdict.value;
    if (!validateBatch(input, { offsetDeltas: 'contiguous' }).ok) throw new Error('accepted as index but not as contiguous');
    const walked = forEachFrame(input, () => undefined);
    if (!walked.ok || walked.value !== summary.messageCount) throw new Error('cursor disagrees with validateBatch');
    const copy = input.slice();
    const stamped = stampBatch(copy, { partitionId: 7n, baseOffset: 1n << 40n, baseTimestamp: 5n });
    if (!stamped.ok) throw new Error(`stamping an accepted batch failed: ${stamped.reason}`);
    const restamped = validateBatch(copy);
    if (!restamped.ok || restamped.value.messageCount !== summary.messageCount) throw new Error('stamped batch invalid');
    return `ok:${summary.messageCount}:${summary.batchLength}:${summary.batchChecksum}:${summary.lastTimestampDelta}`;
  },
};

export default target;

/** Well-formed batches for the batch targets: 1..6 small messages, about half of them stamped. */
export function batchSeeds(prng: Prng, count = 24): Uint8Array[] {
  const seeds: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const messages: BatchMessage[] = [];
    const base = BigInt(prng.u32()) * 1_000_000n;
    for (let m = 1 + prng.below(6); m > 0; m--) {
      messages.push({
        id: prng.u128(),
        payload: prng.bytes(prng.below(48)),
        userHeaders: prng.chance(1, 3) ? prng.bytes(prng.below(20)) : new Uint8Array(0),
        originTimestamp: base + BigInt(prng.below(1 << 30)),
      });
    }
    const built = buildBatch(messages);
    if (!built.ok) throw new Error(`seed batch: ${built.reason}`);
    if (prng.bool()) {
      const stamped = stampBatch(built.value, { partitionId: BigInt(prng.below(64)), baseOffset: prng.u64() >> 8n, baseTimestamp: base });
      if (!stamped.ok) throw new Error(`seed stamp: ${stamped.reason}`);
    }
    seeds.push(built.value);
  }
  return seeds;
}

/** FNV-1a of a byte range (summaries: a short deterministic fingerprint of bytes). */
export function fingerprint(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}
