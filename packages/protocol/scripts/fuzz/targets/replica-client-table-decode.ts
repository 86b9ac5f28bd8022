/**
 * Fuzz target: ICT2 `decodeClientTable`. Decoded as given and with the trailer recomputed, so
 * mutations reach the entry, ring and cached-Reply checks.
 */
import type { Prng } from '@shoal/stdx';
import { clusterIdFromName, decodeClientTable, encodeClientTable, encodeFrame } from '../../../src/replica/index.js';
import type { FuzzTarget } from '../target.js';
import { withFreshTrailer } from './replica-manifest-decode.js';

const CLUSTER = clusterIdFromName('iggy-cluster');

function reply(prng: Prng, client: bigint, request: bigint): Uint8Array {
  return encodeFrame(8, {
    cluster: CLUSTER, view: 3, replica: 0, requestChecksum: 0n, context: 0n, client, op: request + 10n, commit: request + 10n,
    timestamp: 0n, request, operation: 128, status: 0,
  }, prng.bytes(prng.range(0, 12)));
}

function summary(input: Uint8Array): string {
  const decoded = decodeClientTable(input);
  if (!decoded.ok) return decoded.reason;
  return `ok[${decoded.value.map((e) => `${e.clientId}/${e.epoch}/${e.replies.length}/${e.latestCommit}`).join(',')}]`;
}

const target: FuzzTarget = {
  name: 'replica-client-table-decode',
  seeds(prng: Prng): Uint8Array[] {
    return [
      encodeClientTable([]),
      encodeClientTable([
        { clientId: 1n, epoch: 4n, userId: 1, watermark: 2n, watermarkChecksum: 0n, replies: [reply(prng, 1n, 2n)] },
        { clientId: 1n << 100n, epoch: 9n, userId: 2, watermark: 3n, watermarkChecksum: 5n, replies: [1n, 2n, 3n].map((r) => reply(prng, 1n << 100n, r)) },
      ]),
    ];
  },
  run(input: Uint8Array): string {
    // Outcome class first: the decode with a fresh trailer, where mutations reach the format rules.
    const fixed = summary(withFreshTrailer(input));
    return `${fixed.split(/[:[]/)[0]}:fixed=${fixed},raw=${summary(input)}`;
  },
};

export default target;
