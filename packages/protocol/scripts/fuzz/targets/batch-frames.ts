import type { FuzzTarget } from '../target.js';
import { batchSeeds, fingerprint } from './batch-validate.js';
import { FrameCursor, batchChecksumInput, readBatchHeader } from '../../../src/batch/index.js';

/**
 * Zero-copy iteration and the checksum-input builder over arbitrary bytes: they must stay inside
 * the view and agree with each other on where the frames are.
 */
const target: FuzzTarget = {
  name: 'batch-frames',
  seeds: (prng) => batchSeeds(prng),
  run(input) {
    const cursor = new FrameCursor(input);
    const parts: string[] = [];
    let payloadBytes = 0;
    while (cursor.next()) {
      if (cursor.payloadStart + cursor.payloadLength + cursor.userHeadersLength !== cursor.end) throw new Error('frame bounds');
      if (cursor.payload().length !== cursor.payloadLength) throw new Error('payload view length');
      payloadBytes += cursor.payloadLength;
      if (parts.length < 8) parts.push(`${cursor.offsetDelta}/${cursor.timestampDelta}/${cursor.id() & 0xffffn}/${fingerprint(cursor.userHeaders())}`);
    }
    const header = readBatchHeader(input);
    const input44 = batchChecksumInput(input);
    const checksumInput = input44.ok ? fingerprint(input44.value) : input44.reason;
    if (input44.ok && header !== null && input44.value.length !== 44 + 8 * header.messageCount) throw new Error('checksum input size');
    return `${cursor.reason ?? 'ok'}:${cursor.index + 1}:${payloadBytes}:${parts.join(',')}:${checksumInput}`;
  },
};

export default target;
