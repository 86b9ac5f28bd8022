import { type Prng, assert, toHex } from '@shoal/stdx';
import {
  HeaderKind, decodeConsumer, decodeIdentifier, decodeOptionalPartitionId, decodeOptionsBlock, decodePartitioning,
  decodePollingStrategy, encodeConsumer, encodeIdentifier, encodeOptionalPartitionId, encodeOptionsBlock, encodePartitioning,
  encodePollingStrategy, encodeUserHeaders, iterateUserHeaders, numericIdentifier, stringIdentifier, validateUserHeaders,
} from '../../../src/client/index.js';
import { assertCanonical } from '../canonical.js';
import type { FuzzTarget } from '../target.js';

/**
 * The shared encodings. The first byte picks one (mod 7): 0 identifier, 1 partitioning, 2 user
 * headers, 3 options block, 4 consumer, 5 optional partition id, 6 polling strategy. Accepted
 * inputs must re-encode to the same bytes (the optional partition id, read leniently as the
 * reference reads it, to a canonical fixed point) (asserted: a mismatch is our bug and the harness reports it with the input).
 */
type Codec = { name: string; run(bytes: Uint8Array): string };

function roundTrip<T>(name: string, decode: (b: Uint8Array) => { ok: true; value: T } | { ok: false; reason: string }, encode: (v: T) => Uint8Array): Codec {
  return {
    name,
    run: (bytes) => {
      const decoded = decode(bytes);
      if (!decoded.ok) return `${name}:fail:${decoded.reason}`;
      assert(toHex(encode(decoded.value)) === toHex(bytes), `${name} re-encodes differently`);
      return `${name}:ok:${bytes.length}`;
    },
  };
}

/** A lenient decoder (the optional partition id reads as the reference does): canonical fixed point. */
function canonical<T>(name: string, decode: (b: Uint8Array) => { ok: true; value: T } | { ok: false; reason: string }, encode: (v: T) => Uint8Array): Codec {
  return {
    name,
    run: (bytes) => {
      const decoded = decode(bytes);
      if (!decoded.ok) return `${name}:fail:${decoded.reason}`;
      assertCanonical(name, bytes, decoded.value, decode, encode);
      return `${name}:ok:${bytes.length}`;
    },
  };
}

const CODECS: readonly Codec[] = [
  roundTrip('identifier', decodeIdentifier, encodeIdentifier),
  roundTrip('partitioning', decodePartitioning, encodePartitioning),
  {
    name: 'user_headers',
    run: (bytes) => {
      const pairs = validateUserHeaders(bytes);
      if (!pairs.ok) return `user_headers:fail:${pairs.reason}`;
      const again = encodeUserHeaders([...iterateUserHeaders(bytes)]);
      assert(toHex(again) === toHex(bytes), 'user headers re-encode differently');
      return `user_headers:ok:${pairs.value}`;
    },
  },
  roundTrip('options', decodeOptionsBlock, encodeOptionsBlock),
  roundTrip('consumer', decodeConsumer, encodeConsumer),
  canonical('partition_id', decodeOptionalPartitionId, encodeOptionalPartitionId),
  roundTrip('polling', decodePollingStrategy, encodePollingStrategy),
];

const te = new TextEncoder();

const target: FuzzTarget = {
  name: 'client-encodings',
  seeds(prng: Prng): Uint8Array[] {
    const tagged = (index: number, bytes: Uint8Array): Uint8Array => Uint8Array.of(index, ...bytes);
    return [
      tagged(0, encodeIdentifier(numericIdentifier(prng.u32()))),
      tagged(0, encodeIdentifier(stringIdentifier('stream-name'))),
      tagged(1, encodePartitioning({ kind: 'balanced' })),
      tagged(1, encodePartitioning({ kind: 'partition_id', partitionId: 3 })),
      tagged(1, encodePartitioning({ kind: 'messages_key', key: prng.bytes(12) })),
      tagged(2, encodeUserHeaders([{ keyKind: HeaderKind.String, key: te.encode('k'), valueKind: HeaderKind.Uint32, value: prng.bytes(4) }])),
      tagged(3, encodeOptionsBlock([{ key: 'segment_size', valueKind: HeaderKind.String, value: te.encode('1 GiB') }, { key: 'x', valueKind: 200, value: prng.bytes(3) }])),
      tagged(4, encodeConsumer({ kind: 'consumer_group', id: numericIdentifier(2) })),
      tagged(5, encodeOptionalPartitionId(9)),
      tagged(6, encodePollingStrategy({ kind: 'timestamp', value: prng.u64() })),
    ];
  },
  run(input: Uint8Array): string {
    if (input.length === 0) return 'empty';
    const codec = CODECS[(input[0] as number) % CODECS.length];
    assert(codec !== undefined, 'codec index in range');
    return codec.run(input.subarray(1));
  },
};

export default target;
