/**
 * Fuzz target: `validateHeader` over arbitrary 256..N-byte inputs. Each input is judged twice:
 * as given, and re-sealed (checksum_body and seal/identity recomputed on a copy) so that
 * mutations get past the seal check and exercise the per-command rules and the suffix decoder.
 * Seeds are valid frames of every replica-plane command built by our encoders.
 */
import type { Prng } from '@shoal/stdx';
import {
  Command,
  METADATA_GROUP,
  clusterIdFromName,
  encodeFrame,
  packSuffix,
  sealHeader,
  validateHeader,
  type CommandValue,
  type EncodeFieldsOfCommand,
} from '../../../src/replica/index.js';
import { HEADER_SIZE } from '../../../src/replica/header-layout.js';
import type { FuzzTarget } from '../target.js';

const CLUSTER = clusterIdFromName('iggy-cluster');
const PARTITION_GROUP = (1n << 32n) | (1n << 20n) | 1n;

function build<C extends CommandValue>(
  command: C,
  fields: Omit<EncodeFieldsOfCommand<C>, 'cluster' | 'view' | 'replica'> & { view?: number; replica?: number },
  body?: Uint8Array,
): Uint8Array {
  return sealHeader(encodeFrame(command, { cluster: CLUSTER, view: 3, replica: 1, ...fields } as unknown as EncodeFieldsOfCommand<C>, body));
}

function identityOf(frame: Uint8Array): bigint {
  return new DataView(frame.buffer, frame.byteOffset).getBigUint64(0, true);
}

/** Three chained metadata prepares (ops 1..3), oldest first. */
export function seedPrepareChain(prng: Prng): Uint8Array[] {
  const out: Uint8Array[] = [];
  let parent = 0n;
  for (let op = 1n; op <= 3n; op++) {
    const frame = build(Command.Prepare, {
      client: 0x1234n, parent, requestChecksum: 0n, op, commit: op - 1n, timestamp: 1000n * op, request: op,
      operation: 128, group: METADATA_GROUP, userId: 1,
    }, prng.bytes(prng.range(0, 24)));
    parent = identityOf(frame);
    out.push(frame);
  }
  return out;
}

/** A DoViewChange and a StartView over the chain, plus an empty DoViewChange. */
export function seedSuffixFrames(prng: Prng): Uint8Array[] {
  const chain = seedPrepareChain(prng).reverse();
  const packed = packSuffix([
    { header: null, op: 4n, nack: true },
    ...chain.map((p, i) => ({ header: p.subarray(0, HEADER_SIZE), op: 3n - BigInt(i), present: i !== 1 })),
  ]);
  return [
    build(Command.DoViewChange, {
      view: 4, op: 4n, commit: 1n, group: METADATA_GROUP, logView: 3, nackBitset: packed.nackBitset, presentBitset: packed.presentBitset,
    }, packed.body),
    build(Command.StartView, { view: 4, op: 4n, commit: 1n, group: METADATA_GROUP, incarnation: 9n }, packed.body),
    build(Command.DoViewChange, { view: 4, op: 3n, commit: 3n, group: METADATA_GROUP, logView: 3, nackBitset: 0n, presentBitset: 0n }),
  ];
}

/** One valid frame per replica-plane command. */
export function replicaSeedFrames(prng: Prng): Uint8Array[] {
  const chain = seedPrepareChain(prng);
  const repair = (chain[1] as Uint8Array).slice();
  repair[60] = Command.RepairPrepare;
  return [
    ...chain,
    repair,
    build(Command.Prepare, {
      client: 9n, parent: 0n, requestChecksum: 0n, op: 1n, commit: 0n, timestamp: 5n, request: 1n, operation: 160, group: PARTITION_GROUP, userId: 0,
    }, prng.bytes(40)),
    build(Command.Request, {
      client: 7n, requestChecksum: 0n, timestamp: 0n, request: 4n, operation: 128, session: 9n, userId: 0, code: 0, group: METADATA_GROUP,
    }, prng.bytes(8)),
    build(Command.PrepareOk, { parent: 1n, prepareChecksum: 2n, op: 3n, commit: 2n, timestamp: 4n, request: 5n, operation: 128, group: METADATA_GROUP }),
    build(Command.Commit, { commitChecksum: 0n, timestampMonotonic: 9n, commit: 3n, checkpointOp: 0n, group: METADATA_GROUP }),
    build(Command.StartViewChange, { view: 4, group: METADATA_GROUP }),
    ...seedSuffixFrames(prng),
    build(Command.RequestStartView, { group: METADATA_GROUP, incarnation: 77n }),
    build(Command.RequestPrepares, { nonce: 5n, fromOp: 1n, toOp: 3n, group: METADATA_GROUP }),
    build(Command.RepairDone, { nonce: 5n, op: 3n, group: METADATA_GROUP }),
    build(Command.RangeEvicted, { nonce: 5n, op: 2n, group: METADATA_GROUP }),
    build(Command.RequestStateTransfer, { nonce: 6n, group: METADATA_GROUP }),
    build(Command.StateTransferTarget, { nonce: 6n, commitOp: 3n, group: METADATA_GROUP, available: 1, unavailableTransient: 0, commitMax: 3n }, prng.bytes(17)),
    build(Command.StateTransferTarget, { nonce: 6n, commitOp: 0n, group: PARTITION_GROUP, available: 0, unavailableTransient: 1, commitMax: 0n }),
    build(Command.RequestStateChunk, { nonce: 6n, offset: 0n, group: METADATA_GROUP, len: 65536, artifact: 0 }),
    build(Command.StateChunk, { nonce: 6n, offset: 64n, group: METADATA_GROUP, artifact: 1 }, prng.bytes(32)),
    build(Command.ForwardRegister, { client: 0xcafen, nonce: 0xf00dn, userId: 41 }),
    build(Command.ForwardRegisterResult, { nonce: 0xf00dn, client: 0xcafen, epoch: 91n, watermark: 12n, outcome: 0 }),
    build(Command.ForwardLogout, { client: 0xcafen, nonce: 0xf00en, session: 91n, request: 12n }),
    build(Command.ForwardLogoutResult, { nonce: 0xf00en, client: 0xcafen, commit: 92n, outcome: 0 }),
  ];
}

const LIMITS = { replicaCount: 3, messageSizeMax: 1 << 20 };

const target: FuzzTarget = {
  name: 'replica-header-validate',
  seeds: replicaSeedFrames,
  run(input: Uint8Array): string {
    // Outcome class first (the harness groups by the text before the first ':'): the verdict
    // after re-sealing, which is where mutations reach the per-command rules.
    const raw = validateHeader(input, 0, LIMITS) ?? 'ok';
    if (input.length < HEADER_SIZE) return `${raw}:short`;
    const sealed = validateHeader(sealHeader(input.slice()), 0, LIMITS) ?? 'ok';
    return `${sealed}:raw=${raw},command=${input[60]}`;
  },
};

export default target;
