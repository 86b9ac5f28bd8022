/**
 * Builders for every frame the core sends. Each fills every named field (reserved bytes zero: the
 * hot frames through protocol's direct writers, the rest through its table-driven encoder) and seals last (frame seal, prepare identity or body seal,
 * §2). The header prefix is always ours: cluster, current view (unless the frame says otherwise),
 * replica = self.
 */
import { assert } from '@shoal/stdx';
import { Command, encodeFrame, encodeHeader, OFFSET_VIEW, sealHeader, writeCommitFrame, writePrepareFrame, writePrepareOkFrame } from '@shoal/protocol';
import type { Core } from './core.js';
import type { Op } from './types.js';

function prefix(c: Core, view: number = c.view): { cluster: bigint; view: number; replica: number } {
  return { cluster: c.config.cluster, view, replica: c.self };
}

export interface PrepareFields {
  readonly client: bigint;
  readonly parent: bigint;
  readonly requestChecksum: bigint;
  readonly op: Op;
  readonly commit: Op;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly userId: number;
}

/** §4.4: a sealed prepare (checksum_body by plane, then the identity, computed last). */
export function prepareFrame(c: Core, f: PrepareFields, body: Uint8Array): Uint8Array {
  return writePrepareFrame(
    {
      cluster: c.config.cluster,
      view: c.view,
      replica: c.self,
      client: f.client,
      parent: f.parent,
      requestChecksum: f.requestChecksum,
      op: f.op,
      commit: f.commit,
      timestamp: f.timestamp,
      request: f.request,
      operation: f.operation,
      group: c.plane.group,
      userId: f.userId,
    },
    body,
  );
}

/**
 * A journaled prepare with its view field restamped (identity unchanged, §4.12). Journal frames
 * are immutable, so when the view already matches the frame itself is sent (no copy).
 */
export function restampedPrepare(journaled: Uint8Array, view: number): Uint8Array {
  const current = new DataView(journaled.buffer, journaled.byteOffset, journaled.byteLength).getUint32(OFFSET_VIEW, true);
  if (current === view) return journaled;
  const copy = journaled.slice();
  new DataView(copy.buffer, copy.byteOffset, copy.byteLength).setUint32(OFFSET_VIEW, view, true);
  return copy;
}

export interface AckFields {
  readonly parent: bigint;
  readonly checksum: bigint;
  readonly op: Op;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
}

/** §4.8: PrepareOk; `view` = own view, `commit` = own commit_max. */
export function prepareOkFrame(c: Core, f: AckFields): Uint8Array {
  return writePrepareOkFrame({
    cluster: c.config.cluster,
    view: c.view,
    replica: c.self,
    parent: f.parent,
    prepareChecksum: f.checksum,
    op: f.op,
    commit: c.commitMax,
    timestamp: f.timestamp,
    request: f.request,
    operation: f.operation,
    group: c.plane.group,
  });
}

/**
 * §4.11 Commit heartbeat: `commit` = commit_min. `commit_checksum` (declared, unused upstream)
 * carries the identity of our prepare at commit_min so a backup can anchor the hash chain of the
 * committed ops it repairs (deviation, docs/internals-consensus-core.md).
 */
export function commitFrame(c: Core, commitChecksum: bigint): Uint8Array {
  return writeCommitFrame({
    cluster: c.config.cluster,
    view: c.view,
    replica: c.self,
    commitChecksum,
    timestampMonotonic: c.heartbeatTimestamp,
    commit: c.commitMin,
    checkpointOp: 0,
    group: c.plane.group,
  });
}

export function startViewChangeFrame(c: Core): Uint8Array {
  return sealHeader(encodeHeader(Command.StartViewChange, { ...prefix(c), group: c.plane.group }));
}

export interface SuffixPacked {
  readonly body: Uint8Array;
  readonly nackBitset: bigint;
  readonly presentBitset: bigint;
}

export function doViewChangeFrame(c: Core, op: Op, commit: Op, suffix: SuffixPacked): Uint8Array {
  assert(commit <= op, 'DVC commit above op');
  return sealHeader(
    encodeFrame(
      Command.DoViewChange,
      {
        ...prefix(c),
        op: BigInt(op),
        commit: BigInt(commit),
        group: c.plane.group,
        logView: c.logView,
        nackBitset: suffix.nackBitset,
        presentBitset: suffix.presentBitset,
      },
      suffix.body,
    ),
  );
}

export function startViewFrame(c: Core, op: Op, commit: Op, incarnation: bigint, body: Uint8Array): Uint8Array {
  assert(commit <= op, 'StartView commit above op');
  return sealHeader(
    encodeFrame(Command.StartView, { ...prefix(c), op: BigInt(op), commit: BigInt(commit), group: c.plane.group, incarnation }, body),
  );
}

export function requestStartViewFrame(c: Core): Uint8Array {
  return sealHeader(encodeHeader(Command.RequestStartView, { ...prefix(c), group: c.plane.group, incarnation: c.plane.incarnation }));
}

export function requestPreparesFrame(c: Core, nonce: bigint, fromOp: Op, toOp: Op): Uint8Array {
  assert(fromOp >= 1 && fromOp <= toOp, 'RequestPrepares range');
  return sealHeader(
    encodeHeader(Command.RequestPrepares, { ...prefix(c), nonce, fromOp: BigInt(fromOp), toOp: BigInt(toOp), group: c.plane.group }),
  );
}

export function repairResponseFrame(c: Core, command: typeof Command.RepairDone | typeof Command.RangeEvicted, nonce: bigint, op: Op): Uint8Array {
  return sealHeader(encodeHeader(command, { ...prefix(c), nonce, op: BigInt(op), group: c.plane.group }));
}

export function requestStateTransferFrame(c: Core, nonce: bigint): Uint8Array {
  return sealHeader(encodeHeader(Command.RequestStateTransfer, { ...prefix(c), nonce, group: c.plane.group }));
}

export function stateTransferTargetFrame(
  c: Core,
  nonce: bigint,
  commitOp: Op,
  available: boolean,
  transient: boolean,
  manifest: Uint8Array,
): Uint8Array {
  assert(!(available && transient), 'StateTransferTarget: available and transient');
  assert(available || manifest.length === 0, 'StateTransferTarget: refusal with a body');
  return sealHeader(
    encodeFrame(
      Command.StateTransferTarget,
      {
        ...prefix(c),
        nonce,
        commitOp: BigInt(commitOp),
        group: c.plane.group,
        available: available ? 1 : 0,
        unavailableTransient: transient ? 1 : 0,
        commitMax: BigInt(c.commitMax),
      },
      manifest,
    ),
  );
}

export function requestStateChunkFrame(c: Core, nonce: bigint, artifact: number, offset: number, len: number): Uint8Array {
  assert(len > 0, 'RequestStateChunk len');
  return sealHeader(
    encodeHeader(Command.RequestStateChunk, { ...prefix(c), nonce, offset: BigInt(offset), group: c.plane.group, len, artifact }),
  );
}

export function stateChunkFrame(c: Core, nonce: bigint, artifact: number, offset: number, bytes: Uint8Array): Uint8Array {
  return sealHeader(encodeFrame(Command.StateChunk, { ...prefix(c), nonce, offset: BigInt(offset), group: c.plane.group, artifact }, bytes));
}

export function forwardRegisterFrame(c: Core, client: bigint, nonce: bigint, userId: number): Uint8Array {
  return sealHeader(encodeHeader(Command.ForwardRegister, { ...prefix(c), client, nonce, userId }));
}

export function forwardRegisterResultFrame(c: Core, nonce: bigint, client: bigint, epoch: bigint, watermark: bigint, outcome: number): Uint8Array {
  assert(outcome === 0 || (epoch === 0n && watermark === 0n), 'ForwardRegisterResult: bind on failure');
  return sealHeader(encodeHeader(Command.ForwardRegisterResult, { ...prefix(c), nonce, client, epoch, watermark, outcome }));
}

export function forwardLogoutFrame(c: Core, client: bigint, nonce: bigint, session: bigint, request: bigint): Uint8Array {
  return sealHeader(encodeHeader(Command.ForwardLogout, { ...prefix(c), client, nonce, session, request }));
}

export function forwardLogoutResultFrame(c: Core, nonce: bigint, client: bigint, commit: bigint, outcome: number): Uint8Array {
  assert(outcome === 0 || commit === 0n, 'ForwardLogoutResult: commit on failure');
  return sealHeader(encodeHeader(Command.ForwardLogoutResult, { ...prefix(c), nonce, client, commit, outcome }));
}
