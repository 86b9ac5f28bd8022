/**
 * Replica-plane frame validation: the decode pipeline of replication-semantics.md §1.2, in its
 * order, returning the first reason a frame must be dropped, or null. Never throws, never
 * allocates on the number paths (the hashes return one bigint each).
 *
 *   1  framing     buffer holds 256 bytes; 256 <= size <= messageSizeMax; buffer holds size;
 *                  command <= 29 (a stream error upstream; here just the first reason)
 *   2  class       8, 13 client-bound; 0..4 reserved; 14..16 handshake-only
 *   3  bit pattern operation (5, 6, 7, 19), outcome (27, 29) hold declared values
 *   4  frame seal  sealed commands: bytes 0..16 == widen(XXH3(16..256)); zero is a mismatch
 *   5  validate()  the per-command rules of §1.3 (+ ops must be safe integers, + replica range)
 *   6  DVC / SV    body seal, then the suffix rules of §5.4
 *   7  prepares    identity (when non-zero) and body checksum (when non-zero), §2.5
 */
import { Command, COMMAND_MAX, isSealedCommand } from './command.js';
import {
  FORWARD_LOGOUT_OUTCOME_MAX,
  FORWARD_REGISTER_OUTCOME_MAX,
  isOperation,
  Operation,
} from './discriminants.js';
import {
  COMMIT_LAYOUT,
  DO_VIEW_CHANGE_LAYOUT,
  FORWARD_LOGOUT_LAYOUT,
  FORWARD_LOGOUT_RESULT_LAYOUT,
  FORWARD_REGISTER_LAYOUT,
  FORWARD_REGISTER_RESULT_LAYOUT,
  HEADER_SIZE,
  OFFSET_COMMAND,
  OFFSET_RELEASE,
  OFFSET_REPLICA,
  OFFSET_SIZE,
  OFFSET_VIEW,
  PREPARE_LAYOUT,
  PREPARE_OK_LAYOUT,
  REPAIR_RESPONSE_LAYOUT,
  REPLY_LAYOUT,
  REQUEST_PREPARES_LAYOUT,
  REQUEST_STATE_CHUNK_LAYOUT,
  ROUTED_REQUEST_LAYOUT,
  START_VIEW_LAYOUT,
  STATE_CHUNK_LAYOUT,
  STATE_TRANSFER_TARGET_LAYOUT,
} from './header-layout.js';
import { allZero, readU32, u64IsSafe } from './little-endian.js';
import { verifyBodySeal, verifyFrameSeal, verifyPrepareIdentity } from './seal.js';
import { SUFFIX_ENTRIES_MAX, bitsetBytesHaveBitFrom, validateSuffix } from './suffix.js';

/** `message_bus.max_message_size` default: 64 MiB (cluster.mdx "Transport"). */
export const MESSAGE_SIZE_MAX_DEFAULT = 64 * 1024 * 1024;

export interface ValidateLimits {
  /** Largest accepted frame (`size`), header included. Default 64 MiB. */
  readonly messageSizeMax?: number;
  /** When given, a frame whose `replica` is >= this is dropped (pitfalls 9, §13 item 5). */
  readonly replicaCount?: number;
}

const NO_LIMITS: ValidateLimits = Object.freeze({});

type Rule = (bytes: Uint8Array, base: number, size: number) => string | null;

/**
 * Validates the replica-plane frame at `bytes[offset, offset + size)`; the buffer must hold the
 * whole frame (header and body). Returns null when the frame may be handed to its handler, or
 * the reason it must be dropped.
 */
export function validateHeader(bytes: Uint8Array, offset = 0, limits: ValidateLimits = NO_LIMITS): string | null {
  // 1. framing
  if (!Number.isInteger(offset) || offset < 0 || bytes.length - offset < HEADER_SIZE) return 'truncated_header';
  const size = readU32(bytes, offset + OFFSET_SIZE);
  if (size < HEADER_SIZE) return 'size_below_header';
  if (size > (limits.messageSizeMax ?? MESSAGE_SIZE_MAX_DEFAULT)) return 'size_above_max';
  if (bytes.length - offset < size) return 'truncated_frame';
  const command = bytes[offset + OFFSET_COMMAND] as number;
  if (command > COMMAND_MAX) return 'command_out_of_range';

  // 2. classification
  if (command === Command.Reply || command === Command.Eviction) return 'client_bound_command';
  if (command <= Command.PongClient) return 'reserved_command';
  if (command >= Command.ReplicaHello && command <= Command.ReplicaFinish) return 'handshake_command';

  // 3. typed bit patterns
  const pattern = bitPatternProblem(bytes, offset, command);
  if (pattern !== null) return pattern;

  // 4. frame seal
  if (isSealedCommand(command) && !verifyFrameSeal(bytes, offset)) return 'frame_seal_mismatch';

  // 5. validate()
  const rule = RULES[command];
  const problem = rule === undefined ? 'no_rule_for_command' : rule(bytes, offset, size);
  if (problem !== null) return problem;
  const replicaCount = limits.replicaCount;
  if (replicaCount !== undefined && (bytes[offset + OFFSET_REPLICA] as number) >= replicaCount) {
    return 'replica_out_of_range';
  }

  // 6. suffix-carrying frames
  if (command === Command.DoViewChange || command === Command.StartView) {
    if (!verifyBodySeal(bytes, offset)) return 'body_seal_mismatch';
    return validateSuffix(bytes, offset);
  }

  // 7. prepares
  if (command === Command.Prepare || command === Command.RepairPrepare) {
    if (!verifyPrepareIdentity(bytes, offset)) return 'prepare_identity_mismatch';
    if (!verifyBodySeal(bytes, offset)) return 'body_seal_mismatch';
  }
  return null;
}

function bitPatternProblem(bytes: Uint8Array, base: number, command: number): string | null {
  switch (command) {
    case Command.Request:
      return isOperation(bytes[base + ROUTED_REQUEST_LAYOUT.operation.offset] as number) ? null : 'invalid_operation';
    case Command.Prepare:
    case Command.RepairPrepare:
      return isOperation(bytes[base + PREPARE_LAYOUT.operation.offset] as number) ? null : 'invalid_operation';
    case Command.PrepareOk:
      return isOperation(bytes[base + PREPARE_OK_LAYOUT.operation.offset] as number) ? null : 'invalid_operation';
    case Command.ForwardRegisterResult:
      return (bytes[base + FORWARD_REGISTER_RESULT_LAYOUT.outcome.offset] as number) <= FORWARD_REGISTER_OUTCOME_MAX
        ? null
        : 'invalid_outcome';
    case Command.ForwardLogoutResult:
      return (bytes[base + FORWARD_LOGOUT_RESULT_LAYOUT.outcome.offset] as number) <= FORWARD_LOGOUT_OUTCOME_MAX
        ? null
        : 'invalid_outcome';
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Small in-place predicates.

function isZero(bytes: Uint8Array, base: number, field: { readonly offset: number; readonly size: number }): boolean {
  return allZero(bytes, base + field.offset, base + field.offset + field.size);
}

/** u64 at `a` > u64 at `b`, by words. */
function u64Above(bytes: Uint8Array, a: number, b: number): boolean {
  const aHigh = readU32(bytes, a + 4);
  const bHigh = readU32(bytes, b + 4);
  if (aHigh !== bHigh) return aHigh > bHigh;
  return readU32(bytes, a) > readU32(bytes, b);
}

function safe(bytes: Uint8Array, base: number, field: { readonly offset: number }): boolean {
  return u64IsSafe(bytes, base + field.offset);
}

const NOT_SAFE = 'op_not_safe_integer';

function releaseZero(bytes: Uint8Array, base: number): boolean {
  return readU32(bytes, base + OFFSET_RELEASE) === 0;
}

/** §1.3 DoViewChange / StartView body rule: whole headers, at most 128. */
function suffixLengthProblem(size: number): string | null {
  const bodyLength = size - HEADER_SIZE;
  if (bodyLength % HEADER_SIZE !== 0) return 'body_not_whole_headers';
  if (bodyLength / HEADER_SIZE > SUFFIX_ENTRIES_MAX) return 'suffix_too_many_entries';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Per-command validate() (§1.3). Index = command; undefined for commands step 2 drops.

const RULES: readonly (Rule | undefined)[] = (() => {
  const rules: (Rule | undefined)[] = new Array<Rule | undefined>(COMMAND_MAX + 1).fill(undefined);

  rules[Command.Request] = (b, o) => {
    const L = ROUTED_REQUEST_LAYOUT;
    if (isZero(b, o, L.client)) return 'client_zero';
    const operation = b[o + L.operation.offset] as number;
    if (operation === Operation.Reserved) return 'operation_reserved';
    const sessionZero = isZero(b, o, L.session);
    const requestZero = isZero(b, o, L.request);
    if (operation === Operation.Register) {
      if (!sessionZero) return 'register_session_nonzero';
      if (!requestZero) return 'register_request_nonzero';
    } else if (operation !== Operation.NonReplicated) {
      if (sessionZero) return 'session_zero';
      if (requestZero) return 'request_zero';
    }
    return null;
  };

  const prepare: Rule = (b, o) => {
    const L = PREPARE_LAYOUT;
    if (!isZero(b, o, L.reservedFrame)) return 'reserved_frame_nonzero';
    if (!isZero(b, o, L.reserved)) return 'reserved_nonzero';
    if (!safe(b, o, L.op) || !safe(b, o, L.commit)) return NOT_SAFE;
    return null;
  };
  rules[Command.Prepare] = prepare;
  rules[Command.RepairPrepare] = prepare;

  rules[Command.PrepareOk] = (b, o) => {
    const L = PREPARE_OK_LAYOUT;
    if (!safe(b, o, L.op) || !safe(b, o, L.commit)) return NOT_SAFE;
    return null;
  };

  rules[Command.Commit] = (b, o, size) => {
    if (size !== HEADER_SIZE) return 'size_not_header_only';
    if (!safe(b, o, COMMIT_LAYOUT.commit)) return NOT_SAFE;
    return null;
  };

  rules[Command.StartViewChange] = (b, o) => (releaseZero(b, o) ? null : 'release_nonzero');

  rules[Command.DoViewChange] = (b, o, size) => {
    const L = DO_VIEW_CHANGE_LAYOUT;
    if (!releaseZero(b, o)) return 'release_nonzero';
    if (readU32(b, o + L.logView.offset) > readU32(b, o + OFFSET_VIEW)) return 'log_view_above_view';
    if (u64Above(b, o + L.commit.offset, o + L.op.offset)) return 'commit_above_op';
    const length = suffixLengthProblem(size);
    if (length !== null) return length;
    const count = (size - HEADER_SIZE) / HEADER_SIZE;
    if (bitsetBytesHaveBitFrom(b, o + L.nackBitset.offset, count)) return 'nack_bit_past_suffix';
    if (bitsetBytesHaveBitFrom(b, o + L.presentBitset.offset, count)) return 'present_bit_past_suffix';
    if (!safe(b, o, L.op) || !safe(b, o, L.commit)) return NOT_SAFE;
    return null;
  };

  rules[Command.StartView] = (b, o, size) => {
    const L = START_VIEW_LAYOUT;
    if (!releaseZero(b, o)) return 'release_nonzero';
    if (u64Above(b, o + L.commit.offset, o + L.op.offset)) return 'commit_above_op';
    const length = suffixLengthProblem(size);
    if (length !== null) return length;
    if (!safe(b, o, L.op) || !safe(b, o, L.commit)) return NOT_SAFE;
    return null;
  };

  rules[Command.RequestStartView] = (b, o) => (releaseZero(b, o) ? null : 'release_nonzero');

  rules[Command.RequestPrepares] = (b, o) => {
    const L = REQUEST_PREPARES_LAYOUT;
    if (isZero(b, o, L.fromOp)) return 'from_op_zero';
    if (u64Above(b, o + L.fromOp.offset, o + L.toOp.offset)) return 'from_op_above_to_op';
    if (!safe(b, o, L.fromOp) || !safe(b, o, L.toOp)) return NOT_SAFE;
    return null;
  };

  const repairResponse: Rule = (b, o) => (safe(b, o, REPAIR_RESPONSE_LAYOUT.op) ? null : NOT_SAFE);
  rules[Command.RepairDone] = repairResponse;
  rules[Command.RangeEvicted] = repairResponse;

  rules[Command.RequestStateTransfer] = (_b, _o, size) => (size === HEADER_SIZE ? null : 'size_not_header_only');

  rules[Command.StateTransferTarget] = (b, o, size) => {
    const L = STATE_TRANSFER_TARGET_LAYOUT;
    const available = b[o + L.available.offset] as number;
    const transient = b[o + L.unavailableTransient.offset] as number;
    if (available > 1) return 'available_not_boolean';
    if (transient > 1) return 'unavailable_transient_not_boolean';
    if (available === 1 && transient === 1) return 'available_and_transient';
    if (available === 0 && size !== HEADER_SIZE) return 'refusal_with_body';
    if (!safe(b, o, L.commitOp) || !safe(b, o, L.commitMax)) return NOT_SAFE;
    return null;
  };

  rules[Command.RequestStateChunk] = (b, o, size) => {
    const L = REQUEST_STATE_CHUNK_LAYOUT;
    if (readU32(b, o + L.len.offset) === 0) return 'len_zero';
    if (size !== HEADER_SIZE) return 'size_not_header_only';
    if (!safe(b, o, L.offset)) return NOT_SAFE;
    return null;
  };

  rules[Command.StateChunk] = (b, o) => (safe(b, o, STATE_CHUNK_LAYOUT.offset) ? null : NOT_SAFE);

  // Session forwarding (§1.3): size 256, client and nonce non-zero, per-command reserved zero.
  const forwarding =
    (layout: typeof FORWARD_REGISTER_LAYOUT | typeof FORWARD_REGISTER_RESULT_LAYOUT | typeof FORWARD_LOGOUT_LAYOUT | typeof FORWARD_LOGOUT_RESULT_LAYOUT, extra: Rule): Rule =>
    (b, o, size) => {
      if (size !== HEADER_SIZE) return 'size_not_header_only';
      if (isZero(b, o, layout.client)) return 'client_zero';
      if (isZero(b, o, layout.nonce)) return 'nonce_zero';
      if (!isZero(b, o, layout.reserved)) return 'reserved_nonzero';
      return extra(b, o, size);
    };
  rules[Command.ForwardRegister] = forwarding(FORWARD_REGISTER_LAYOUT, () => null);
  rules[Command.ForwardRegisterResult] = forwarding(FORWARD_REGISTER_RESULT_LAYOUT, (b, o) => {
    const L = FORWARD_REGISTER_RESULT_LAYOUT;
    if (b[o + L.outcome.offset] !== 0 && !(isZero(b, o, L.epoch) && isZero(b, o, L.watermark))) {
      return 'bind_on_failure';
    }
    return null;
  });
  rules[Command.ForwardLogout] = forwarding(FORWARD_LOGOUT_LAYOUT, (b, o) => {
    const L = FORWARD_LOGOUT_LAYOUT;
    if (isZero(b, o, L.session)) return 'session_zero';
    if (isZero(b, o, L.request)) return 'request_zero';
    return null;
  });
  rules[Command.ForwardLogoutResult] = forwarding(FORWARD_LOGOUT_RESULT_LAYOUT, (b, o) => {
    const L = FORWARD_LOGOUT_RESULT_LAYOUT;
    if (b[o + L.outcome.offset] !== 0 && !isZero(b, o, L.commit)) return 'commit_on_failure';
    if (!safe(b, o, L.commit)) return NOT_SAFE;
    return null;
  });
  return Object.freeze(rules);
})();

// ---------------------------------------------------------------------------------------------
// Client-bound Reply frames, validated where the replica plane meets them: the cached replies
// inside ICT2. (Eviction validation belongs to the client-plane codec.)

/**
 * Reply (8) validate() of §1.3 plus its bit pattern: command 8 and a declared operation. The
 * buffer must hold the 256-byte header at `offset`.
 */
export function validateCachedReplyHeader(bytes: Uint8Array, offset = 0): string | null {
  if (!(offset >= 0) || bytes.length - offset < HEADER_SIZE) return 'truncated_header';
  if (bytes[offset + OFFSET_COMMAND] !== Command.Reply) return 'not_a_reply';
  if (!isOperation(bytes[offset + REPLY_LAYOUT.operation.offset] as number)) return 'invalid_operation';
  return null;
}
