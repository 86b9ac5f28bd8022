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
import type { ClientRequestMessage, SessionResultMessage, SessionSubmitMessage } from '@shoal/gateway';
import type { SessionOutcome } from '@shoal/consensus';

// The gateway's messages (@shoal/gateway messages.ts) ride the rings unchanged.
export { RequestRoute, type ClientRequestMessage, type SessionKind, type SessionResultMessage, type SessionSubmitMessage } from '@shoal/gateway';

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
