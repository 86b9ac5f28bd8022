/**
 * Fuzz target: ICO1 `decodeConsumerOffsets`. Decoded as given and with the trailer recomputed,
 * so mutations reach the version, count, ordering and length checks.
 */
import type { Prng } from '@shoal/stdx';
import { decodeConsumerOffsets, encodeConsumerOffsets } from '../../../src/replica/index.js';
import type { FuzzTarget } from '../target.js';
import { withFreshTrailer } from './replica-manifest-decode.js';

function summary(input: Uint8Array): string {
  const decoded = decodeConsumerOffsets(input);
  if (!decoded.ok) return decoded.reason;
  const v = decoded.value;
  const list = (entries: readonly { id: number; offset: bigint }[]): string => entries.map((e) => `${e.id}=${e.offset}`).join(',');
  return `ok[${v.purgeGeneration}:${v.nextOffset}:[${list(v.consumers)}]:[${list(v.groups)}]]`;
}

const target: FuzzTarget = {
  name: 'replica-consumer-offsets-decode',
  seeds(prng: Prng): Uint8Array[] {
    return [
      encodeConsumerOffsets({ purgeGeneration: 0n, nextOffset: 0n, consumers: [], groups: [] }),
      encodeConsumerOffsets({
        purgeGeneration: 2n,
        nextOffset: prng.u64(),
        consumers: [{ id: 1, offset: 5n }, { id: 9, offset: prng.u64() }],
        groups: [{ id: 3, offset: 7n }],
      }),
    ];
  },
  run(input: Uint8Array): string {
    // Outcome class first: the decode with a fresh trailer, where mutations reach the format rules.
    const fixed = summary(withFreshTrailer(input));
    return `${fixed.split(/[:[]/)[0]}:fixed=${fixed},raw=${summary(input)}`;
  },
};

export default target;
