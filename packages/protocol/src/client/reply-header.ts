import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import {
  ClientCommand, FRAME_PREFIX, HEADER_SIZE, defineHeaderLayout, type HeaderUnderConstruction, readFramePrefix, writeFramePrefix,
} from './frame-prefix.js';
import { dataViewOf, getU128, getU32, getU64, getU8, isZeroRange, setU128, setU32, setU64, setU8, u128At } from './header-bytes.js';
import { isOperation } from './operation.js';

/** ReplyHeader: server to client, answers one request (framing.mdx). */
export const REPLY_HEADER = defineHeaderLayout('ReplyHeader', {
  ...FRAME_PREFIX,
  requestChecksum: { offset: 128, size: 16 },
  context: { offset: 144, size: 16 },
  client: { offset: 160, size: 16 },
  op: { offset: 176, size: 8 },
  commit: { offset: 184, size: 8 },
  timestamp: { offset: 192, size: 8 },
  request: { offset: 200, size: 8 },
  operation: { offset: 208, size: 1 },
  padding: { offset: 209, size: 7 },
  status: { offset: 216, size: 4 },
  reserved: { offset: 220, size: 36 },
} as const);

export interface ReplyHeader {
  readonly checksum: bigint;
  readonly checksumBody: bigint;
  readonly cluster: bigint;
  readonly size: number;
  readonly view: number;
  readonly release: number;
  readonly command: number;
  readonly replica: number;
  readonly requestChecksum: bigint;
  readonly context: bigint;
  readonly client: bigint;
  readonly op: bigint;
  readonly commit: bigint;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  /** 0 = accepted; otherwise an IggyError code decided before commit (empty body). */
  readonly status: number;
}

export interface ReplyHeaderFields {
  readonly size: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly status?: number;
  readonly requestChecksum?: bigint;
  readonly context?: bigint;
  readonly op?: bigint;
  readonly commit?: bigint;
  readonly timestamp?: bigint;
  readonly checksum?: bigint;
  readonly checksumBody?: bigint;
  readonly cluster?: bigint;
  readonly view?: number;
  readonly release?: number;
  readonly replica?: number;
}

export function encodeReplyHeader(fields: ReplyHeaderFields): Uint8Array {
  assert(fields.size >= HEADER_SIZE && fields.size <= 0xffff_ffff, `reply size ${fields.size}`);
  const bytes = new Uint8Array(HEADER_SIZE);
  writeFramePrefix(bytes, {
    checksum: fields.checksum ?? 0n,
    checksumBody: fields.checksumBody ?? 0n,
    cluster: fields.cluster ?? 0n,
    size: fields.size,
    view: fields.view ?? 0,
    release: fields.release ?? 0,
    command: ClientCommand.Reply,
    replica: fields.replica ?? 0,
  });
  setU128(bytes, REPLY_HEADER.requestChecksum.offset, fields.requestChecksum ?? 0n);
  setU128(bytes, REPLY_HEADER.context.offset, fields.context ?? 0n);
  setU128(bytes, REPLY_HEADER.client.offset, fields.client);
  setU64(bytes, REPLY_HEADER.op.offset, fields.op ?? 0n);
  setU64(bytes, REPLY_HEADER.commit.offset, fields.commit ?? 0n);
  setU64(bytes, REPLY_HEADER.timestamp.offset, fields.timestamp ?? 0n);
  setU64(bytes, REPLY_HEADER.request.offset, fields.request);
  setU8(bytes, REPLY_HEADER.operation.offset, fields.operation);
  setU32(bytes, REPLY_HEADER.status.offset, fields.status ?? 0);
  return bytes;
}

/** Structural decode: command 8 and the reserved_frame, padding and reserved regions zero. */
export function decodeReplyHeader(bytes: Uint8Array): Decoded<ReplyHeader> {
  if (bytes.length < HEADER_SIZE) return fail('truncated_header');
  if (getU8(bytes, FRAME_PREFIX.command.offset) !== ClientCommand.Reply) return fail('command_not_reply');
  const frame = FRAME_PREFIX.reservedFrame;
  if (!isZeroRange(bytes, frame.offset, frame.offset + frame.size)) return fail('reserved_frame_nonzero');
  const padding = REPLY_HEADER.padding;
  if (!isZeroRange(bytes, padding.offset, padding.offset + padding.size)) return fail('padding_nonzero');
  const reserved = REPLY_HEADER.reserved;
  if (!isZeroRange(bytes, reserved.offset, reserved.offset + reserved.size)) return fail('reserved_nonzero');
  const v = dataViewOf(bytes);
  const h = readFramePrefix(bytes) as HeaderUnderConstruction<ReplyHeader>;
  h.requestChecksum = u128At(v, REPLY_HEADER.requestChecksum.offset);
  h.context = u128At(v, REPLY_HEADER.context.offset);
  h.client = u128At(v, REPLY_HEADER.client.offset);
  h.op = v.getBigUint64(REPLY_HEADER.op.offset, true);
  h.commit = v.getBigUint64(REPLY_HEADER.commit.offset, true);
  h.timestamp = v.getBigUint64(REPLY_HEADER.timestamp.offset, true);
  h.request = v.getBigUint64(REPLY_HEADER.request.offset, true);
  h.operation = bytes[REPLY_HEADER.operation.offset] as number;
  h.status = v.getUint32(REPLY_HEADER.status.offset, true);
  return ok(h);
}

/**
 * The reference validate is `command == 8` only (replication-semantics §1.3); the SDKs also refuse
 * an undeclared operation byte (checked cast), and framing.mdx states that a nonzero status always
 * comes with an empty body.
 */
export function validateReplyHeader(header: ReplyHeader): string | null {
  if (header.command !== ClientCommand.Reply) return 'command_not_reply';
  if (header.size < HEADER_SIZE) return 'size_below_header';
  if (!isOperation(header.operation)) return 'operation_undeclared';
  if (header.status !== 0 && header.size !== HEADER_SIZE) return 'status_with_body';
  return null;
}

/** In-place reads of the reply fields a client acts on. */
export class ReplyHeaderView {
  readonly bytes: Uint8Array;
  readonly #view: DataView;

  constructor(bytes: Uint8Array) {
    assert(bytes.length >= HEADER_SIZE, 'ReplyHeaderView: short buffer');
    this.bytes = bytes;
    this.#view = dataViewOf(bytes);
  }

  get size(): number {
    return this.#view.getUint32(REPLY_HEADER.size.offset, true);
  }

  get command(): number {
    return this.#view.getUint8(REPLY_HEADER.command.offset);
  }

  get client(): bigint {
    return getU128(this.bytes, REPLY_HEADER.client.offset);
  }

  get op(): bigint {
    return this.#view.getBigUint64(REPLY_HEADER.op.offset, true);
  }

  get commit(): bigint {
    return this.#view.getBigUint64(REPLY_HEADER.commit.offset, true);
  }

  get request(): bigint {
    return this.#view.getBigUint64(REPLY_HEADER.request.offset, true);
  }

  get operation(): number {
    return this.#view.getUint8(REPLY_HEADER.operation.offset);
  }

  get status(): number {
    return this.#view.getUint32(REPLY_HEADER.status.offset, true);
  }
}
