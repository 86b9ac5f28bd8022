/**
 * What the gateway is given by its host (the runtime's shard worker, or a simulated node): a
 * read-only view of the committed metadata, the node-local facts reads need, and the ports its
 * decisions leave by. The gateway keeps no clock, socket, thread or promise: a password check
 * goes out as `verifyPassword` and its verdict comes back through `Gateway.passwordVerified`.
 */
import type { ClusterGroups, ClusterMetadata } from '@shoal/protocol';
import type { ClientSession, Hash32, HostStats, MetadataState, PartitionCountersSource } from '@shoal/state';
import type { GatewayConnection } from './connection.js';
import type { GatewayMessage } from './messages.js';
import type { ReplyContext } from './replies.js';

/** The committed metadata the gateway routes, authorises and answers reads from. */
export interface MetadataView {
  /** False until a catalog exists here: nothing but PING and login gates is served before. */
  readonly ready: boolean;
  /** Only read when `ready`. */
  readonly state: MetadataState;
  /** The op `state` reflects: routed requests carry it as a fence. */
  readonly appliedOp: bigint;
}

/** Node-local facts of the non-replicated reads (state's ReadHost, without the caller). */
export interface GatewayFacts {
  readonly counters: PartitionCountersSource;
  sessions(): ClientSession[];
  stats(): HostStats;
  /** The roster as the caller at `address` is told it. */
  cluster(address: string | undefined): ClusterMetadata;
  /** Cluster mode: GetClusterMetadata carries the per-group extension. */
  readonly clustered: boolean;
  clusterGroups(state: MetadataState): ClusterGroups;
}

export interface GatewayOutput {
  /** To the owner of `message.group` (a `session_submit` and METADATA_GROUP: the metadata owner). */
  route(message: GatewayMessage): void;
  /**
   * Check `password` against `hash` (slow: the runtime runs it in a pool) and then call
   * `Gateway.passwordVerified(connection, verdict)` once, later or at once.
   */
  verifyPassword(connection: GatewayConnection, password: string, hash: string): void;
  /** The connection's bound session changed (GetClients lists it). */
  sessionChanged(connection: GatewayConnection): void;
  /** The live connection a token names, or null when it is gone. */
  connectionOf(token: number): GatewayConnection | null;
}

export interface GatewayContext {
  readonly metadata: MetadataView;
  readonly facts: GatewayFacts;
  readonly reply: ReplyContext;
  readonly h32: Hash32;
  /** µs since the epoch (PAT expiry at login). */
  nowMicros(): bigint;
  readonly output: GatewayOutput;
}
