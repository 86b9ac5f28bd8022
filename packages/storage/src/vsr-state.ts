/**
 * VsrState: the superblock payload (replication-semantics.md §9.2), little-endian, 74 bytes
 * (legacy records are accepted: 66 bytes without `log_head`, read as 0; 58 bytes without
 * `offset_frontier` either, read as 0):
 *
 *   off size field
 *    0   16  cluster id (u128)
 *   16    1  replica_id
 *   17    1  replica_count
 *   18    4  view
 *   22    4  log_view            (<= view, else the record is refused)
 *   26    8  commit_max at write time
 *   34    8  checkpoint_op       (snapshot sequence number, 0 if none)
 *   42   16  checkpoint_checksum (widened XXH3 of the snapshot payload, 0 if none)
 *   58    8  offset_frontier     (partition plane: next message offset to mint; metadata: 0)
 *   66    8  log_head            (the op head of log_view's log when this replica installed it)
 *
 * Defined here, not imported from @shoal/consensus (written concurrently): a plain record.
 */
import { assert, isU128, isU64, readU128LE, writeU128LE } from '@shoal/stdx';

export interface VsrState {
  readonly clusterId: bigint;
  readonly replicaId: number;
  readonly replicaCount: number;
  readonly view: number;
  readonly logView: number;
  readonly commitMax: bigint;
  readonly checkpointOp: bigint;
  readonly checkpointChecksum: bigint;
  readonly offsetFrontier: bigint;
  /**
   * The head of the log of `logView` as installed (a StartView's op, a started view's head): a
   * restarted replica's log in that view ends at least there, even where its journal does not.
   */
  readonly logHead: bigint;
}

export const VSR_STATE_SIZE = 74;
/** Without `log_head`. */
export const VSR_STATE_NO_LOG_HEAD_SIZE = 66;
/** Without `offset_frontier` and `log_head`. */
export const VSR_STATE_LEGACY_SIZE = 58;

export const VSR_STATE_LAYOUT = Object.freeze({
  clusterId: 0,
  replicaId: 16,
  replicaCount: 17,
  view: 18,
  logView: 22,
  commitMax: 26,
  checkpointOp: 34,
  checkpointChecksum: 42,
  offsetFrontier: 58,
  logHead: 66,
});

export type VsrStateDecoded = { readonly ok: true; readonly value: VsrState } | { readonly ok: false; readonly reason: string };

export function encodeVsrState(state: VsrState): Uint8Array {
  assert(isU128(state.clusterId), 'VsrState: clusterId not a u128');
  assert(Number.isInteger(state.replicaId) && state.replicaId >= 0 && state.replicaId <= 0xff, 'VsrState: replicaId not a u8');
  assert(Number.isInteger(state.replicaCount) && state.replicaCount >= 1 && state.replicaCount <= 0xff, 'VsrState: replicaCount');
  assert(Number.isInteger(state.view) && state.view >= 0 && state.view <= 0xffff_ffff, 'VsrState: view not a u32');
  assert(Number.isInteger(state.logView) && state.logView >= 0 && state.logView <= state.view, 'VsrState: logView > view');
  assert(isU64(state.commitMax) && isU64(state.checkpointOp) && isU64(state.offsetFrontier) && isU64(state.logHead), 'VsrState: u64 field');
  assert(isU128(state.checkpointChecksum), 'VsrState: checkpointChecksum not a u128');
  const out = new Uint8Array(VSR_STATE_SIZE);
  const view = new DataView(out.buffer);
  const L = VSR_STATE_LAYOUT;
  writeU128LE(out, L.clusterId, state.clusterId);
  out[L.replicaId] = state.replicaId;
  out[L.replicaCount] = state.replicaCount;
  view.setUint32(L.view, state.view, true);
  view.setUint32(L.logView, state.logView, true);
  view.setBigUint64(L.commitMax, state.commitMax, true);
  view.setBigUint64(L.checkpointOp, state.checkpointOp, true);
  writeU128LE(out, L.checkpointChecksum, state.checkpointChecksum);
  view.setBigUint64(L.offsetFrontier, state.offsetFrontier, true);
  view.setBigUint64(L.logHead, state.logHead, true);
  return out;
}

export function decodeVsrState(bytes: Uint8Array): VsrStateDecoded {
  if (bytes.length !== VSR_STATE_SIZE && bytes.length !== VSR_STATE_NO_LOG_HEAD_SIZE && bytes.length !== VSR_STATE_LEGACY_SIZE) {
    return { ok: false, reason: 'vsr_state_bad_length' };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const L = VSR_STATE_LAYOUT;
  const state: VsrState = {
    clusterId: readU128LE(bytes, L.clusterId),
    replicaId: bytes[L.replicaId] as number,
    replicaCount: bytes[L.replicaCount] as number,
    view: view.getUint32(L.view, true),
    logView: view.getUint32(L.logView, true),
    commitMax: view.getBigUint64(L.commitMax, true),
    checkpointOp: view.getBigUint64(L.checkpointOp, true),
    checkpointChecksum: readU128LE(bytes, L.checkpointChecksum),
    offsetFrontier: bytes.length > VSR_STATE_LEGACY_SIZE ? view.getBigUint64(L.offsetFrontier, true) : 0n,
    logHead: bytes.length === VSR_STATE_SIZE ? view.getBigUint64(L.logHead, true) : 0n,
  };
  if (state.logView > state.view) return { ok: false, reason: 'vsr_state_log_view_above_view' };
  return { ok: true, value: state };
}
