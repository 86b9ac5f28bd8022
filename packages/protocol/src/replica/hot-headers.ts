/**
 * Direct writers for the four frames a replica builds on every committed op: Prepare (6),
 * PrepareOk (7), Commit (9) and Reply (8). They write the same bytes as the table-driven
 * `encodeHeader` / `encodeReplyFrame` (a property test holds them to it), but take ops as safe
 * integers and write each field straight through one DataView: no field-table walk, no object
 * spreads, no bigint conversions of numbers. Offsets come from the frozen layouts of
 * header-layout.ts, so the self-checked tables stay the single source of truth.
 *
 * Every writer fills a fresh, zeroed buffer (reserved bytes stay zero) and seals last.
 */
import { assert } from '@shoal/stdx';
import { Command } from './command.js';
import { COMMIT_LAYOUT, HEADER_SIZE, PREPARE_LAYOUT, PREPARE_OK_LAYOUT, PREFIX_LAYOUT, REPLY_LAYOUT } from './header-layout.js';
import { takeHeadroom } from './headroom.js';
import { sealBody, sealFrame, sealPrepareIdentity } from './seal.js';

const U64_MASK = 0xffff_ffff_ffff_ffffn;
const TWO_32 = 0x1_0000_0000;

function setU128(view: DataView, offset: number, value: bigint): void {
  if (value === 0n) return; // the buffer is fresh and zeroed
  view.setBigUint64(offset, value & U64_MASK, true);
  view.setBigUint64(offset + 8, (value >> 64n) & U64_MASK, true);
}

/** A u64 field from a safe integer (ops, commits), without a bigint. */
function setU64Number(view: DataView, offset: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, `u64 field: ${value} is not a safe non-negative integer`);
  view.setUint32(offset, value % TWO_32, true);
  view.setUint32(offset + 4, Math.floor(value / TWO_32), true);
}

function setU64(view: DataView, offset: number, value: bigint): void {
  if (value !== 0n) view.setBigUint64(offset, value & U64_MASK, true);
}

interface Prefix {
  readonly cluster: bigint;
  readonly view: number;
  readonly replica: number;
}

function writePrefix(view: DataView, bytes: Uint8Array, p: Prefix, command: number, size: number): void {
  setU128(view, PREFIX_LAYOUT.cluster.offset, p.cluster);
  view.setUint32(PREFIX_LAYOUT.size.offset, size, true);
  view.setUint32(PREFIX_LAYOUT.view.offset, p.view, true);
  bytes[PREFIX_LAYOUT.command.offset] = command;
  bytes[PREFIX_LAYOUT.replica.offset] = p.replica;
}

export interface HotPrepareFields extends Prefix {
  readonly client: bigint;
  readonly parent: bigint;
  readonly requestChecksum: bigint;
  readonly op: number;
  readonly commit: number;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly group: bigint;
  readonly userId: number;
}

/**
 * A sealed Prepare frame: header + body, `checksum_body` by plane, identity computed last (§2.3).
 * A body from `bodyWithHeadroom` is framed in place (its buffer becomes the frame); any other is
 * copied into a fresh one.
 */
export function writePrepareFrame(f: HotPrepareFields, body: Uint8Array): Uint8Array {
  const inPlace = takeHeadroom(body);
  const frame = inPlace ?? new Uint8Array(HEADER_SIZE + body.length);
  const view = new DataView(frame.buffer, frame.byteOffset, HEADER_SIZE);
  writePrefix(view, frame, f, Command.Prepare, frame.length);
  setU128(view, PREPARE_LAYOUT.client.offset, f.client);
  setU128(view, PREPARE_LAYOUT.parent.offset, f.parent);
  setU128(view, PREPARE_LAYOUT.requestChecksum.offset, f.requestChecksum);
  setU64Number(view, PREPARE_LAYOUT.op.offset, f.op);
  setU64Number(view, PREPARE_LAYOUT.commit.offset, f.commit);
  setU64(view, PREPARE_LAYOUT.timestamp.offset, f.timestamp);
  setU64(view, PREPARE_LAYOUT.request.offset, f.request);
  frame[PREPARE_LAYOUT.operation.offset] = f.operation;
  setU64(view, PREPARE_LAYOUT.group.offset, f.group);
  view.setUint32(PREPARE_LAYOUT.userId.offset, f.userId, true);
  if (inPlace === null) frame.set(body, HEADER_SIZE);
  sealBody(frame);
  sealPrepareIdentity(frame);
  return frame;
}

export interface HotPrepareOkFields extends Prefix {
  readonly parent: bigint;
  readonly prepareChecksum: bigint;
  readonly op: number;
  readonly commit: number;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly group: bigint;
}

/** A sealed PrepareOk (header only). */
export function writePrepareOkFrame(f: HotPrepareOkFields): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE);
  const view = new DataView(frame.buffer);
  writePrefix(view, frame, f, Command.PrepareOk, HEADER_SIZE);
  setU128(view, PREPARE_OK_LAYOUT.parent.offset, f.parent);
  setU128(view, PREPARE_OK_LAYOUT.prepareChecksum.offset, f.prepareChecksum);
  setU64Number(view, PREPARE_OK_LAYOUT.op.offset, f.op);
  setU64Number(view, PREPARE_OK_LAYOUT.commit.offset, f.commit);
  setU64(view, PREPARE_OK_LAYOUT.timestamp.offset, f.timestamp);
  setU64(view, PREPARE_OK_LAYOUT.request.offset, f.request);
  frame[PREPARE_OK_LAYOUT.operation.offset] = f.operation;
  setU64(view, PREPARE_OK_LAYOUT.group.offset, f.group);
  sealFrame(frame);
  return frame;
}

export interface HotCommitFields extends Prefix {
  readonly commitChecksum: bigint;
  readonly timestampMonotonic: bigint;
  readonly commit: number;
  readonly checkpointOp: number;
  readonly group: bigint;
}

/** A sealed Commit heartbeat (header only). */
export function writeCommitFrame(f: HotCommitFields): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE);
  const view = new DataView(frame.buffer);
  writePrefix(view, frame, f, Command.Commit, HEADER_SIZE);
  setU128(view, COMMIT_LAYOUT.commitChecksum.offset, f.commitChecksum);
  setU64(view, COMMIT_LAYOUT.timestampMonotonic.offset, f.timestampMonotonic);
  setU64Number(view, COMMIT_LAYOUT.commit.offset, f.commit);
  setU64Number(view, COMMIT_LAYOUT.checkpointOp.offset, f.checkpointOp);
  setU64(view, COMMIT_LAYOUT.group.offset, f.group);
  sealFrame(frame);
  return frame;
}

export interface HotReplyFields extends Prefix {
  readonly requestChecksum: bigint;
  readonly client: bigint;
  readonly op: number;
  readonly commit: number;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly status: number;
}

/** A Reply frame (client plane: no seals; `context` zero): header + body. */
export function writeReplyFrame(f: HotReplyFields, body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE + body.length);
  const view = new DataView(frame.buffer, frame.byteOffset, HEADER_SIZE);
  writePrefix(view, frame, f, Command.Reply, frame.length);
  setU128(view, REPLY_LAYOUT.requestChecksum.offset, f.requestChecksum);
  setU128(view, REPLY_LAYOUT.client.offset, f.client);
  setU64Number(view, REPLY_LAYOUT.op.offset, f.op);
  setU64Number(view, REPLY_LAYOUT.commit.offset, f.commit);
  setU64(view, REPLY_LAYOUT.timestamp.offset, f.timestamp);
  setU64(view, REPLY_LAYOUT.request.offset, f.request);
  frame[REPLY_LAYOUT.operation.offset] = f.operation;
  view.setUint32(REPLY_LAYOUT.status.offset, f.status, true);
  frame.set(body, HEADER_SIZE);
  return frame;
}
