/**
 * What a shard's client plane (client-plane.ts) is given by its shard worker: the shard's
 * metadata copy, the node facts, the ring dispatch, the password pool and the forwarding
 * channels. The adapter turns it into the gateway's context (@shoal/gateway context.ts).
 */
import type { ReplyContext } from '@shoal/gateway';
import type { Hash32 } from '@shoal/state';
import type { ClientRequestMessage, SessionSubmitMessage } from '../channels/messages.js';
import type { ChannelServer } from '../forwarding/channel-server.js';
import type { Logger } from '../log/logger.js';
import type { PasswordHasher } from '../pool/hash-pool.js';
import type { MetadataCopy } from '../shard/metadata-copy.js';
import type { StatusTable } from '../status/status-table.js';
import type { ClientListener } from './listener.js';
import type { NodeFacts } from './node-facts.js';

export interface PlaneContext {
  readonly shard: number;
  readonly metadata: MetadataCopy;
  readonly status: StatusTable;
  readonly facts: NodeFacts;
  readonly hasher: PasswordHasher;
  readonly h32: Hash32;
  readonly reply: ReplyContext;
  readonly log: Logger;
  /** The connections of this shard (set once the listener exists). */
  readonly listener: () => ClientListener;
  /** The thread owning a group (metadata worker or a shard), as a mesh index. */
  readonly ownerThreadOf: (group: bigint) => number;
  /** Sends to another thread's ring, or runs the message here when `thread` is this shard's own. */
  readonly dispatch: (thread: number, message: ClientRequestMessage | SessionSubmitMessage) => void;
  /** The other nodes' forwarding channels that land on this shard's client port. */
  readonly channels: ChannelServer;
  /** µs since the epoch (PAT expiry at login). */
  readonly nowMicros: () => bigint;
}
