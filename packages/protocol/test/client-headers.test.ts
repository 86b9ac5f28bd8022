import { describe, expect, it } from 'vitest';
import { AssertionError } from '@shoal/stdx';
import {
  EVICTION_HEADER, EvictionReason, FRAME_PREFIX, HEADER_SIZE, NON_REPLICATED_CODE_OFFSET, Operation, REPLY_HEADER, REQUEST_HEADER,
  ROUTED_REQUEST_HEADER, ReplyHeaderView, RequestHeaderView, checkHeaderLayout, decodeEvictionHeader, decodeReplyHeader,
  decodeRequestFrame, decodeRequestHeader, decodeRoutedRequestHeader, decodeServerFrame, encodeEvictionHeader,
  encodeIncompatibleProtocolEviction, encodeReplyFrame, encodeReplyHeader, encodeRequestFrame, encodeRequestHeader,
  encodeRoutedRequestHeader, peekFrame, requestCommandCode, validateClientRequestHeader,
  validateEvictionHeader, validateReplyHeader, validateRequestHeader, type HeaderLayout, type RequestHeader,
} from '../src/client/index.js';
import { getU128, getU32, getU64, getU8 } from '../src/client/header-bytes.js';

const U128 = (1n << 128n) - 1n;
const big = (i: number): bigint => (0x0102030405060708n * BigInt(i + 1)) & ((1n << 64n) - 1n);

function readField(bytes: Uint8Array, offset: number, size: number): bigint {
  if (size === 1) return BigInt(getU8(bytes, offset));
  if (size === 4) return BigInt(getU32(bytes, offset));
  if (size === 8) return getU64(bytes, offset);
  return getU128(bytes, offset);
}

/** Every byte index that belongs to a field whose name starts with reserved/padding. */
function reservedBytes(layout: HeaderLayout, skip: (index: number) => boolean = () => false): number[] {
  const out: number[] = [];
  for (const [name, spec] of Object.entries(layout)) {
    if (!/^(reserved|padding)/.test(name)) continue;
    for (let i = spec.offset; i < spec.offset + spec.size; i++) if (!skip(i)) out.push(i);
  }
  return out;
}

describe('header layouts', () => {
  it('every table is contiguous, 256 bytes, and repeats the 128-byte prefix', () => {
    for (const [name, layout] of [['request', REQUEST_HEADER], ['routed', ROUTED_REQUEST_HEADER], ['reply', REPLY_HEADER], ['eviction', EVICTION_HEADER]] as const) {
      expect(() => checkHeaderLayout(name, layout)).not.toThrow();
      expect(Object.isFrozen(layout)).toBe(true);
      expect(Object.isFrozen(layout.checksum)).toBe(true);
    }
    expect(FRAME_PREFIX.size.offset).toBe(48);
    expect(FRAME_PREFIX.command.offset).toBe(60);
    expect(FRAME_PREFIX.reservedFrame).toEqual({ offset: 62, size: 66 });
  });

  it('the self-check catches gaps, wrong totals and a broken prefix', () => {
    const gap = { ...REQUEST_HEADER, client: { offset: 129, size: 15 } };
    expect(() => checkHeaderLayout('gap', gap)).toThrow(AssertionError);
    const short = Object.fromEntries(Object.entries(REPLY_HEADER).filter(([k]) => k !== 'reserved'));
    expect(() => checkHeaderLayout('short', short)).toThrow(/totals/);
    const renamed = { checksumX: { offset: 0, size: 16 }, ...Object.fromEntries(Object.entries(REPLY_HEADER).slice(1)) };
    expect(() => checkHeaderLayout('renamed', renamed)).toThrow(AssertionError);
  });

  it('pinned offsets (framing.mdx, rust_test_values offsets)', () => {
    expect(REQUEST_HEADER.client.offset).toBe(128);
    expect(REQUEST_HEADER.requestChecksum.offset).toBe(144);
    expect(REQUEST_HEADER.operation.offset).toBe(176);
    expect(REQUEST_HEADER.session.offset).toBe(184);
    expect(REQUEST_HEADER.userId.offset).toBe(192);
    expect(NON_REPLICATED_CODE_OFFSET).toBe(196);
    expect(ROUTED_REQUEST_HEADER.group).toEqual({ offset: 248, size: 8 });
    expect(REPLY_HEADER.status.offset).toBe(216);
    expect(REPLY_HEADER.operation.offset).toBe(208);
    expect(EVICTION_HEADER.serverProtocolVersion.offset).toBe(144);
    expect(EVICTION_HEADER.serverProtocolVersionMin.offset).toBe(148);
    expect(EVICTION_HEADER.reason.offset).toBe(255);
  });
});

const requestFields = {
  checksum: U128 - 1n, checksumBody: U128 - 2n, cluster: U128 - 3n, size: 0xffff_fff0, view: 0xfedc_ba98, release: 0x1234_5678, replica: 0xab,
  client: U128 - 4n, requestChecksum: U128 - 5n, timestamp: big(1), request: big(2), operation: Operation.NonReplicated,
  session: big(3), userId: 0x8765_4321, nonReplicatedCode: 0xdead_beef,
};

describe('RequestHeader', () => {
  it('every field lands at its offset', () => {
    const bytes = encodeRequestHeader(requestFields);
    expect(bytes.length).toBe(HEADER_SIZE);
    expect(getU8(bytes, REQUEST_HEADER.command.offset)).toBe(5);
    for (const [name, value] of Object.entries(requestFields)) {
      const spec = name === 'nonReplicatedCode' ? { offset: NON_REPLICATED_CODE_OFFSET, size: 4 } : (REQUEST_HEADER as HeaderLayout)[name];
      if (spec === undefined) throw new Error(name);
      expect(readField(bytes, spec.offset, spec.size), name).toBe(BigInt(value));
    }
  });

  it('encodes reserved bytes as zero and decodes back to the same fields', () => {
    const bytes = encodeRequestHeader(requestFields);
    for (const i of reservedBytes(REQUEST_HEADER, (i) => i >= 196 && i < 200)) expect(bytes[i], `byte ${i}`).toBe(0);
    const decoded = decodeRequestHeader(bytes);
    expect(decoded).toEqual({ ok: true, value: { ...requestFields, command: 5 } });
  });

  it('rejects a non-zero byte anywhere in reserved_frame, padding or reserved', () => {
    const good = encodeRequestHeader({ ...requestFields, operation: Operation.CreateStream, nonReplicatedCode: 0 });
    for (const i of reservedBytes(REQUEST_HEADER)) {
      const bad = good.slice();
      bad[i] = 1;
      const decoded = decodeRequestHeader(bad);
      expect(decoded.ok, `byte ${i}`).toBe(false);
    }
  });

  it('bytes 196..200 carry the code only for operation 2', () => {
    const nonReplicated = encodeRequestHeader({ size: 256, client: 1n, operation: Operation.NonReplicated, nonReplicatedCode: 201 });
    expect(getU32(nonReplicated, 196)).toBe(201);
    expect(decodeRequestHeader(nonReplicated).ok).toBe(true);
    const replicated = nonReplicated.slice();
    replicated[176] = Operation.CreateStream;
    expect(decodeRequestHeader(replicated)).toEqual({ ok: false, reason: 'reserved_nonzero' });
    expect(() => encodeRequestHeader({ size: 256, client: 1n, operation: Operation.CreateStream, nonReplicatedCode: 1 })).toThrow(AssertionError);
  });

  it('rejects a short buffer and a wrong command', () => {
    expect(decodeRequestHeader(new Uint8Array(255))).toEqual({ ok: false, reason: 'truncated_header' });
    const bytes = encodeRequestHeader({ size: 256, client: 1n, operation: 1 });
    bytes[60] = 8;
    expect(decodeRequestHeader(bytes)).toEqual({ ok: false, reason: 'command_not_request' });
  });

  it('validate: the §1.3 rules', () => {
    const base: RequestHeader = { ...requestFields, command: 5, size: 256, operation: Operation.CreateStream, nonReplicatedCode: 0, session: 7n, request: 1n };
    expect(validateRequestHeader(base)).toBeNull();
    expect(validateRequestHeader({ ...base, client: 0n })).toBe('client_zero');
    expect(validateRequestHeader({ ...base, operation: 0 })).toBe('operation_reserved');
    expect(validateRequestHeader({ ...base, operation: 150 })).toBe('operation_undeclared');
    expect(validateRequestHeader({ ...base, session: 0n })).toBe('session_zero');
    expect(validateRequestHeader({ ...base, request: 0n })).toBe('request_zero');
    const register = { ...base, operation: Operation.Register, session: 0n, request: 0n };
    expect(validateRequestHeader(register)).toBeNull();
    expect(validateRequestHeader({ ...register, session: 1n })).toBe('register_session_nonzero');
    expect(validateRequestHeader({ ...register, request: 1n })).toBe('register_request_nonzero');
    const ping = { ...base, operation: Operation.NonReplicated, session: 0n, request: 0n, nonReplicatedCode: 1 };
    expect(validateRequestHeader(ping)).toBeNull();
    expect(validateRequestHeader({ ...base, command: 6 })).toBe('command_not_request');
    expect(validateRequestHeader({ ...base, size: 255 })).toBe('size_below_header');
  });

  it('validate for client listeners: internal operations and unknown codes are refused', () => {
    const base: RequestHeader = { ...requestFields, command: 5, size: 256, operation: Operation.CreateStream, nonReplicatedCode: 0, session: 7n, request: 1n };
    for (const op of [64, 65, 66, 67, 68]) expect(validateClientRequestHeader({ ...base, operation: op })).toBe('operation_not_client_admissible');
    expect(validateClientRequestHeader({ ...base, operation: Operation.NonReplicated, nonReplicatedCode: 9999 })).toBe('non_replicated_code_unknown');
    expect(validateClientRequestHeader({ ...base, operation: Operation.NonReplicated, nonReplicatedCode: 202 })).toBe('non_replicated_code_unknown');
    expect(validateClientRequestHeader({ ...base, operation: Operation.NonReplicated, nonReplicatedCode: 201 })).toBeNull();
  });

  it('the view reads the same fields in place', () => {
    const bytes = encodeRequestHeader(requestFields);
    const view = new RequestHeaderView(bytes);
    expect([view.size, view.command, view.client, view.requestChecksum, view.timestamp, view.request, view.operation, view.session, view.userId, view.nonReplicatedCode])
      .toEqual([requestFields.size, 5, requestFields.client, requestFields.requestChecksum, requestFields.timestamp, requestFields.request, 2, requestFields.session, requestFields.userId, requestFields.nonReplicatedCode]);
    expect(() => new RequestHeaderView(new Uint8Array(10))).toThrow(AssertionError);
  });

  it('routed request: group at 248..256, reserved 196..248', () => {
    const bytes = encodeRoutedRequestHeader({ size: 300, client: 9n, operation: Operation.SendMessages, session: 1n, request: 1n, group: (1n << 63n) | 5n });
    expect(getU64(bytes, 248)).toBe((1n << 63n) | 5n);
    const decoded = decodeRoutedRequestHeader(bytes);
    expect(decoded.ok && decoded.value.group).toBe((1n << 63n) | 5n);
    for (const i of reservedBytes(ROUTED_REQUEST_HEADER)) {
      const bad = bytes.slice();
      bad[i] = 1;
      expect(decodeRoutedRequestHeader(bad).ok, `byte ${i}`).toBe(false);
    }
    expect(decodeRequestHeader(bytes).ok).toBe(false);
  });

  it('frames: size = 256 + body, the body is a view, the code is derived', () => {
    const frame = encodeRequestFrame({ client: 1n, operation: Operation.NonReplicated, nonReplicatedCode: 201 }, new Uint8Array(0));
    const decoded = decodeRequestFrame(frame);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(requestCommandCode(decoded.value.header, decoded.value.body)).toEqual({ ok: true, value: 201 });
    const stream = encodeRequestFrame({ client: 1n, operation: Operation.CreateStream, session: 1n, request: 1n }, Uint8Array.of(1, 0x61));
    const d2 = decodeRequestFrame(stream);
    expect(d2.ok && d2.value.body.buffer).toBe(stream.buffer);
    expect(d2.ok && requestCommandCode(d2.value.header, d2.value.body)).toEqual({ ok: true, value: 202 });
    expect(decodeRequestFrame(stream.subarray(0, 257))).toEqual({ ok: false, reason: 'size_mismatch' });
    expect(peekFrame(stream)).toEqual({ size: 258, command: 5 });
    expect(peekFrame(stream.subarray(0, 100))).toBeNull();
    const logout = decodeRequestFrame(encodeRequestFrame({ client: 1n, operation: Operation.Logout, session: 1n, request: 2n }, new Uint8Array(0)));
    expect(logout.ok && requestCommandCode(logout.value.header, logout.value.body)).toEqual({ ok: true, value: 39 });
  });
});

const replyFields = {
  checksum: 1n, checksumBody: 2n, cluster: U128 - 7n, size: 0xffff_fff0, view: 3, release: 4, replica: 5,
  requestChecksum: U128 - 8n, context: U128 - 9n, client: U128 - 10n, op: big(4), commit: big(5), timestamp: big(6),
  request: big(7), operation: Operation.CreateTopic, status: 0xfeed_f00d,
};

describe('ReplyHeader', () => {
  it('every field lands at its offset; reserved bytes are zero', () => {
    const bytes = encodeReplyHeader(replyFields);
    expect(getU8(bytes, 60)).toBe(8);
    for (const [name, value] of Object.entries(replyFields)) {
      const spec = (REPLY_HEADER as HeaderLayout)[name];
      if (spec === undefined) throw new Error(name);
      expect(readField(bytes, spec.offset, spec.size), name).toBe(BigInt(value));
    }
    for (const i of reservedBytes(REPLY_HEADER)) expect(bytes[i], `byte ${i}`).toBe(0);
    expect(decodeReplyHeader(bytes)).toEqual({ ok: true, value: { ...replyFields, command: 8 } });
  });

  it('rejects non-zero reserved bytes', () => {
    const bytes = encodeReplyHeader(replyFields);
    for (const i of reservedBytes(REPLY_HEADER)) {
      const bad = bytes.slice();
      bad[i] = 0x80;
      expect(decodeReplyHeader(bad).ok, `byte ${i}`).toBe(false);
    }
    const wrong = bytes.slice();
    wrong[60] = 13;
    expect(decodeReplyHeader(wrong)).toEqual({ ok: false, reason: 'command_not_reply' });
  });

  it('validate: command, declared operation, status only with an empty body', () => {
    const ok = { ...replyFields, command: 8, size: 300, status: 0 };
    expect(validateReplyHeader(ok)).toBeNull();
    expect(validateReplyHeader({ ...ok, operation: 99 })).toBe('operation_undeclared');
    expect(validateReplyHeader({ ...ok, status: 40 })).toBe('status_with_body');
    expect(validateReplyHeader({ ...ok, status: 40, size: 256 })).toBeNull();
  });

  it('the view and the server-frame decoder', () => {
    const frame = encodeReplyFrame({ ...replyFields, status: 0 }, Uint8Array.of(0, 0, 0, 0));
    const view = new ReplyHeaderView(frame);
    expect([view.size, view.command, view.client, view.op, view.commit, view.request, view.operation, view.status])
      .toEqual([260, 8, replyFields.client, replyFields.op, replyFields.commit, replyFields.request, replyFields.operation, 0]);
    const decoded = decodeServerFrame(frame);
    expect(decoded.ok && decoded.value.kind).toBe('reply');
    expect(decodeServerFrame(frame.subarray(0, 259))).toEqual({ ok: false, reason: 'size_mismatch' });
  });
});

describe('EvictionHeader', () => {
  it('every field lands at its offset; reserved bytes are zero; size is 256', () => {
    const fields = { client: U128 - 11n, reason: EvictionReason.IncompatibleProtocol, serverProtocolVersion: 11264, serverProtocolVersionMin: 11263, cluster: 5n, view: 6, replica: 2 };
    const bytes = encodeEvictionHeader(fields);
    expect(getU8(bytes, 60)).toBe(13);
    expect(getU32(bytes, 48)).toBe(256);
    expect(getU128(bytes, 128)).toBe(fields.client);
    expect(getU32(bytes, 144)).toBe(11264);
    expect(getU32(bytes, 148)).toBe(11263);
    expect(bytes[255]).toBe(14);
    for (const i of reservedBytes(EVICTION_HEADER)) expect(bytes[i], `byte ${i}`).toBe(0);
    const decoded = decodeEvictionHeader(bytes);
    expect(decoded.ok && validateEvictionHeader(decoded.value)).toBeNull();
  });

  it('rejects non-zero reserved bytes (62..128, 152..255)', () => {
    const bytes = encodeEvictionHeader({ client: 1n, reason: EvictionReason.StaleClient });
    for (const i of reservedBytes(EVICTION_HEADER)) {
      const bad = bytes.slice();
      bad[i] = 1;
      expect(decodeEvictionHeader(bad).ok, `byte ${i}`).toBe(false);
    }
  });

  it('validate: the reason-14 window and the other reasons', () => {
    const decode = (fields: Parameters<typeof encodeEvictionHeader>[0]): string | null => {
      const d = decodeEvictionHeader(encodeEvictionHeader(fields));
      if (!d.ok) return d.reason;
      return validateEvictionHeader(d.value);
    };
    expect(decode({ client: 1n, reason: 14, serverProtocolVersion: 11264, serverProtocolVersionMin: 11264 })).toBeNull();
    expect(decode({ client: 1n, reason: 14, serverProtocolVersion: 11264, serverProtocolVersionMin: 1 })).toBeNull();
    expect(decode({ client: 1n, reason: 14, serverProtocolVersion: 11264, serverProtocolVersionMin: 0 })).toBe('window_min_zero');
    expect(decode({ client: 1n, reason: 14, serverProtocolVersion: 11263, serverProtocolVersionMin: 11264 })).toBe('window_min_above_max');
    expect(decode({ client: 1n, reason: 15 })).toBeNull();
    expect(decode({ client: 1n, reason: 9, serverProtocolVersion: 1 })).toBe('window_without_reason_14');
    expect(decode({ client: 1n, reason: 9, serverProtocolVersionMin: 1 })).toBe('window_without_reason_14');
    expect(decode({ client: 0n, reason: 9 })).toBe('client_zero');
    expect(decode({ client: 1n, reason: 0 })).toBe('reason_reserved');
    expect(decode({ client: 1n, reason: 16 })).toBe('reason_undeclared');
    const sized = encodeEvictionHeader({ client: 1n, reason: 1 });
    sized[48] = 0;
    sized[49] = 2;
    const d = decodeEvictionHeader(sized);
    expect(d.ok && validateEvictionHeader(d.value)).toBe('eviction_size_not_256');
  });

  it('the reason-14 helper insists on 1 <= min <= max', () => {
    expect(() => encodeIncompatibleProtocolEviction(1n, 11264, 0)).toThrow(AssertionError);
    expect(getU32(encodeIncompatibleProtocolEviction(1n, 11264, 11264), 148)).toBe(11264);
  });
});
