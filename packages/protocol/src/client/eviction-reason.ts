import { ErrorCode } from '../errors/error-codes.js';

/**
 * EvictionHeader byte 255 (framing.mdx; discriminants pinned by rust_test_values.json
 * `eviction_reason_discriminants`). 0 is reserved and never sent.
 */
export const EvictionReason = {
  Reserved: 0,
  NoSession: 1,
  ClientReleaseTooLow: 2,
  ClientReleaseTooHigh: 3,
  InvalidRequestOperation: 4,
  InvalidRequestBody: 5,
  InvalidRequestBodySize: 6,
  SessionTooLow: 7,
  SessionReleaseMismatch: 8,
  InvalidCredentials: 9,
  InvalidToken: 10,
  UserInactive: 11,
  SessionError: 12,
  StaleClient: 13,
  IncompatibleProtocol: 14,
  MalformedLogin: 15,
} as const;
export type EvictionReason = (typeof EvictionReason)[keyof typeof EvictionReason];

export const EVICTION_REASON_MAX = EvictionReason.MalformedLogin;

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(EvictionReason).map(([name, value]) => [value, name]));

/** A declared, sendable reason (1..15). */
export function isEvictionReason(value: number): value is EvictionReason {
  return value >= 1 && value <= EVICTION_REASON_MAX && Number.isInteger(value);
}

export function evictionReasonName(value: number): string | null {
  return NAMES.get(value) ?? null;
}

/**
 * The SDK-local error code the Node SDK raises for an IncompatibleProtocol eviction with a sane
 * window (foreign/node/src/wire/vsr/reply.ts); it is not a wire value and not in error-codes.json.
 */
export const SDK_INCOMPATIBLE_PROTOCOL_VERSION = 14003;

/**
 * How a client maps an eviction to an error code: `evictionError` of the Node SDK, the same table as
 * `eviction_reason_to_error` in the Rust SDK. An IncompatibleProtocol window with min = 0 or
 * max < min degrades to Unauthenticated rather than trusting the frame; an undeclared reason byte
 * maps to InvalidCommand (Node) — the Rust SDK maps it to Unauthenticated.
 */
export function evictionErrorCode(reason: number, windowMax: number, windowMin: number): number {
  switch (reason) {
    case EvictionReason.InvalidCredentials:
      return ErrorCode.InvalidCredentials;
    case EvictionReason.InvalidToken:
      return ErrorCode.InvalidPersonalAccessToken;
    case EvictionReason.UserInactive:
    case EvictionReason.SessionError:
    case EvictionReason.NoSession:
    case EvictionReason.SessionTooLow:
    case EvictionReason.SessionReleaseMismatch:
      return ErrorCode.Unauthenticated;
    case EvictionReason.StaleClient:
      return ErrorCode.StaleClient;
    case EvictionReason.IncompatibleProtocol:
      if (windowMin === 0 || windowMax < windowMin) return ErrorCode.Unauthenticated;
      return SDK_INCOMPATIBLE_PROTOCOL_VERSION;
    case EvictionReason.MalformedLogin:
      return ErrorCode.InvalidFormat;
    default:
      return ErrorCode.InvalidCommand;
  }
}
