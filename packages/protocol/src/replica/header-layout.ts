/**
 * One frozen offset table per 256-byte header shape, for every command value 0..29
 * (replication-semantics.md §1.1 and §1.3; cluster.mdx; framing.mdx for Reply and Eviction).
 * Every table lists every byte: named fields, `reserved` runs and `padding`. A load-time
 * self-check (bottom of this file) throws if a table is not contiguous, does not total 256
 * bytes, misaligns a field, or does not repeat the common 128-byte prefix exactly: that is our
 * bug, never bad input.
 *
 * Field kinds: `u8`/`u32` read as numbers, `u64`/`u128` as bigint, `bytes` as a byte view
 * (the handshake's nonce and MAC), `reserved` = must be written as zero.
 */
import { Command, COMMAND_MAX } from './command.js';

export type FieldKind = 'u8' | 'u32' | 'u64' | 'u128' | 'bytes' | 'reserved';

export interface FieldSpec<K extends FieldKind = FieldKind> {
  readonly offset: number;
  readonly size: number;
  readonly kind: K;
}

export type HeaderLayout = Readonly<Record<string, FieldSpec>>;

/** Size of every header on both planes. */
export const HEADER_SIZE = 256;
/** Size of the common prefix that every header shape repeats. */
export const PREFIX_SIZE = 128;

const KIND_SIZE: Readonly<Record<Exclude<FieldKind, 'bytes' | 'reserved'>, number>> = {
  u8: 1,
  u32: 4,
  u64: 8,
  u128: 16,
};

function f<K extends FieldKind>(offset: number, size: number, kind: K): FieldSpec<K> {
  return Object.freeze({ offset, size, kind });
}
const u8 = (offset: number): FieldSpec<'u8'> => f(offset, 1, 'u8');
const u32 = (offset: number): FieldSpec<'u32'> => f(offset, 4, 'u32');
const u64 = (offset: number): FieldSpec<'u64'> => f(offset, 8, 'u64');
const u128 = (offset: number): FieldSpec<'u128'> => f(offset, 16, 'u128');
const bytes = (offset: number, size: number): FieldSpec<'bytes'> => f(offset, size, 'bytes');
const reserved = (offset: number, size: number): FieldSpec<'reserved'> => f(offset, size, 'reserved');

/** §1.1: the common 128-byte prefix (`GenericHeader` bytes 0..128). */
export const PREFIX_LAYOUT = Object.freeze({
  checksum: u128(0),
  checksumBody: u128(16),
  cluster: u128(32),
  size: u32(48),
  view: u32(52),
  release: u32(56),
  command: u8(60),
  replica: u8(61),
  reservedFrame: reserved(62, 66),
});

/** Named prefix offsets used on the hot paths (same numbers as PREFIX_LAYOUT, checked below). */
export const OFFSET_CHECKSUM = 0;
export const OFFSET_CHECKSUM_BODY = 16;
export const OFFSET_CLUSTER = 32;
export const OFFSET_SIZE = 48;
export const OFFSET_VIEW = 52;
export const OFFSET_RELEASE = 56;
export const OFFSET_COMMAND = 60;
export const OFFSET_REPLICA = 61;
/** The frame seal covers header bytes 16..256 (§2.2). */
export const SEAL_INPUT_START = 16;

/** §1.1 `GenericHeader`: commands 0..4 (no typed header exists). */
export const GENERIC_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  reservedCommand: reserved(128, 128),
});

/** §1.3 "Handshake", §3.3: commands 14, 15, 16. */
export const HANDSHAKE_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: bytes(128, 32),
  mac: bytes(160, 32),
  status: u8(192),
  reserved: reserved(193, 63),
});

/**
 * §1.3 "Client-plane shapes": Request (5) as parsed on the replica plane (RoutedRequest): the
 * client layout with `group` at 248 and the reserved run shortened to 200..248. Bytes 196..200
 * carry the u32 command code when `operation = 2` (framing.mdx), zero otherwise.
 */
export const ROUTED_REQUEST_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  client: u128(128),
  requestChecksum: u128(144),
  timestamp: u64(160),
  request: u64(168),
  operation: u8(176),
  padding: reserved(177, 7),
  session: u64(184),
  userId: u32(192),
  code: u32(196),
  reserved: reserved(200, 48),
  group: u64(248),
});

/** §1.3 Prepare (6); RepairPrepare (19) is byte-identical. */
export const PREPARE_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  client: u128(128),
  parent: u128(144),
  requestChecksum: u128(160),
  op: u64(176),
  commit: u64(184),
  timestamp: u64(192),
  request: u64(200),
  operation: u8(208),
  padding: reserved(209, 7),
  group: u64(216),
  userId: u32(224),
  reserved: reserved(228, 28),
});

/** §1.3 PrepareOk (7). */
export const PREPARE_OK_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  parent: u128(128),
  prepareChecksum: u128(144),
  op: u64(160),
  commit: u64(168),
  timestamp: u64(176),
  request: u64(184),
  operation: u8(192),
  padding: reserved(193, 7),
  group: u64(200),
  reserved: reserved(208, 48),
});

/** framing.mdx ReplyHeader (8). */
export const REPLY_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  requestChecksum: u128(128),
  context: u128(144),
  client: u128(160),
  op: u64(176),
  commit: u64(184),
  timestamp: u64(192),
  request: u64(200),
  operation: u8(208),
  padding: reserved(209, 7),
  status: u32(216),
  reserved: reserved(220, 36),
});

/** §1.3 Commit (9). */
export const COMMIT_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  commitChecksum: u128(128),
  timestampMonotonic: u64(144),
  commit: u64(152),
  checkpointOp: u64(160),
  group: u64(168),
  reserved: reserved(176, 80),
});

/** §1.3 StartViewChange (10). */
export const START_VIEW_CHANGE_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  group: u64(128),
  reserved: reserved(136, 120),
});

/** §1.3 DoViewChange (11). */
export const DO_VIEW_CHANGE_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  op: u64(128),
  commit: u64(136),
  group: u64(144),
  logView: u32(152),
  reserved: reserved(156, 68),
  nackBitset: u128(224),
  presentBitset: u128(240),
});

/** §1.3 StartView (12). */
export const START_VIEW_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  op: u64(128),
  commit: u64(136),
  group: u64(144),
  reserved: reserved(152, 88),
  incarnation: u128(240),
});

/** framing.mdx EvictionHeader (13). */
export const EVICTION_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  client: u128(128),
  serverProtocolVersion: u32(144),
  serverProtocolVersionMin: u32(148),
  reserved: reserved(152, 103),
  reason: u8(255),
});

/** §1.3 RequestStartView (17). */
export const REQUEST_START_VIEW_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  group: u64(128),
  reserved: reserved(136, 104),
  incarnation: u128(240),
});

/** §1.3 RequestPrepares (18). */
export const REQUEST_PREPARES_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  fromOp: u64(144),
  toOp: u64(152),
  group: u64(160),
  reserved: reserved(168, 88),
});

/** §1.3 RepairDone (20) and RangeEvicted (21): one layout under two command bytes. */
export const REPAIR_RESPONSE_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  op: u64(144),
  group: u64(152),
  reserved: reserved(160, 96),
});

/** §1.3 RequestStateTransfer (22). */
export const REQUEST_STATE_TRANSFER_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  group: u64(144),
  reserved: reserved(152, 104),
});

/** §1.3 StateTransferTarget (23). */
export const STATE_TRANSFER_TARGET_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  commitOp: u64(144),
  group: u64(152),
  available: u8(160),
  unavailableTransient: u8(161),
  padding: reserved(162, 6),
  commitMax: u64(168),
  reserved: reserved(176, 80),
});

/** §1.3 RequestStateChunk (24). */
export const REQUEST_STATE_CHUNK_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  offset: u64(144),
  group: u64(152),
  len: u32(160),
  artifact: u32(164),
  reserved: reserved(168, 88),
});

/** §1.3 StateChunk (25). */
export const STATE_CHUNK_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  offset: u64(144),
  group: u64(152),
  artifact: u32(160),
  reserved: reserved(164, 92),
});

/** §1.3 ForwardRegister (26). */
export const FORWARD_REGISTER_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  client: u128(128),
  nonce: u128(144),
  userId: u32(160),
  reserved: reserved(164, 92),
});

/** §1.3 ForwardRegisterResult (27). */
export const FORWARD_REGISTER_RESULT_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  client: u128(144),
  epoch: u64(160),
  watermark: u64(168),
  reserved: reserved(176, 79),
  outcome: u8(255),
});

/** §1.3 ForwardLogout (28). */
export const FORWARD_LOGOUT_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  client: u128(128),
  nonce: u128(144),
  session: u64(160),
  request: u64(168),
  reserved: reserved(176, 80),
});

/** §1.3 ForwardLogoutResult (29). */
export const FORWARD_LOGOUT_RESULT_LAYOUT = Object.freeze({
  ...PREFIX_LAYOUT,
  nonce: u128(128),
  client: u128(144),
  commit: u64(160),
  reserved: reserved(168, 87),
  outcome: u8(255),
});

/** The header shape of each command value, index 0..29. */
export const LAYOUT_BY_COMMAND: readonly HeaderLayout[] = Object.freeze([
  GENERIC_LAYOUT, // 0 Reserved
  GENERIC_LAYOUT, // 1 Ping
  GENERIC_LAYOUT, // 2 Pong
  GENERIC_LAYOUT, // 3 PingClient
  GENERIC_LAYOUT, // 4 PongClient
  ROUTED_REQUEST_LAYOUT, // 5 Request (as routed on the replica plane)
  PREPARE_LAYOUT, // 6 Prepare
  PREPARE_OK_LAYOUT, // 7 PrepareOk
  REPLY_LAYOUT, // 8 Reply
  COMMIT_LAYOUT, // 9 Commit
  START_VIEW_CHANGE_LAYOUT, // 10 StartViewChange
  DO_VIEW_CHANGE_LAYOUT, // 11 DoViewChange
  START_VIEW_LAYOUT, // 12 StartView
  EVICTION_LAYOUT, // 13 Eviction
  HANDSHAKE_LAYOUT, // 14 ReplicaHello
  HANDSHAKE_LAYOUT, // 15 ReplicaChallenge
  HANDSHAKE_LAYOUT, // 16 ReplicaFinish
  REQUEST_START_VIEW_LAYOUT, // 17 RequestStartView
  REQUEST_PREPARES_LAYOUT, // 18 RequestPrepares
  PREPARE_LAYOUT, // 19 RepairPrepare
  REPAIR_RESPONSE_LAYOUT, // 20 RepairDone
  REPAIR_RESPONSE_LAYOUT, // 21 RangeEvicted
  REQUEST_STATE_TRANSFER_LAYOUT, // 22 RequestStateTransfer
  STATE_TRANSFER_TARGET_LAYOUT, // 23 StateTransferTarget
  REQUEST_STATE_CHUNK_LAYOUT, // 24 RequestStateChunk
  STATE_CHUNK_LAYOUT, // 25 StateChunk
  FORWARD_REGISTER_LAYOUT, // 26 ForwardRegister
  FORWARD_REGISTER_RESULT_LAYOUT, // 27 ForwardRegisterResult
  FORWARD_LOGOUT_LAYOUT, // 28 ForwardLogout
  FORWARD_LOGOUT_RESULT_LAYOUT, // 29 ForwardLogoutResult
]);

/** Every distinct layout with its header-type name (docs, tests, checkers). */
export const NAMED_LAYOUTS: Readonly<Record<string, HeaderLayout>> = Object.freeze({
  GenericHeader: GENERIC_LAYOUT,
  HandshakeHeader: HANDSHAKE_LAYOUT,
  RoutedRequestHeader: ROUTED_REQUEST_LAYOUT,
  PrepareHeader: PREPARE_LAYOUT,
  PrepareOkHeader: PREPARE_OK_LAYOUT,
  ReplyHeader: REPLY_LAYOUT,
  CommitHeader: COMMIT_LAYOUT,
  StartViewChangeHeader: START_VIEW_CHANGE_LAYOUT,
  DoViewChangeHeader: DO_VIEW_CHANGE_LAYOUT,
  StartViewHeader: START_VIEW_LAYOUT,
  EvictionHeader: EVICTION_LAYOUT,
  RequestStartViewHeader: REQUEST_START_VIEW_LAYOUT,
  RequestPreparesHeader: REQUEST_PREPARES_LAYOUT,
  RepairResponseHeader: REPAIR_RESPONSE_LAYOUT,
  RequestStateTransferHeader: REQUEST_STATE_TRANSFER_LAYOUT,
  StateTransferTargetHeader: STATE_TRANSFER_TARGET_LAYOUT,
  RequestStateChunkHeader: REQUEST_STATE_CHUNK_LAYOUT,
  StateChunkHeader: STATE_CHUNK_LAYOUT,
  ForwardRegisterHeader: FORWARD_REGISTER_LAYOUT,
  ForwardRegisterResultHeader: FORWARD_REGISTER_RESULT_LAYOUT,
  ForwardLogoutHeader: FORWARD_LOGOUT_LAYOUT,
  ForwardLogoutResultHeader: FORWARD_LOGOUT_RESULT_LAYOUT,
});

/** The layout of a command value, or undefined outside 0..29. */
export function layoutOf(command: number): HeaderLayout | undefined {
  return LAYOUT_BY_COMMAND[command];
}

/** The layout's fields ordered by offset. */
export function fieldsInOrder(layout: HeaderLayout): [string, FieldSpec][] {
  return Object.entries(layout).sort((a, b) => a[1].offset - b[1].offset);
}

/**
 * The self-check. Returns the first problem found, or null. Exported so a test can feed it a
 * deliberately broken table; the module runs it on every layout at load and throws.
 */
export function checkReplicaLayout(name: string, layout: HeaderLayout): string | null {
  const fields = fieldsInOrder(layout);
  let cursor = 0;
  for (const [field, spec] of fields) {
    if (spec.offset !== cursor) return `${name}.${field}: offset ${spec.offset}, expected ${cursor} (gap or overlap)`;
    if (!(spec.size > 0)) return `${name}.${field}: empty field`;
    if (spec.kind !== 'bytes' && spec.kind !== 'reserved') {
      const natural = KIND_SIZE[spec.kind];
      if (spec.size !== natural) return `${name}.${field}: ${spec.kind} of size ${spec.size}`;
      // #[repr(C)] places every integer at its natural alignment (u128 at 16).
      if (spec.offset % natural !== 0) return `${name}.${field}: ${spec.kind} misaligned at ${spec.offset}`;
    }
    cursor += spec.size;
  }
  if (cursor !== HEADER_SIZE) return `${name}: totals ${cursor} bytes, expected ${HEADER_SIZE}`;
  const prefix = fieldsInOrder(PREFIX_LAYOUT);
  const head = fields.filter(([, spec]) => spec.offset < PREFIX_SIZE);
  if (head.length !== prefix.length) return `${name}: prefix has ${head.length} fields, expected ${prefix.length}`;
  for (let i = 0; i < prefix.length; i++) {
    const [expectedName, expected] = prefix[i] as [string, FieldSpec];
    const [actualName, actual] = head[i] as [string, FieldSpec];
    if (
      actualName !== expectedName ||
      actual.offset !== expected.offset ||
      actual.size !== expected.size ||
      actual.kind !== expected.kind
    ) {
      return `${name}: prefix field ${i} is ${actualName}@${actual.offset}, expected ${expectedName}@${expected.offset}`;
    }
  }
  return null;
}

function selfCheck(): void {
  const hot: [number, FieldSpec][] = [
    [OFFSET_CHECKSUM, PREFIX_LAYOUT.checksum],
    [OFFSET_CHECKSUM_BODY, PREFIX_LAYOUT.checksumBody],
    [OFFSET_CLUSTER, PREFIX_LAYOUT.cluster],
    [OFFSET_SIZE, PREFIX_LAYOUT.size],
    [OFFSET_VIEW, PREFIX_LAYOUT.view],
    [OFFSET_RELEASE, PREFIX_LAYOUT.release],
    [OFFSET_COMMAND, PREFIX_LAYOUT.command],
    [OFFSET_REPLICA, PREFIX_LAYOUT.replica],
    [SEAL_INPUT_START, PREFIX_LAYOUT.checksumBody],
  ];
  for (const [constant, spec] of hot) {
    if (constant !== spec.offset) throw new Error(`header-layout: named offset ${constant} != table ${spec.offset}`);
  }
  for (const [name, layout] of Object.entries(NAMED_LAYOUTS)) {
    const problem = checkReplicaLayout(name, layout);
    if (problem !== null) throw new Error(`header-layout self-check: ${problem}`);
  }
  if (LAYOUT_BY_COMMAND.length !== COMMAND_MAX + 1) throw new Error('header-layout: a command has no layout');
  const named = new Set(Object.values(NAMED_LAYOUTS));
  for (let c = 0; c <= COMMAND_MAX; c++) {
    const layout = LAYOUT_BY_COMMAND[c];
    if (layout === undefined || !named.has(layout)) throw new Error(`header-layout: command ${c} has no named layout`);
  }
  if (LAYOUT_BY_COMMAND[Command.RepairPrepare] !== LAYOUT_BY_COMMAND[Command.Prepare]) {
    throw new Error('header-layout: RepairPrepare must share the Prepare layout');
  }
}

selfCheck();
