/**
 * Valid, sealed replica-plane frames for the tests, built with our encoders (cluster
 * `iggy-cluster`, metadata group, view 3, replica 1). Each call returns fresh copies.
 */
import {
  Command,
  METADATA_GROUP,
  clusterIdFromName,
  encodeFrame,
  encodeHeader,
  packSuffix,
  sealHeader,
  type CommandValue,
  type EncodeFieldsOfCommand,
} from '../src/replica/index.js';

export const CLUSTER = clusterIdFromName('iggy-cluster');
export const PARTITION_GROUP = (1n << 32n) | (1n << 20n) | 1n;

const prefix = { cluster: CLUSTER, view: 3, replica: 1 } as const;

export function frame<C extends CommandValue>(
  command: C,
  fields: Omit<EncodeFieldsOfCommand<C>, 'cluster' | 'view' | 'replica'> & { view?: number; replica?: number },
  body?: Uint8Array,
): Uint8Array {
  return sealHeader(encodeFrame(command, { ...prefix, ...fields } as unknown as EncodeFieldsOfCommand<C>, body));
}

/** Three chained metadata prepares (ops 1..3) with bodies. */
export function preparesChain(): Uint8Array[] {
  const out: Uint8Array[] = [];
  let parent = 0n;
  for (let op = 1n; op <= 3n; op++) {
    const body = new TextEncoder().encode(`body-${op}`);
    const f = frame(Command.Prepare, {
      client: 0x1234n,
      parent,
      requestChecksum: 0n,
      op,
      commit: op - 1n,
      timestamp: 1_000_000n * op,
      request: op,
      operation: 128,
      group: METADATA_GROUP,
      userId: 1,
    }, body);
    parent = f.subarray(0, 8).reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);
    out.push(f);
  }
  return out;
}

export function prepare(): Uint8Array {
  return preparesChain()[0] as Uint8Array;
}

export function partitionPrepare(): Uint8Array {
  return frame(Command.Prepare, {
    client: 0x1234n, parent: 0n, requestChecksum: 0n, op: 1n, commit: 0n, timestamp: 5n, request: 1n,
    operation: 160, group: PARTITION_GROUP, userId: 0,
  }, new Uint8Array([1, 2, 3]));
}

export function repairPrepare(): Uint8Array {
  const p = prepare();
  p[60] = Command.RepairPrepare;
  return p;
}

/** DoViewChange (view 4, log_view 3) whose suffix is the three chained prepares, head op 3. */
export function doViewChange(): Uint8Array {
  const chain = preparesChain();
  const suffix = packSuffix(chain.slice().reverse().map((p, i) => ({ header: p.subarray(0, 256), op: 3n - BigInt(i), present: true })));
  return frame(Command.DoViewChange, {
    view: 4, op: 3n, commit: 1n, group: METADATA_GROUP, logView: 3,
    nackBitset: suffix.nackBitset, presentBitset: suffix.presentBitset,
  }, suffix.body);
}

export function startView(): Uint8Array {
  const chain = preparesChain();
  const suffix = packSuffix(chain.slice().reverse().map((p, i) => ({ header: p.subarray(0, 256), op: 3n - BigInt(i) })));
  return frame(Command.StartView, { view: 4, op: 3n, commit: 1n, group: METADATA_GROUP, incarnation: 0n }, suffix.body);
}

/** One valid sealed frame per replica-plane command (5, 6, 7, 9..12, 17..29). */
export function validFrames(): Map<string, Uint8Array> {
  const m = new Map<string, Uint8Array>();
  m.set('Request', frame(Command.Request, {
    client: 7n, requestChecksum: 0n, timestamp: 0n, request: 4n, operation: 128, session: 9n, userId: 0, code: 0, group: METADATA_GROUP,
  }, new Uint8Array([1, 2])));
  m.set('Prepare', prepare());
  m.set('PartitionPrepare', partitionPrepare());
  m.set('RepairPrepare', repairPrepare());
  m.set('PrepareOk', frame(Command.PrepareOk, {
    parent: 1n, prepareChecksum: 2n, op: 3n, commit: 2n, timestamp: 4n, request: 5n, operation: 128, group: METADATA_GROUP,
  }));
  m.set('Commit', frame(Command.Commit, { commitChecksum: 0n, timestampMonotonic: 9n, commit: 3n, checkpointOp: 0n, group: METADATA_GROUP }));
  m.set('StartViewChange', frame(Command.StartViewChange, { view: 4, group: METADATA_GROUP }));
  m.set('DoViewChange', doViewChange());
  m.set('DoViewChangeEmpty', frame(Command.DoViewChange, {
    view: 4, op: 3n, commit: 3n, group: METADATA_GROUP, logView: 3, nackBitset: 0n, presentBitset: 0n,
  }));
  m.set('StartView', startView());
  m.set('RequestStartView', frame(Command.RequestStartView, { group: METADATA_GROUP, incarnation: 77n }));
  m.set('RequestPrepares', frame(Command.RequestPrepares, { nonce: 5n, fromOp: 1n, toOp: 3n, group: METADATA_GROUP }));
  m.set('RepairDone', frame(Command.RepairDone, { nonce: 5n, op: 3n, group: METADATA_GROUP }));
  m.set('RangeEvicted', frame(Command.RangeEvicted, { nonce: 5n, op: 2n, group: METADATA_GROUP }));
  m.set('RequestStateTransfer', frame(Command.RequestStateTransfer, { nonce: 6n, group: METADATA_GROUP }));
  m.set('StateTransferTarget', frame(Command.StateTransferTarget, {
    nonce: 6n, commitOp: 3n, group: METADATA_GROUP, available: 1, unavailableTransient: 0, commitMax: 3n,
  }, new Uint8Array([0x49, 0x53, 0x4d, 0x31])));
  m.set('StateTransferTargetRefusal', frame(Command.StateTransferTarget, {
    nonce: 6n, commitOp: 0n, group: PARTITION_GROUP, available: 0, unavailableTransient: 1, commitMax: 0n,
  }));
  m.set('RequestStateChunk', frame(Command.RequestStateChunk, { nonce: 6n, offset: 0n, group: METADATA_GROUP, len: 65536, artifact: 0 }));
  m.set('StateChunk', frame(Command.StateChunk, { nonce: 6n, offset: 0n, group: METADATA_GROUP, artifact: 0 }, new Uint8Array(32)));
  m.set('ForwardRegister', frame(Command.ForwardRegister, { client: 0xcafen, nonce: 0xf00dn, userId: 41 }));
  m.set('ForwardRegisterResult', frame(Command.ForwardRegisterResult, { nonce: 0xf00dn, client: 0xcafen, epoch: 91n, watermark: 12n, outcome: 0 }));
  m.set('ForwardLogout', frame(Command.ForwardLogout, { client: 0xcafen, nonce: 0xf00en, session: 91n, request: 12n }));
  m.set('ForwardLogoutResult', frame(Command.ForwardLogoutResult, { nonce: 0xf00en, client: 0xcafen, commit: 92n, outcome: 0 }));
  return m;
}

export function get(name: string): Uint8Array {
  const f = validFrames().get(name);
  if (f === undefined) throw new Error(`no fixture ${name}`);
  return f;
}

/** Writes a u64 LE at `at`. */
export function setU64(bytes: Uint8Array, at: number, value: bigint): void {
  new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(at, value, true);
}

export function setU32(bytes: Uint8Array, at: number, value: number): void {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, value, true);
}

/** Re-seals after a mutation so a test reaches the rule it targets (not the seal check). */
export function reseal(bytes: Uint8Array): Uint8Array {
  return sealHeader(bytes);
}

export { encodeHeader };
