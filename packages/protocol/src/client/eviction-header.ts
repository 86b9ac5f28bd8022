import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import {
  ClientCommand, FRAME_PREFIX, HEADER_SIZE, defineHeaderLayout, type HeaderUnderConstruction, readFramePrefix, writeFramePrefix,
} from './frame-prefix.js';
import { dataViewOf, getU128, getU32, getU8, isZeroRange, setU128, setU32, setU8, u128At } from './header-bytes.js';
import { EvictionReason, isEvictionReason } from './eviction-reason.js';

/**
 * EvictionHeader: server to client, session-terminal, never a body (framing.mdx). The accepted
 * protocol window (max at 144, min at 148) is set only for reason 14.
 */
export const EVICTION_HEADER = defineHeaderLayout('EvictionHeader', {
  ...FRAME_PREFIX,
  client: { offset: 128, size: 16 },
  serverProtocolVersion: { offset: 144, size: 4 },
  serverProtocolVersionMin: { offset: 148, size: 4 },
  reserved: { offset: 152, size: 103 },
  reason: { offset: 255, size: 1 },
} as const);

export interface EvictionHeader {
  readonly checksum: bigint;
  readonly checksumBody: bigint;
  readonly cluster: bigint;
  readonly size: number;
  readonly view: number;
  readonly release: number;
  readonly command: number;
  readonly replica: number;
  readonly client: bigint;
  /** Accepted window, max (packed semver); zero unless reason = 14. */
  readonly serverProtocolVersion: number;
  /** Accepted window, min (packed semver); zero unless reason = 14. */
  readonly serverProtocolVersionMin: number;
  readonly reason: number;
}

export interface EvictionHeaderFields {
  readonly client: bigint;
  readonly reason: number;
  readonly serverProtocolVersion?: number;
  readonly serverProtocolVersionMin?: number;
  readonly cluster?: bigint;
  readonly view?: number;
  readonly replica?: number;
  readonly checksum?: bigint;
  readonly checksumBody?: bigint;
  readonly release?: number;
}

/** Encodes a 256-byte eviction (size is always 256). */
export function encodeEvictionHeader(fields: EvictionHeaderFields): Uint8Array {
  const bytes = new Uint8Array(HEADER_SIZE);
  writeFramePrefix(bytes, {
    checksum: fields.checksum ?? 0n,
    checksumBody: fields.checksumBody ?? 0n,
    cluster: fields.cluster ?? 0n,
    size: HEADER_SIZE,
    view: fields.view ?? 0,
    release: fields.release ?? 0,
    command: ClientCommand.Eviction,
    replica: fields.replica ?? 0,
  });
  setU128(bytes, EVICTION_HEADER.client.offset, fields.client);
  setU32(bytes, EVICTION_HEADER.serverProtocolVersion.offset, fields.serverProtocolVersion ?? 0);
  setU32(bytes, EVICTION_HEADER.serverProtocolVersionMin.offset, fields.serverProtocolVersionMin ?? 0);
  setU8(bytes, EVICTION_HEADER.reason.offset, fields.reason);
  return bytes;
}

/** An eviction that carries the accepted window (reason 14). */
export function encodeIncompatibleProtocolEviction(
  client: bigint, windowMax: number, windowMin: number, rest: Omit<EvictionHeaderFields, 'client' | 'reason'> = {},
): Uint8Array {
  assert(windowMin >= 1 && windowMin <= windowMax, 'protocol window must satisfy 1 <= min <= max');
  return encodeEvictionHeader({
    ...rest, client, reason: EvictionReason.IncompatibleProtocol, serverProtocolVersion: windowMax, serverProtocolVersionMin: windowMin,
  });
}

/** Structural decode: command 13, reserved_frame (62..128) and reserved (152..255) zero. */
export function decodeEvictionHeader(bytes: Uint8Array): Decoded<EvictionHeader> {
  if (bytes.length < HEADER_SIZE) return fail('truncated_header');
  if (getU8(bytes, FRAME_PREFIX.command.offset) !== ClientCommand.Eviction) return fail('command_not_eviction');
  const frame = FRAME_PREFIX.reservedFrame;
  if (!isZeroRange(bytes, frame.offset, frame.offset + frame.size)) return fail('reserved_frame_nonzero');
  const reserved = EVICTION_HEADER.reserved;
  if (!isZeroRange(bytes, reserved.offset, reserved.offset + reserved.size)) return fail('reserved_nonzero');
  const v = dataViewOf(bytes);
  const h = readFramePrefix(bytes) as HeaderUnderConstruction<EvictionHeader>;
  h.client = u128At(v, EVICTION_HEADER.client.offset);
  h.serverProtocolVersion = v.getUint32(EVICTION_HEADER.serverProtocolVersion.offset, true);
  h.serverProtocolVersionMin = v.getUint32(EVICTION_HEADER.serverProtocolVersionMin.offset, true);
  h.reason = bytes[EVICTION_HEADER.reason.offset] as number;
  return ok(h);
}

/**
 * The reference validate (replication-semantics §1.3): command 13, size 256, client ≠ 0, a declared
 * reason ≠ 0; reason 14 needs 1 <= min <= max; any other reason needs both window fields zero.
 * (The reserved-zero rules are enforced by `decodeEvictionHeader`.)
 */
export function validateEvictionHeader(header: EvictionHeader): string | null {
  if (header.command !== ClientCommand.Eviction) return 'command_not_eviction';
  if (header.size !== HEADER_SIZE) return 'eviction_size_not_256';
  if (header.client === 0n) return 'client_zero';
  if (header.reason === EvictionReason.Reserved) return 'reason_reserved';
  if (!isEvictionReason(header.reason)) return 'reason_undeclared';
  if (header.reason === EvictionReason.IncompatibleProtocol) {
    if (header.serverProtocolVersionMin < 1) return 'window_min_zero';
    if (header.serverProtocolVersionMin > header.serverProtocolVersion) return 'window_min_above_max';
  } else if (header.serverProtocolVersion !== 0 || header.serverProtocolVersionMin !== 0) {
    return 'window_without_reason_14';
  }
  return null;
}
