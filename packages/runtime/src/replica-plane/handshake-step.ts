/**
 * The vocabulary shared by the two handshake state machines (handshake-dialer.ts,
 * handshake-acceptor.ts) and the socket driver (handshake-socket.ts).
 *
 * A machine is sans-IO: it is fed the bytes the socket delivered and answers with a step:
 * frames to write, and whether the handshake goes on, is established, or is refused. Sockets,
 * deadlines and closing belong to the driver.
 */
import { HandshakeStatus, type FrameStreamError } from '@shoal/protocol';

/** Why a handshake did not establish a connection (logged and counted, never thrown). */
export type HandshakeRefusal =
  /** Statuses of replication-semantics.md §3.7 (1..5; 4 and 5 are never sent on the wire). */
  | 'unknown_command'
  | 'cluster_mismatch'
  | 'directional_rule'
  | 'auth_required'
  | 'mac_mismatch'
  /** A handshake frame failed framing (§1.2 step 1): size or command out of range. */
  | FrameStreamError
  /** `message_bus.handshake_grace` expired (TLS plus replica handshake share it). */
  | 'deadline'
  /** The peer closed (or reset) before the handshake finished. */
  | 'peer_closed'
  | 'connect_failed'
  | 'tls_failed'
  /** TLS established without ALPN `iggy-replica`. */
  | 'alpn_mismatch'
  /** Too many inbound handshakes in progress. */
  | 'busy'
  /** The plane is stopping. */
  | 'stopping';

const REFUSAL_BY_STATUS: Readonly<Record<HandshakeStatus, HandshakeRefusal | null>> = {
  [HandshakeStatus.Ok]: null,
  [HandshakeStatus.UnknownCommand]: 'unknown_command',
  [HandshakeStatus.ClusterMismatch]: 'cluster_mismatch',
  [HandshakeStatus.DirectionalRule]: 'directional_rule',
  [HandshakeStatus.AuthRequired]: 'auth_required',
  [HandshakeStatus.MacMismatch]: 'mac_mismatch',
};

export function refusalOfStatus(status: HandshakeStatus): HandshakeRefusal {
  return REFUSAL_BY_STATUS[status] ?? 'unknown_command';
}

export type HandshakeStep =
  /** Write `send` (possibly nothing) and feed the machine more bytes. */
  | { readonly kind: 'continue'; readonly send: readonly Uint8Array[] }
  /**
   * Write `send`; the link is up with replica `peer`. `leftover` = bytes received past the
   * last handshake frame: the start of the consensus stream (the peer may pipeline frames right
   * behind its last handshake frame).
   */
  | { readonly kind: 'established'; readonly peer: number; readonly send: readonly Uint8Array[]; readonly leftover: Uint8Array }
  /**
   * Write `send` (a reject Challenge, when the rules allow one), then close. `statusByte` is the
   * raw status byte a dialer received (any non-zero value is a rejection), or the acceptor's
   * verdict status; null when no status applies.
   */
  | { readonly kind: 'refused'; readonly reason: HandshakeRefusal; readonly send: readonly Uint8Array[]; readonly statusByte: number | null };

export interface HandshakeMachine {
  /** Who speaks first: the dialer's Hello, nothing for the acceptor. */
  start(): HandshakeStep;
  /** Feeds bytes in arrival order. Not called again after an `established` or `refused` step. */
  receive(chunk: Uint8Array): HandshakeStep;
}

export const NOTHING: readonly Uint8Array[] = Object.freeze([]);
