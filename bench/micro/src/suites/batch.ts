import nodeRs from '@node-rs/xxhash';
import { xxh3_64 } from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import {
  FrameCursor,
  buildBatch,
  sliceBatchParts,
  stampBatch,
  validateBatch,
  type BatchMessage,
} from '@shoal/protocol';
import { measureCases, row, throughputRatio } from '../measure.js';
import type { Suite } from '../suite.js';

const MESSAGES = 1000;
const PAYLOAD = 1024;
const TARGET_RATIO = 0.5;

/**
 * Admission validation of a 1,000 × 1 KiB batch against the floor it cannot beat: XXH3 over the
 * same 1,000 frame ranges (bytes 8..end of each frame), nothing else. The ratio is validation
 * throughput over raw hashing throughput, from interleaved rounds of the same run.
 */
const suite: Suite = {
  name: 'batch',
  description: `batch admission, ${MESSAGES} × ${PAYLOAD} B messages, vs raw XXH3 over the same frame ranges`,
  run(settings) {
    const prng = new Prng(7);
    const messages: BatchMessage[] = Array.from({ length: MESSAGES }, (_, i) => ({
      id: prng.u128(),
      payload: prng.bytes(PAYLOAD),
      originTimestamp: 1_700_000_000_000_000n + BigInt(i * 10),
    }));
    const built = buildBatch(messages);
    if (!built.ok) throw new Error(built.reason);
    const batch = built.value;
    const verdict = validateBatch(batch);
    if (!verdict.ok) throw new Error(verdict.reason);

    const starts = new Int32Array(MESSAGES);
    const ends = new Int32Array(MESSAGES);
    const cursor = new FrameCursor(batch);
    while (cursor.next()) {
      starts[cursor.index] = cursor.start + 8;
      ends[cursor.index] = cursor.end;
    }
    let hashed = 0;
    for (let i = 0; i < MESSAGES; i++) hashed += (ends[i] as number) - (starts[i] as number);
    const oneShot = nodeRs.xxh3.xxh64;
    const stampTarget = batch.slice();

    const rows = measureCases(
      [
        { name: 'validateBatch', op: () => validateBatch(batch), bytesPerOp: hashed },
        {
          name: 'raw xxh3_64 over frame ranges',
          op: () => {
            let last = 0n;
            for (let i = 0; i < MESSAGES; i++) last = xxh3_64(batch.subarray(starts[i] as number, ends[i] as number));
            return last;
          },
          bytesPerOp: hashed,
        },
        {
          name: 'raw node-rs one-shot over ranges',
          op: () => {
            let last = 0n;
            for (let i = 0; i < MESSAGES; i++) last = oneShot(batch.subarray(starts[i] as number, ends[i] as number));
            return last;
          },
          bytesPerOp: hashed,
        },
        { name: 'stampBatch (walk + batch checksum)', op: () => stampBatch(stampTarget, { partitionId: 1n, baseOffset: 2n, baseTimestamp: 3n }) },
        { name: 'sliceBatchParts [100, 600)', op: () => sliceBatchParts(batch, 100, 600) },
        {
          name: 'FrameCursor walk (1,000 frames)',
          op: () => {
            const c = new FrameCursor(batch);
            let sum = 0;
            while (c.next()) sum += c.payloadLength;
            return sum;
          },
        },
        { name: 'buildBatch 1,000 × 1 KiB', op: () => buildBatch(messages), bytesPerOp: batch.length },
      ],
      settings,
    );
    const ratio = throughputRatio(row(rows, 'validateBatch'), row(rows, 'raw xxh3_64 over frame ranges'));
    const nativeRatio = throughputRatio(row(rows, 'validateBatch'), row(rows, 'raw node-rs one-shot over ranges'));
    return {
      rows,
      notes: [
        `admission / raw xxh3_64 throughput = ${ratio.toFixed(2)} (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'})`,
        `admission / raw node-rs one-shot throughput = ${nativeRatio.toFixed(2)}`,
        `batch ${batch.length} bytes, ${hashed} bytes hashed per validation`,
      ],
    };
  },
};

export default suite;
