/** Session-forwarding bookkeeping (§8; driven by forwarding.ts): pending forwards and their nonces. */
import { U64_MAX } from '@shoal/stdx';
import type { ClientToken } from './types.js';

/** A session operation submitted by the host (a login verified locally, a logout or disconnect). */
export interface SessionRequest {
  readonly session: 'register' | 'logout';
  readonly client: bigint;
  readonly userId: number;
  /** Logout: the session epoch and request number the client used (disconnect: u64::MAX). */
  readonly epoch: bigint;
  readonly request: bigint;
  readonly token: ClientToken;
}

export interface PendingForward {
  readonly nonce: bigint;
  readonly request: SessionRequest;
  /** The replica the forward went to, and in which view. */
  primary: number;
  view: number;
  ticksLeft: number;
  /** The deadline fell inside a view change once and was extended (at most once). */
  extended: boolean;
}

export interface ForwardingState {
  counter: bigint;
  readonly origin: bigint;
  readonly pending: Map<bigint, PendingForward>;
}

export function newForwardingState(incarnation: bigint, replica: number): ForwardingState {
  return { counter: incarnation & U64_MAX, origin: BigInt(replica), pending: new Map() };
}

/** nonce = origin << 64 | counter (never 0 in the low half). */
export function nextNonce(f: ForwardingState): bigint {
  f.counter = (f.counter + 1n) & U64_MAX;
  if (f.counter === 0n) f.counter = 1n;
  return (f.origin << 64n) | f.counter;
}
