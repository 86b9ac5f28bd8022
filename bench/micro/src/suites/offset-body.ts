import { xxh3_64 } from '@shoal/protocol';
import { decodeStoreOffsetBody, encodeStoreOffsetBody } from '@shoal/state';
import { measureCases, row } from '../measure.js';
import type { Suite } from '../suite.js';

/**
 * The consumer-offset write body seal (docs/state-partition.md): a replica decodes a 161 body
 * (and so checks its seal) at verify, at apply and when it queues the offset file write. Measured:
 * the sealed encode and decode, against the one XXH3-64 of the 13 bytes the seal costs each.
 */
const suite: Suite = {
  name: 'offset-body',
  description: 'StoreConsumerOffset body: sealed encode / decode vs the seal hash alone',
  run(settings) {
    const consumer = { kind: 'consumer', key: 0x1234_5678 } as const;
    let offset = 0n;
    const body = encodeStoreOffsetBody({ consumer, offset: 42n });
    const inner = body.subarray(0, 13);
    const rows = measureCases([
      { name: 'encode (sealed)', op: () => encodeStoreOffsetBody({ consumer, offset: offset++ }) },
      {
        name: 'decode (seal checked)',
        op: () => {
          const decoded = decodeStoreOffsetBody(body);
          if (!decoded.ok) throw new Error(decoded.reason);
          return decoded.value.offset;
        },
      },
      { name: 'XXH3-64 of the 13-byte body', op: () => xxh3_64(inner) },
    ], settings);
    const seal = row(rows, 'XXH3-64 of the 13-byte body').nsPerOp;
    const decode = row(rows, 'decode (seal checked)').nsPerOp;
    return { rows, notes: [`the seal is ${seal.toFixed(0)} ns of the ${decode.toFixed(0)} ns decode; three decodes per committed offset write`] };
  },
};

export default suite;
