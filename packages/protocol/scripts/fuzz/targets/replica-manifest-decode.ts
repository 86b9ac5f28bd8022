/**
 * Fuzz target: ISM1 `decodeManifest`. Each input is decoded as given and with its 8-byte trailer
 * recomputed, so mutations get past the trailer and reach magic, count, entry_len and length
 * checks.
 */
import type { Prng } from '@shoal/stdx';
import { xxh3_64 } from '../../../src/hash/xxh3.js';
import { decodeManifest, encodeManifest, manifestEntryFor } from '../../../src/replica/index.js';
import type { FuzzTarget } from '../target.js';

export function withFreshTrailer(input: Uint8Array): Uint8Array {
  const copy = input.slice();
  if (copy.length >= 8) {
    new DataView(copy.buffer).setBigUint64(copy.length - 8, xxh3_64(copy.subarray(0, copy.length - 8)), true);
  }
  return copy;
}

function summary(input: Uint8Array): string {
  const decoded = decodeManifest(input);
  if (!decoded.ok) return decoded.reason;
  const entries = decoded.value.entries.map((e) => `${e.kind}/${e.frontier}/${e.len}/${e.checksum}`).join(',');
  return `ok[${decoded.value.entryLen}:${entries}]`;
}

const target: FuzzTarget = {
  name: 'replica-manifest-decode',
  seeds(prng: Prng): Uint8Array[] {
    const artifact = (n: number): Uint8Array => prng.bytes(n);
    return [
      encodeManifest([]),
      encodeManifest([manifestEntryFor(0, 192n, artifact(14)), manifestEntryFor(1, 195n, artifact(11))]),
      encodeManifest([manifestEntryFor(2, 0n, artifact(64)), manifestEntryFor(2, 1000n, artifact(8)), manifestEntryFor(3, 7n, artifact(3))]),
      encodeManifest([{ kind: 9, frontier: 1n, len: 2n, checksum: 3n, extension: prng.bytes(7) }], 32),
    ];
  },
  run(input: Uint8Array): string {
    // Outcome class first: the decode with a fresh trailer, where mutations reach the format rules.
    const fixed = summary(withFreshTrailer(input));
    return `${fixed.split(/[:[]/)[0]}:fixed=${fixed},raw=${summary(input)}`;
  },
};

export default target;
