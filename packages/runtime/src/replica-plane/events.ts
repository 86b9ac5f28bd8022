/** What the plane reports about links and refusals (shared by acceptor, dialer and plane). */
import type { HandshakeRefusal } from './handshake-step.js';

export type PeerDirection = 'inbound' | 'outbound';

export interface PeerUpInfo {
  readonly direction: PeerDirection;
  readonly tls: boolean;
  /** True when the socket was handed to `handOff` instead of being served on this thread. */
  readonly handedOff: boolean;
}

export interface HandshakeRefusedInfo {
  readonly direction: PeerDirection;
  /** The dialed peer (outbound); null inbound (the Hello's claim is not trusted). */
  readonly peer: number | null;
  readonly reason: HandshakeRefusal;
  /** The Challenge status byte a dialer received, or the acceptor's verdict status. */
  readonly statusByte: number | null;
  /** `ip:port` of the other end. */
  readonly remote: string;
}

/**
 * Installs an established link in the one-connection-per-pair registry; false when it was
 * refused there (a duplicate, or the plane is stopping) and the socket was closed.
 */
export type InstallLink = (peer: number, socket: import('node:net').Socket, leftover: Uint8Array, info: PeerUpInfo) => Promise<boolean>;
