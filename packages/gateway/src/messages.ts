/**
 * What the gateway sends to the owners of a client's groups, and what comes back from the
 * metadata owner after a session submission. The runtime carries these over its rings between
 * threads (runtime/src/channels/messages.ts re-exports them); the simulator hands them to a
 * node's drivers directly. Both run the same gateway, so both see the same messages.
 *
 * | message           | gateway → owner                              | owner                         |
 * |-------------------|----------------------------------------------|-------------------------------|
 * | `client_request`  | a checked request of a logged-in connection  | metadata owner (its group is  |
 * |                   | for one group, with the body to act on       | METADATA_GROUP) or the group's|
 * |                   |                                              | partition owner               |
 * | `session_submit`  | a verified login (Register) or a logout /    | metadata owner                |
 * |                   | disconnect                                   |                               |
 * | `session_result`  | (owner → gateway) the outcome of one submit  |                               |
 */
import type { SessionOutcome } from '@shoal/consensus';

/** What the group owner does with a client request. */
export const RequestRoute = {
  /** Submit to the group's consensus core (metadata op, SendMessages, Quorum offset write). */
  submit: 1,
  /** PollMessages on the partition's owner (`hostValue` = the resolved consumer). */
  poll: 2,
  /** GetConsumerOffset on the partition's owner (`hostValue` = the resolved consumer). */
  get_offset: 3,
  /** A NoAck consumer-offset write, applied locally on the partition primary (`body` = resolved). */
  offset_local: 4,
  /**
   * DeleteSegments, step 1: the partition owner resolves the offset up to which
   * `segments_count` sealed segments reach, then forwards a `submit` with that offset in
   * `hostValue` to the metadata owner.
   */
  resolve_delete_segments: 5,
} as const;
export type RequestRoute = (typeof RequestRoute)[keyof typeof RequestRoute];

/** The token of a submission nobody waits for (a disconnect logout). */
export const TOKEN_NONE = 0;

export interface ClientRequestMessage {
  readonly kind: 'client_request';
  readonly route: RequestRoute;
  /** The connection's token: which connection gets the reply. */
  readonly token: number;
  readonly group: bigint;
  /** The user the connection authenticated as. */
  readonly userId: number;
  /** The metadata op the sender had applied: the owner acts only once it has applied it too. */
  readonly metadataOp: bigint;
  /** Route-specific value (see RequestRoute). */
  readonly hostValue: bigint;
  /**
   * Read-your-writes for polls: the highest op of this group whose reply this connection has
   * received (0: none). A replica that has not applied it does not serve the poll itself.
   */
  readonly fenceOp: bigint;
  /**
   * Carried here from another node (docs/cluster.md "Forwarded partition requests"): answered by
   * this node's replica whatever its role, never forwarded again.
   */
  readonly forwarded: boolean;
  /** The client's 256-byte RequestHeader. */
  readonly header: Uint8Array;
  /** The body to act on (for SendMessages: the admitted batch; for offsets: the resolved body). */
  readonly body: Uint8Array;
}

export type SessionKind = 'register' | 'logout';

export interface SessionSubmitMessage {
  readonly kind: 'session_submit';
  readonly session: SessionKind;
  /** Connection token; TOKEN_NONE for a disconnect logout (nobody waits for the result). */
  readonly token: number;
  readonly client: bigint;
  readonly userId: number;
  /** Logout: the session epoch the client used. */
  readonly epoch: bigint;
  /** Logout: the request number (u64::MAX for a transport disconnect, as the reference). */
  readonly request: bigint;
}

export interface SessionResultMessage {
  readonly kind: 'session_result';
  readonly session: SessionKind;
  readonly token: number;
  readonly client: bigint;
  readonly userId: number;
  readonly outcome: SessionOutcome;
  /** Register: the bound epoch (the register op); logout: the committed logout op. */
  readonly epoch: bigint;
  readonly watermark: bigint;
}

/** Everything the gateway sends to an owner. */
export type GatewayMessage = ClientRequestMessage | SessionSubmitMessage;
