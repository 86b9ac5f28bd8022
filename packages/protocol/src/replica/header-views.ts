/**
 * Typed views over a header in place: `bind(bytes, base)` points a view at the 256 bytes at
 * `bytes[base, base + 256)`, and each getter reads its field straight from those bytes (no copy,
 * no per-read allocation for number fields). u8/u32 are numbers; u64/u128 are bigint; for u64
 * fields that validation guarantees to be safe integers (ops, commit points, chunk offsets) a
 * `…Number` getter returns a number for the consensus core's hot path.
 *
 * A view is reusable: bind it to each frame in turn. Views never validate; run `validateHeader`
 * first. The `…Number` getters assert (our bug) if they meet an unsafe value, which validation
 * refuses before a view ever sees it.
 */
import { assert } from '@shoal/stdx';
import { Command } from './command.js';
import {
  COMMIT_LAYOUT,
  DO_VIEW_CHANGE_LAYOUT,
  EVICTION_LAYOUT,
  FORWARD_LOGOUT_LAYOUT,
  FORWARD_LOGOUT_RESULT_LAYOUT,
  FORWARD_REGISTER_LAYOUT,
  FORWARD_REGISTER_RESULT_LAYOUT,
  HANDSHAKE_LAYOUT,
  HEADER_SIZE,
  PREFIX_LAYOUT,
  PREPARE_LAYOUT,
  PREPARE_OK_LAYOUT,
  REPAIR_RESPONSE_LAYOUT,
  REPLY_LAYOUT,
  REQUEST_PREPARES_LAYOUT,
  REQUEST_START_VIEW_LAYOUT,
  REQUEST_STATE_CHUNK_LAYOUT,
  REQUEST_STATE_TRANSFER_LAYOUT,
  ROUTED_REQUEST_LAYOUT,
  START_VIEW_CHANGE_LAYOUT,
  START_VIEW_LAYOUT,
  STATE_CHUNK_LAYOUT,
  STATE_TRANSFER_TARGET_LAYOUT,
} from './header-layout.js';
import { readU128Big, readU32, readU64Big, readU64Number, readU8, u64IsSafe } from './little-endian.js';
import { isMetadataGroupAt } from './group.js';

const EMPTY = new Uint8Array(HEADER_SIZE);

/** Base view: the common 128-byte prefix (§1.1). Also the view for commands 0..4. */
export class HeaderView {
  /** The buffer the view reads. */
  bytes: Uint8Array = EMPTY;
  /** Index of header byte 0 inside `bytes`. */
  base = 0;

  constructor(bytes?: Uint8Array, base = 0) {
    if (bytes !== undefined) this.bind(bytes, base);
  }

  /** Points the view at the header at `bytes[base, base + 256)`. */
  bind(bytes: Uint8Array, base = 0): this {
    assert(base >= 0 && base + HEADER_SIZE <= bytes.length, 'HeaderView.bind: buffer too short');
    this.bytes = bytes;
    this.base = base;
    return this;
  }

  protected u8(field: { readonly offset: number }): number {
    return readU8(this.bytes, this.base + field.offset);
  }
  protected u32(field: { readonly offset: number }): number {
    return readU32(this.bytes, this.base + field.offset);
  }
  protected u64(field: { readonly offset: number }): bigint {
    return readU64Big(this.bytes, this.base + field.offset);
  }
  protected u64Number(field: { readonly offset: number }): number {
    const at = this.base + field.offset;
    assert(u64IsSafe(this.bytes, at), 'u64 field is not a safe integer: validate the header first');
    return readU64Number(this.bytes, at);
  }
  protected u128(field: { readonly offset: number }): bigint {
    return readU128Big(this.bytes, this.base + field.offset);
  }
  protected isMetadataGroup(field: { readonly offset: number }): boolean {
    return isMetadataGroupAt(this.bytes, this.base + field.offset);
  }

  get checksum(): bigint {
    return this.u128(PREFIX_LAYOUT.checksum);
  }
  get checksumBody(): bigint {
    return this.u128(PREFIX_LAYOUT.checksumBody);
  }
  get cluster(): bigint {
    return this.u128(PREFIX_LAYOUT.cluster);
  }
  /** Total frame length, header included. */
  get size(): number {
    return this.u32(PREFIX_LAYOUT.size);
  }
  get view(): number {
    return this.u32(PREFIX_LAYOUT.view);
  }
  get release(): number {
    return this.u32(PREFIX_LAYOUT.release);
  }
  get command(): number {
    return this.u8(PREFIX_LAYOUT.command);
  }
  get replica(): number {
    return this.u8(PREFIX_LAYOUT.replica);
  }
  /** `size - 256` (negative on a header that validation would refuse). */
  get bodyLength(): number {
    return this.size - HEADER_SIZE;
  }
  /** The body bytes in place (bytes `256..size` of the frame), clamped to the buffer. */
  get body(): Uint8Array {
    const start = this.base + HEADER_SIZE;
    return this.bytes.subarray(start, Math.min(this.bytes.length, this.base + Math.max(HEADER_SIZE, this.size)));
  }
  /** The 256 header bytes in place. */
  get header(): Uint8Array {
    return this.bytes.subarray(this.base, this.base + HEADER_SIZE);
  }
}

export class GenericHeaderView extends HeaderView {}

/** Request (5) as parsed on the replica plane (RoutedRequest, §1.3). */
export class RoutedRequestHeaderView extends HeaderView {
  get client(): bigint {
    return this.u128(ROUTED_REQUEST_LAYOUT.client);
  }
  get requestChecksum(): bigint {
    return this.u128(ROUTED_REQUEST_LAYOUT.requestChecksum);
  }
  get timestamp(): bigint {
    return this.u64(ROUTED_REQUEST_LAYOUT.timestamp);
  }
  get request(): bigint {
    return this.u64(ROUTED_REQUEST_LAYOUT.request);
  }
  get operation(): number {
    return this.u8(ROUTED_REQUEST_LAYOUT.operation);
  }
  get session(): bigint {
    return this.u64(ROUTED_REQUEST_LAYOUT.session);
  }
  get userId(): number {
    return this.u32(ROUTED_REQUEST_LAYOUT.userId);
  }
  /** The u32 command code of a NonReplicated (operation 2) request. */
  get code(): number {
    return this.u32(ROUTED_REQUEST_LAYOUT.code);
  }
  get group(): bigint {
    return this.u64(ROUTED_REQUEST_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(ROUTED_REQUEST_LAYOUT.group);
  }
}

/** Prepare (6) and RepairPrepare (19). */
export class PrepareHeaderView extends HeaderView {
  get client(): bigint {
    return this.u128(PREPARE_LAYOUT.client);
  }
  get parent(): bigint {
    return this.u128(PREPARE_LAYOUT.parent);
  }
  get requestChecksum(): bigint {
    return this.u128(PREPARE_LAYOUT.requestChecksum);
  }
  get op(): bigint {
    return this.u64(PREPARE_LAYOUT.op);
  }
  get opNumber(): number {
    return this.u64Number(PREPARE_LAYOUT.op);
  }
  get commit(): bigint {
    return this.u64(PREPARE_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(PREPARE_LAYOUT.commit);
  }
  get timestamp(): bigint {
    return this.u64(PREPARE_LAYOUT.timestamp);
  }
  get request(): bigint {
    return this.u64(PREPARE_LAYOUT.request);
  }
  get operation(): number {
    return this.u8(PREPARE_LAYOUT.operation);
  }
  get group(): bigint {
    return this.u64(PREPARE_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(PREPARE_LAYOUT.group);
  }
  get userId(): number {
    return this.u32(PREPARE_LAYOUT.userId);
  }
  /** True for a RepairPrepare (command 19) frame. */
  get isRepair(): boolean {
    return this.command === Command.RepairPrepare;
  }
}

/** PrepareOk (7). */
export class PrepareOkHeaderView extends HeaderView {
  get parent(): bigint {
    return this.u128(PREPARE_OK_LAYOUT.parent);
  }
  get prepareChecksum(): bigint {
    return this.u128(PREPARE_OK_LAYOUT.prepareChecksum);
  }
  get op(): bigint {
    return this.u64(PREPARE_OK_LAYOUT.op);
  }
  get opNumber(): number {
    return this.u64Number(PREPARE_OK_LAYOUT.op);
  }
  get commit(): bigint {
    return this.u64(PREPARE_OK_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(PREPARE_OK_LAYOUT.commit);
  }
  get timestamp(): bigint {
    return this.u64(PREPARE_OK_LAYOUT.timestamp);
  }
  get request(): bigint {
    return this.u64(PREPARE_OK_LAYOUT.request);
  }
  get operation(): number {
    return this.u8(PREPARE_OK_LAYOUT.operation);
  }
  get group(): bigint {
    return this.u64(PREPARE_OK_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(PREPARE_OK_LAYOUT.group);
  }
}

/** Reply (8): client-bound; read here for cached replies inside ICT2. */
export class CachedReplyHeaderView extends HeaderView {
  get requestChecksum(): bigint {
    return this.u128(REPLY_LAYOUT.requestChecksum);
  }
  get context(): bigint {
    return this.u128(REPLY_LAYOUT.context);
  }
  get client(): bigint {
    return this.u128(REPLY_LAYOUT.client);
  }
  get op(): bigint {
    return this.u64(REPLY_LAYOUT.op);
  }
  get commit(): bigint {
    return this.u64(REPLY_LAYOUT.commit);
  }
  get timestamp(): bigint {
    return this.u64(REPLY_LAYOUT.timestamp);
  }
  get request(): bigint {
    return this.u64(REPLY_LAYOUT.request);
  }
  get operation(): number {
    return this.u8(REPLY_LAYOUT.operation);
  }
  get status(): number {
    return this.u32(REPLY_LAYOUT.status);
  }
}

/** Commit (9): the heartbeat. */
export class CommitHeaderView extends HeaderView {
  get commitChecksum(): bigint {
    return this.u128(COMMIT_LAYOUT.commitChecksum);
  }
  get timestampMonotonic(): bigint {
    return this.u64(COMMIT_LAYOUT.timestampMonotonic);
  }
  get commit(): bigint {
    return this.u64(COMMIT_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(COMMIT_LAYOUT.commit);
  }
  get checkpointOp(): bigint {
    return this.u64(COMMIT_LAYOUT.checkpointOp);
  }
  get group(): bigint {
    return this.u64(COMMIT_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(COMMIT_LAYOUT.group);
  }
}

/** StartViewChange (10). */
export class StartViewChangeHeaderView extends HeaderView {
  get group(): bigint {
    return this.u64(START_VIEW_CHANGE_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(START_VIEW_CHANGE_LAYOUT.group);
  }
}

/** DoViewChange (11). The body is the suffix (suffix.ts). */
export class DoViewChangeHeaderView extends HeaderView {
  get op(): bigint {
    return this.u64(DO_VIEW_CHANGE_LAYOUT.op);
  }
  get opNumber(): number {
    return this.u64Number(DO_VIEW_CHANGE_LAYOUT.op);
  }
  get commit(): bigint {
    return this.u64(DO_VIEW_CHANGE_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(DO_VIEW_CHANGE_LAYOUT.commit);
  }
  get group(): bigint {
    return this.u64(DO_VIEW_CHANGE_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(DO_VIEW_CHANGE_LAYOUT.group);
  }
  get logView(): number {
    return this.u32(DO_VIEW_CHANGE_LAYOUT.logView);
  }
  get nackBitset(): bigint {
    return this.u128(DO_VIEW_CHANGE_LAYOUT.nackBitset);
  }
  get presentBitset(): bigint {
    return this.u128(DO_VIEW_CHANGE_LAYOUT.presentBitset);
  }
  /** Nack bit i without a bigint (i in 0..127). */
  nack(index: number): boolean {
    return bitAt(this.bytes, this.base + DO_VIEW_CHANGE_LAYOUT.nackBitset.offset, index);
  }
  /** Present bit i without a bigint (i in 0..127). */
  present(index: number): boolean {
    return bitAt(this.bytes, this.base + DO_VIEW_CHANGE_LAYOUT.presentBitset.offset, index);
  }
  /** Number of 256-byte suffix entries the body holds. */
  get suffixCount(): number {
    return Math.floor(Math.max(0, this.bodyLength) / HEADER_SIZE);
  }
}

/** StartView (12). */
export class StartViewHeaderView extends HeaderView {
  get op(): bigint {
    return this.u64(START_VIEW_LAYOUT.op);
  }
  get opNumber(): number {
    return this.u64Number(START_VIEW_LAYOUT.op);
  }
  get commit(): bigint {
    return this.u64(START_VIEW_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(START_VIEW_LAYOUT.commit);
  }
  get group(): bigint {
    return this.u64(START_VIEW_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(START_VIEW_LAYOUT.group);
  }
  get incarnation(): bigint {
    return this.u128(START_VIEW_LAYOUT.incarnation);
  }
  get suffixCount(): number {
    return Math.floor(Math.max(0, this.bodyLength) / HEADER_SIZE);
  }
}

/** Eviction (13): client-bound; never valid inbound on the replica plane. */
export class EvictionHeaderView extends HeaderView {
  get client(): bigint {
    return this.u128(EVICTION_LAYOUT.client);
  }
  get serverProtocolVersion(): number {
    return this.u32(EVICTION_LAYOUT.serverProtocolVersion);
  }
  get serverProtocolVersionMin(): number {
    return this.u32(EVICTION_LAYOUT.serverProtocolVersionMin);
  }
  get reason(): number {
    return this.u8(EVICTION_LAYOUT.reason);
  }
}

/** ReplicaHello / ReplicaChallenge / ReplicaFinish (14..16). */
export class HandshakeHeaderView extends HeaderView {
  /** The 32 nonce bytes in place. */
  get nonce(): Uint8Array {
    const at = this.base + HANDSHAKE_LAYOUT.nonce.offset;
    return this.bytes.subarray(at, at + HANDSHAKE_LAYOUT.nonce.size);
  }
  /** The 32 MAC bytes in place. */
  get mac(): Uint8Array {
    const at = this.base + HANDSHAKE_LAYOUT.mac.offset;
    return this.bytes.subarray(at, at + HANDSHAKE_LAYOUT.mac.size);
  }
  get status(): number {
    return this.u8(HANDSHAKE_LAYOUT.status);
  }
}

/** RequestStartView (17). */
export class RequestStartViewHeaderView extends HeaderView {
  get group(): bigint {
    return this.u64(REQUEST_START_VIEW_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(REQUEST_START_VIEW_LAYOUT.group);
  }
  get incarnation(): bigint {
    return this.u128(REQUEST_START_VIEW_LAYOUT.incarnation);
  }
}

/** RequestPrepares (18). */
export class RequestPreparesHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(REQUEST_PREPARES_LAYOUT.nonce);
  }
  get fromOp(): bigint {
    return this.u64(REQUEST_PREPARES_LAYOUT.fromOp);
  }
  get fromOpNumber(): number {
    return this.u64Number(REQUEST_PREPARES_LAYOUT.fromOp);
  }
  get toOp(): bigint {
    return this.u64(REQUEST_PREPARES_LAYOUT.toOp);
  }
  get toOpNumber(): number {
    return this.u64Number(REQUEST_PREPARES_LAYOUT.toOp);
  }
  get group(): bigint {
    return this.u64(REQUEST_PREPARES_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(REQUEST_PREPARES_LAYOUT.group);
  }
}

/** RepairDone (20) and RangeEvicted (21). */
export class RepairResponseHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(REPAIR_RESPONSE_LAYOUT.nonce);
  }
  get op(): bigint {
    return this.u64(REPAIR_RESPONSE_LAYOUT.op);
  }
  get opNumber(): number {
    return this.u64Number(REPAIR_RESPONSE_LAYOUT.op);
  }
  get group(): bigint {
    return this.u64(REPAIR_RESPONSE_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(REPAIR_RESPONSE_LAYOUT.group);
  }
}

/** RequestStateTransfer (22). */
export class RequestStateTransferHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(REQUEST_STATE_TRANSFER_LAYOUT.nonce);
  }
  get group(): bigint {
    return this.u64(REQUEST_STATE_TRANSFER_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(REQUEST_STATE_TRANSFER_LAYOUT.group);
  }
}

/** StateTransferTarget (23). The body is the ISM1 manifest when `available == 1`. */
export class StateTransferTargetHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(STATE_TRANSFER_TARGET_LAYOUT.nonce);
  }
  get commitOp(): bigint {
    return this.u64(STATE_TRANSFER_TARGET_LAYOUT.commitOp);
  }
  get commitOpNumber(): number {
    return this.u64Number(STATE_TRANSFER_TARGET_LAYOUT.commitOp);
  }
  get group(): bigint {
    return this.u64(STATE_TRANSFER_TARGET_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(STATE_TRANSFER_TARGET_LAYOUT.group);
  }
  get available(): number {
    return this.u8(STATE_TRANSFER_TARGET_LAYOUT.available);
  }
  get unavailableTransient(): number {
    return this.u8(STATE_TRANSFER_TARGET_LAYOUT.unavailableTransient);
  }
  get commitMax(): bigint {
    return this.u64(STATE_TRANSFER_TARGET_LAYOUT.commitMax);
  }
  get commitMaxNumber(): number {
    return this.u64Number(STATE_TRANSFER_TARGET_LAYOUT.commitMax);
  }
}

/** RequestStateChunk (24). */
export class RequestStateChunkHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(REQUEST_STATE_CHUNK_LAYOUT.nonce);
  }
  /** Byte offset into the artifact. */
  get offset(): bigint {
    return this.u64(REQUEST_STATE_CHUNK_LAYOUT.offset);
  }
  get offsetNumber(): number {
    return this.u64Number(REQUEST_STATE_CHUNK_LAYOUT.offset);
  }
  get group(): bigint {
    return this.u64(REQUEST_STATE_CHUNK_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(REQUEST_STATE_CHUNK_LAYOUT.group);
  }
  get len(): number {
    return this.u32(REQUEST_STATE_CHUNK_LAYOUT.len);
  }
  get artifact(): number {
    return this.u32(REQUEST_STATE_CHUNK_LAYOUT.artifact);
  }
}

/** StateChunk (25). The body is raw artifact bytes. */
export class StateChunkHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(STATE_CHUNK_LAYOUT.nonce);
  }
  get offset(): bigint {
    return this.u64(STATE_CHUNK_LAYOUT.offset);
  }
  get offsetNumber(): number {
    return this.u64Number(STATE_CHUNK_LAYOUT.offset);
  }
  get group(): bigint {
    return this.u64(STATE_CHUNK_LAYOUT.group);
  }
  get groupIsMetadata(): boolean {
    return this.isMetadataGroup(STATE_CHUNK_LAYOUT.group);
  }
  get artifact(): number {
    return this.u32(STATE_CHUNK_LAYOUT.artifact);
  }
}

/** ForwardRegister (26). */
export class ForwardRegisterHeaderView extends HeaderView {
  get client(): bigint {
    return this.u128(FORWARD_REGISTER_LAYOUT.client);
  }
  get nonce(): bigint {
    return this.u128(FORWARD_REGISTER_LAYOUT.nonce);
  }
  get userId(): number {
    return this.u32(FORWARD_REGISTER_LAYOUT.userId);
  }
}

/** ForwardRegisterResult (27). */
export class ForwardRegisterResultHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(FORWARD_REGISTER_RESULT_LAYOUT.nonce);
  }
  get client(): bigint {
    return this.u128(FORWARD_REGISTER_RESULT_LAYOUT.client);
  }
  get epoch(): bigint {
    return this.u64(FORWARD_REGISTER_RESULT_LAYOUT.epoch);
  }
  get watermark(): bigint {
    return this.u64(FORWARD_REGISTER_RESULT_LAYOUT.watermark);
  }
  get outcome(): number {
    return this.u8(FORWARD_REGISTER_RESULT_LAYOUT.outcome);
  }
}

/** ForwardLogout (28). */
export class ForwardLogoutHeaderView extends HeaderView {
  get client(): bigint {
    return this.u128(FORWARD_LOGOUT_LAYOUT.client);
  }
  get nonce(): bigint {
    return this.u128(FORWARD_LOGOUT_LAYOUT.nonce);
  }
  get session(): bigint {
    return this.u64(FORWARD_LOGOUT_LAYOUT.session);
  }
  get request(): bigint {
    return this.u64(FORWARD_LOGOUT_LAYOUT.request);
  }
}

/** ForwardLogoutResult (29). */
export class ForwardLogoutResultHeaderView extends HeaderView {
  get nonce(): bigint {
    return this.u128(FORWARD_LOGOUT_RESULT_LAYOUT.nonce);
  }
  get client(): bigint {
    return this.u128(FORWARD_LOGOUT_RESULT_LAYOUT.client);
  }
  get commit(): bigint {
    return this.u64(FORWARD_LOGOUT_RESULT_LAYOUT.commit);
  }
  get commitNumber(): number {
    return this.u64Number(FORWARD_LOGOUT_RESULT_LAYOUT.commit);
  }
  get outcome(): number {
    return this.u8(FORWARD_LOGOUT_RESULT_LAYOUT.outcome);
  }
}

function bitAt(bytes: Uint8Array, at: number, index: number): boolean {
  assert(Number.isInteger(index) && index >= 0 && index < 128, 'bit index out of 0..127');
  return (((bytes[at + (index >>> 3)] as number) >>> (index & 7)) & 1) === 1;
}

/** Reads one header field generically (control paths: checkers, tests, logs). */
export function readField(
  bytes: Uint8Array,
  base: number,
  field: { readonly offset: number; readonly size: number; readonly kind: string },
): number | bigint | Uint8Array {
  const at = base + field.offset;
  switch (field.kind) {
    case 'u8':
      return readU8(bytes, at);
    case 'u32':
      return readU32(bytes, at);
    case 'u64':
      return readU64Big(bytes, at);
    case 'u128':
      return readU128Big(bytes, at);
    default:
      return bytes.subarray(at, at + field.size);
  }
}

/** The view class for each command value, index 0..29 (control paths; hot paths keep one view). */
export const VIEW_CLASS_BY_COMMAND: readonly (new () => HeaderView)[] = Object.freeze([
  GenericHeaderView, // 0
  GenericHeaderView, // 1
  GenericHeaderView, // 2
  GenericHeaderView, // 3
  GenericHeaderView, // 4
  RoutedRequestHeaderView, // 5
  PrepareHeaderView, // 6
  PrepareOkHeaderView, // 7
  CachedReplyHeaderView, // 8
  CommitHeaderView, // 9
  StartViewChangeHeaderView, // 10
  DoViewChangeHeaderView, // 11
  StartViewHeaderView, // 12
  EvictionHeaderView, // 13
  HandshakeHeaderView, // 14
  HandshakeHeaderView, // 15
  HandshakeHeaderView, // 16
  RequestStartViewHeaderView, // 17
  RequestPreparesHeaderView, // 18
  PrepareHeaderView, // 19
  RepairResponseHeaderView, // 20
  RepairResponseHeaderView, // 21
  RequestStateTransferHeaderView, // 22
  StateTransferTargetHeaderView, // 23
  RequestStateChunkHeaderView, // 24
  StateChunkHeaderView, // 25
  ForwardRegisterHeaderView, // 26
  ForwardRegisterResultHeaderView, // 27
  ForwardLogoutHeaderView, // 28
  ForwardLogoutResultHeaderView, // 29
]);

/** A fresh view of the right class bound to the header at `base`, or undefined for command > 29. */
export function viewHeader(bytes: Uint8Array, base = 0): HeaderView | undefined {
  if (!(base >= 0 && bytes.length - base >= HEADER_SIZE)) return undefined;
  const View = VIEW_CLASS_BY_COMMAND[bytes[base + PREFIX_LAYOUT.command.offset] as number];
  return View === undefined ? undefined : new View().bind(bytes, base);
}
