/** Hand-built replica frames for scripted peers (a test plays the part of replicas that are down). */
import { Command, encodeFrame, encodeHeader, packSuffix, sealHeader, type SuffixEntryInput } from '@shoal/protocol';
import { CLUSTER_ID } from './cluster.js';

const METADATA = 1n << 63n;

export function startViewChange(view: number, replica: number, group = METADATA): Uint8Array {
  return sealHeader(encodeHeader(Command.StartViewChange, { cluster: CLUSTER_ID, view, replica, group }));
}

export function doViewChange(
  view: number,
  replica: number,
  logView: number,
  op: number,
  commit: number,
  entries: SuffixEntryInput[],
  group = METADATA,
): Uint8Array {
  const packed = packSuffix(entries);
  return sealHeader(
    encodeFrame(
      Command.DoViewChange,
      {
        cluster: CLUSTER_ID, view, replica, op: BigInt(op), commit: BigInt(commit), group, logView,
        nackBitset: packed.nackBitset, presentBitset: packed.presentBitset,
      },
      packed.body,
    ),
  );
}
