import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { isNonReplicatedCode } from './command-code.js';
import {
  ClientCommand, FRAME_PREFIX, HEADER_SIZE, defineHeaderLayout, type HeaderUnderConstruction, readFramePrefix, writeFramePrefix,
} from './frame-prefix.js';
import { dataViewOf, getU128, getU64, getU8, isZeroRange, setU128, setU32, setU64, setU8, u128At } from './header-bytes.js';
import { Operation, isClientAdmissible, isOperation } from './operation.js';

/**
 * RequestHeader: client to server (framing.mdx). Bytes 196..256 are reserved except that a
 * NonReplicated request (operation 2) carries its u32 command code at 196..200.
 */
export const REQUEST_HEADER = defineHeaderLayout('RequestHeader', {
  ...FRAME_PREFIX,
  client: { offset: 128, size: 16 },
  requestChecksum: { offset: 144, size: 16 },
  timestamp: { offset: 160, size: 8 },
  request: { offset: 168, size: 8 },
  operation: { offset: 176, size: 1 },
  padding: { offset: 177, size: 7 },
  session: { offset: 184, size: 8 },
  userId: { offset: 192, size: 4 },
  reserved: { offset: 196, size: 60 },
} as const);

/** Where a NonReplicated request keeps its command code (the first 4 reserved bytes). */
export const NON_REPLICATED_CODE_OFFSET = 196;

/**
 * RoutedRequest: the same frame as parsed on the replica plane or between shards
 * (replication-semantics §1.3): bytes 248..256 hold the resolved consensus `group`.
 */
export const ROUTED_REQUEST_HEADER = defineHeaderLayout('RoutedRequestHeader', {
  ...FRAME_PREFIX,
  client: { offset: 128, size: 16 },
  requestChecksum: { offset: 144, size: 16 },
  timestamp: { offset: 160, size: 8 },
  request: { offset: 168, size: 8 },
  operation: { offset: 176, size: 1 },
  padding: { offset: 177, size: 7 },
  session: { offset: 184, size: 8 },
  userId: { offset: 192, size: 4 },
  reserved: { offset: 196, size: 52 },
  group: { offset: 248, size: 8 },
} as const);

export interface RequestHeader {
  readonly checksum: bigint;
  readonly checksumBody: bigint;
  readonly cluster: bigint;
  readonly size: number;
  readonly view: number;
  readonly release: number;
  readonly command: number;
  readonly replica: number;
  readonly client: bigint;
  readonly requestChecksum: bigint;
  readonly timestamp: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly session: bigint;
  readonly userId: number;
  /** Bytes 196..200; non-zero only when operation = 2. */
  readonly nonReplicatedCode: number;
}

export interface RoutedRequestHeader extends RequestHeader {
  readonly group: bigint;
}

/** Encoder input: everything except `size`, `client` and `operation` defaults to zero. */
export interface RequestHeaderFields {
  readonly size: number;
  readonly client: bigint;
  readonly operation: number;
  readonly request?: bigint;
  readonly session?: bigint;
  readonly requestChecksum?: bigint;
  readonly timestamp?: bigint;
  readonly userId?: number;
  readonly nonReplicatedCode?: number;
  readonly checksum?: bigint;
  readonly checksumBody?: bigint;
  readonly cluster?: bigint;
  readonly view?: number;
  readonly release?: number;
  readonly replica?: number;
}

export interface RoutedRequestHeaderFields extends RequestHeaderFields {
  readonly group: bigint;
}

/** Encodes a RequestHeader (256 bytes); reserved and padding bytes stay zero. */
export function encodeRequestHeader(fields: RequestHeaderFields): Uint8Array {
  const bytes = new Uint8Array(HEADER_SIZE);
  writeRequestFields(bytes, fields);
  return bytes;
}

export function encodeRoutedRequestHeader(fields: RoutedRequestHeaderFields): Uint8Array {
  const bytes = new Uint8Array(HEADER_SIZE);
  writeRequestFields(bytes, fields);
  setU64(bytes, ROUTED_REQUEST_HEADER.group.offset, fields.group);
  return bytes;
}

function writeRequestFields(bytes: Uint8Array, fields: RequestHeaderFields): void {
  const code = fields.nonReplicatedCode ?? 0;
  assert(code === 0 || fields.operation === Operation.NonReplicated, 'nonReplicatedCode only with operation 2');
  assert(fields.size >= HEADER_SIZE && fields.size <= 0xffff_ffff, `request size ${fields.size}`);
  writeFramePrefix(bytes, {
    checksum: fields.checksum ?? 0n,
    checksumBody: fields.checksumBody ?? 0n,
    cluster: fields.cluster ?? 0n,
    size: fields.size,
    view: fields.view ?? 0,
    release: fields.release ?? 0,
    command: ClientCommand.Request,
    replica: fields.replica ?? 0,
  });
  setU128(bytes, REQUEST_HEADER.client.offset, fields.client);
  setU128(bytes, REQUEST_HEADER.requestChecksum.offset, fields.requestChecksum ?? 0n);
  setU64(bytes, REQUEST_HEADER.timestamp.offset, fields.timestamp ?? 0n);
  setU64(bytes, REQUEST_HEADER.request.offset, fields.request ?? 0n);
  setU8(bytes, REQUEST_HEADER.operation.offset, fields.operation);
  setU64(bytes, REQUEST_HEADER.session.offset, fields.session ?? 0n);
  setU32(bytes, REQUEST_HEADER.userId.offset, fields.userId ?? 0);
  setU32(bytes, NON_REPLICATED_CODE_OFFSET, code);
}

/**
 * Structural decode of a RequestHeader from the first 256 bytes: command must be 5, and the
 * reserved_frame, padding and reserved regions must be zero (bytes 196..200 may carry the code
 * when operation = 2). Semantic rules are `validateRequestHeader`.
 */
export function decodeRequestHeader(bytes: Uint8Array): Decoded<RequestHeader> {
  const problem = checkRequestBytes(bytes, REQUEST_HEADER.reserved.offset, HEADER_SIZE);
  return problem !== null ? fail(problem) : ok(readRequestFields(bytes));
}

export function decodeRoutedRequestHeader(bytes: Uint8Array): Decoded<RoutedRequestHeader> {
  const problem = checkRequestBytes(bytes, ROUTED_REQUEST_HEADER.reserved.offset, ROUTED_REQUEST_HEADER.group.offset);
  if (problem !== null) return fail(problem);
  const fields = readRequestFields(bytes) as RequestHeader & { group: bigint };
  fields.group = getU64(bytes, ROUTED_REQUEST_HEADER.group.offset);
  return ok(fields);
}

function checkRequestBytes(bytes: Uint8Array, reservedStart: number, reservedEnd: number): string | null {
  if (bytes.length < HEADER_SIZE) return 'truncated_header';
  if (getU8(bytes, FRAME_PREFIX.command.offset) !== ClientCommand.Request) return 'command_not_request';
  const frame = FRAME_PREFIX.reservedFrame;
  if (!isZeroRange(bytes, frame.offset, frame.offset + frame.size)) return 'reserved_frame_nonzero';
  const padding = REQUEST_HEADER.padding;
  if (!isZeroRange(bytes, padding.offset, padding.offset + padding.size)) return 'padding_nonzero';
  const operation = getU8(bytes, REQUEST_HEADER.operation.offset);
  const tailStart = operation === Operation.NonReplicated ? NON_REPLICATED_CODE_OFFSET + 4 : reservedStart;
  if (!isZeroRange(bytes, tailStart, reservedEnd)) return 'reserved_nonzero';
  return null;
}

function readRequestFields(bytes: Uint8Array): RequestHeader {
  const v = dataViewOf(bytes);
  const h = readFramePrefix(bytes) as HeaderUnderConstruction<RequestHeader>;
  h.client = u128At(v, REQUEST_HEADER.client.offset);
  h.requestChecksum = u128At(v, REQUEST_HEADER.requestChecksum.offset);
  h.timestamp = v.getBigUint64(REQUEST_HEADER.timestamp.offset, true);
  h.request = v.getBigUint64(REQUEST_HEADER.request.offset, true);
  h.operation = bytes[REQUEST_HEADER.operation.offset] as number;
  h.session = v.getBigUint64(REQUEST_HEADER.session.offset, true);
  h.userId = v.getUint32(REQUEST_HEADER.userId.offset, true);
  h.nonReplicatedCode = v.getUint32(NON_REPLICATED_CODE_OFFSET, true);
  return h;
}

/**
 * The reference `validate()` of replication-semantics §1.3 plus the declared-operation bit-pattern
 * check (§1.2 step 3): command 5; client ≠ 0; operation declared and ≠ 0; Register: session = 0 and
 * request = 0; any other operation except NonReplicated: session > 0 and request > 0. Returns the
 * reason or null.
 */
export function validateRequestHeader(header: RequestHeader): string | null {
  if (header.command !== ClientCommand.Request) return 'command_not_request';
  if (header.size < HEADER_SIZE) return 'size_below_header';
  if (header.client === 0n) return 'client_zero';
  if (!isOperation(header.operation)) return 'operation_undeclared';
  if (header.operation === Operation.Reserved) return 'operation_reserved';
  if (header.operation === Operation.Register) {
    if (header.session !== 0n) return 'register_session_nonzero';
    if (header.request !== 0n) return 'register_request_nonzero';
  } else if (header.operation !== Operation.NonReplicated) {
    if (header.session === 0n) return 'session_zero';
    if (header.request === 0n) return 'request_zero';
  }
  return null;
}

/**
 * What a client listener additionally requires: the operation is client-admissible (not 0, not
 * 64..127) and a NonReplicated request names a registered non-replicated command code.
 */
export function validateClientRequestHeader(header: RequestHeader): string | null {
  const problem = validateRequestHeader(header);
  if (problem !== null) return problem;
  if (!isClientAdmissible(header.operation)) return 'operation_not_client_admissible';
  if (header.operation === Operation.NonReplicated && !isNonReplicatedCode(header.nonReplicatedCode)) {
    return 'non_replicated_code_unknown';
  }
  return null;
}

/**
 * In-place reads of a RequestHeader (hot path: no allocation per field, bigint only where the field
 * is wide). The caller has checked `bytes.length >= 256`.
 */
export class RequestHeaderView {
  readonly bytes: Uint8Array;
  readonly #view: DataView;

  constructor(bytes: Uint8Array) {
    assert(bytes.length >= HEADER_SIZE, 'RequestHeaderView: short buffer');
    this.bytes = bytes;
    this.#view = dataViewOf(bytes);
  }

  get size(): number {
    return this.#view.getUint32(REQUEST_HEADER.size.offset, true);
  }

  get command(): number {
    return this.#view.getUint8(REQUEST_HEADER.command.offset);
  }

  get client(): bigint {
    return getU128(this.bytes, REQUEST_HEADER.client.offset);
  }

  get requestChecksum(): bigint {
    return getU128(this.bytes, REQUEST_HEADER.requestChecksum.offset);
  }

  get timestamp(): bigint {
    return this.#view.getBigUint64(REQUEST_HEADER.timestamp.offset, true);
  }

  get request(): bigint {
    return this.#view.getBigUint64(REQUEST_HEADER.request.offset, true);
  }

  get operation(): number {
    return this.#view.getUint8(REQUEST_HEADER.operation.offset);
  }

  get session(): bigint {
    return this.#view.getBigUint64(REQUEST_HEADER.session.offset, true);
  }

  get userId(): number {
    return this.#view.getUint32(REQUEST_HEADER.userId.offset, true);
  }

  get nonReplicatedCode(): number {
    return this.#view.getUint32(NON_REPLICATED_CODE_OFFSET, true);
  }
}
