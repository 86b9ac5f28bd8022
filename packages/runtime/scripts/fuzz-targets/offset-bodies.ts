/**
 * The sealed partition prepare bodies of the two offset writes (state/src/consumer-offsets.ts),
 * which a replica decodes from its peers' prepares. Inputs are decoded as given and RESEALED
 * (the xxh3 seal recomputed over the mutated bytes), so mutations reach the kind, key, offset
 * and length checks instead of dying at the seal. An accepted body re-encodes to the same bytes.
 */
import { assert } from '@shoal/stdx';
import { xxh3_64 } from '@shoal/protocol';
import {
  OFFSET_BODY_SEAL_SIZE, decodeDeleteOffsetBody, decodeStoreOffsetBody, encodeDeleteOffsetBody, encodeStoreOffsetBody,
} from '@shoal/state';
import type { FuzzTarget } from '../fuzz-target.js';

function resealed(body: Uint8Array): Uint8Array {
  if (body.length < OFFSET_BODY_SEAL_SIZE) return body;
  const out = body.slice();
  const at = out.length - OFFSET_BODY_SEAL_SIZE;
  new DataView(out.buffer).setBigUint64(at, xxh3_64(out.subarray(0, at)), true);
  return out;
}

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

function store(body: Uint8Array): string {
  const decoded = decodeStoreOffsetBody(body);
  if (!decoded.ok) return `store:${decoded.reason}`;
  assert(same(encodeStoreOffsetBody(decoded.value), body), 'an accepted store body re-encodes to itself');
  return `store:ok:${decoded.value.consumer.kind}:${decoded.value.consumer.key}:${decoded.value.offset}`;
}

function remove(body: Uint8Array): string {
  const decoded = decodeDeleteOffsetBody(body);
  if (!decoded.ok) return `delete:${decoded.reason}`;
  assert(same(encodeDeleteOffsetBody(decoded.value), body), 'an accepted delete body re-encodes to itself');
  return `delete:ok:${decoded.value.kind}:${decoded.value.key}`;
}

const target: FuzzTarget = {
  name: 'offset-bodies',
  seeds: (prng) => [
    Uint8Array.of(0, ...encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: prng.u32() }, offset: prng.u64() })),
    Uint8Array.of(0, ...encodeStoreOffsetBody({ consumer: { kind: 'consumer_group', key: 3 }, offset: 0n })),
    Uint8Array.of(1, ...encodeDeleteOffsetBody({ kind: 'consumer', key: 42 })),
    Uint8Array.of(1, ...encodeDeleteOffsetBody({ kind: 'consumer_group', key: 7 })),
  ],
  run(input) {
    if (input.length === 0) return 'empty';
    const body = input.subarray(1);
    const decode = (input[0] as number) % 2 === 0 ? store : remove;
    return `${decode(body)}|${decode(resealed(body))}`;
  },
};

export default target;
