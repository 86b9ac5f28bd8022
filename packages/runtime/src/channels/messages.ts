/**
 * Every message that crosses a ring between two threads of a node (style habit 15: a typed
 * boundary). The supervisor (main thread) is not on the rings: it talks to workers with
 * `postMessage` (node/control.ts), rarely.
 *
 * | kind                | from → to                          | carries                                             |
 * |---------------------|------------------------------------|-----------------------------------------------------|
 * | `client_request`    | receiving shard → group owner      | a request for a group owned elsewhere: the 256-byte |
 * |                     | (metadata worker or another shard) | header, the body to act on, the connection token,   |
 * |                     |                                    | the user, the sender's metadata op (a fence)        |
 * | `reply`             | group owner → connection's shard   | the Reply / Eviction frame for one request, or none |
 * |                     |                                    | (the request ended without an answer)               |
 * | `metadata_commit`   | metadata worker → every shard      | one committed metadata op, in op order              |
 * | `metadata_snapshot` | metadata worker → every shard      | the whole catalog at an op (boot, catch-up)         |
 * | `session_submit`    | shard → metadata worker            | a verified login (Register) or a logout/disconnect  |
 * | `session_result`    | metadata worker → shard            | the outcome of one session_submit                   |
 * | `replica_frame`     | any → group owner / connection     | a replica-plane frame by group (cluster issue)      |
 *
 * Byte views inside a decoded message point into the ring and are valid only while the visitor
 * runs: copy what you keep (channels/envelope.ts).
 */
import type { SessionOutcome } from '@shoal/consensus';

/** What the group owner does with a forwarded client request. */
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
   * `hostValue` to the metadata worker.
   */
  resolve_delete_segments: 5,
} as const;
export type RequestRoute = (typeof RequestRoute)[keyof typeof RequestRoute];

export interface ClientRequestMessage {
  readonly kind: 'client_request';
  readonly route: RequestRoute;
  /** Connection token (client-plane/token.ts): which shard and connection gets the reply. */
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

export interface ReplyMessage {
  readonly kind: 'reply';
  readonly token: number;
  /** The group whose owner answers (the connection records the op of a committed reply). */
  readonly group: bigint;
  /** A whole Reply or Eviction frame; null: the request ended without an answer (dropped). */
  readonly frame: Uint8Array | null;
  /** The frame answers a request the connection counts in flight (its slot is released). */
  readonly completes: boolean;
}

export interface MetadataCommitMessage {
  readonly kind: 'metadata_commit';
  readonly op: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  readonly userId: number;
  readonly client: bigint;
  readonly body: Uint8Array;
}

export interface MetadataSnapshotMessage {
  readonly kind: 'metadata_snapshot';
  /** The op the snapshot reflects (the copy applies commits above it). */
  readonly op: bigint;
  /** state's encodeSnapshot payload. */
  readonly snapshot: Uint8Array;
}

export type SessionKind = 'register' | 'logout';

export interface SessionSubmitMessage {
  readonly kind: 'session_submit';
  readonly session: SessionKind;
  /** Connection token; 0 for a disconnect logout (nobody waits for the result). */
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

export interface ReplicaFrameMessage {
  readonly kind: 'replica_frame';
  /** in: from a replica connection to the group's owner; out: from the owner to the connection's thread. */
  readonly direction: 'in' | 'out';
  readonly replica: number;
  readonly group: bigint;
  readonly frame: Uint8Array;
}

export type ChannelMessage =
  | ClientRequestMessage
  | ReplyMessage
  | MetadataCommitMessage
  | MetadataSnapshotMessage
  | SessionSubmitMessage
  | SessionResultMessage
  | ReplicaFrameMessage;

export type ChannelMessageKind = ChannelMessage['kind'];

export const SESSION_OUTCOMES: readonly SessionOutcome[] = [
  'ok', 'not_primary', 'not_caught_up', 'pipeline_full', 'in_progress', 'canceled', 'client_id_owned_by_another_user',
  'primary_unreachable', 'forward_timed_out',
];
