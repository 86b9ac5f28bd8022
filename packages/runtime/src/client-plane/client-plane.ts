/**
 * The client plane of one shard: the transport side of the node's client gateway
 * (@shoal/gateway, docs/gateway.md). The gateway decides what every request frame gets; this
 * adapter gives it the shard's world:
 *
 * ```
 *  socket frame ─▶ forwarding channel (another node's Hello)? ─▶ ChannelServer
 *               └▶ Gateway.onFrame ── route ─▶ dispatch to the owner thread (metadata worker / a shard)
 *                                  ├ verifyPassword ─▶ piscina pool ─▶ Gateway.passwordVerified
 *                                  └ sessionChanged ─▶ the listener publishes it (status table)
 *  ring reply ─▶ forward token? ─▶ ChannelServer.reply  else ─▶ Gateway.reply(connection by token)
 * ```
 */
import { METADATA_GROUP } from '@shoal/protocol';
import { Gateway, type GatewayConnection, type GatewayContext, type GatewayCounters, type GatewayMessage } from '@shoal/gateway';
import { concatBytes } from '@shoal/stdx';
import type { ReplyMessage, SessionResultMessage } from '../channels/messages.js';
import { isChannelHello } from '../forwarding/handshake.js';
import { METADATA_THREAD } from '../node/worker-data.js';
import type { ClientConnection, ConnectionHandler } from './connection.js';
import { partitionCounters, sessionsOf } from './node-facts.js';
import type { PlaneContext } from './plane-context.js';
import { isForwardToken } from './token.js';

export type ClientPlaneCounters = GatewayCounters;

export class ClientPlane implements ConnectionHandler {
  readonly holdReads: () => boolean;
  readonly #ctx: PlaneContext;
  readonly #gateway: Gateway;
  /** Connections holding a frame until this shard's metadata copy catches up (connection.ts). */
  readonly #awaiting = new Set<ClientConnection>();

  constructor(ctx: PlaneContext, holdReads: () => boolean) {
    this.#ctx = ctx;
    this.holdReads = holdReads;
    const gateway: GatewayContext = {
      metadata: ctx.metadata,
      facts: {
        counters: partitionCounters(ctx.status),
        sessions: () => sessionsOf(ctx.status),
        stats: () => ctx.facts.stats(),
        cluster: (address) => ctx.facts.cluster(address),
        clustered: ctx.facts.clustered,
        clusterGroups: (state) => ctx.facts.clusterGroups(state),
      },
      reply: ctx.reply,
      h32: ctx.h32,
      nowMicros: ctx.nowMicros,
      output: {
        route: (message) => this.#route(message),
        verifyPassword: (connection, password, hash) => this.#verifyPassword(connection, password, hash),
        sessionChanged: (connection) => ctx.listener().publishSession(connection as ClientConnection),
        connectionOf: (token) => ctx.listener().byToken(token),
      },
    };
    this.#gateway = new Gateway(gateway);
  }

  get counters(): ClientPlaneCounters {
    return this.#gateway.counters;
  }

  onFrame(connection: ClientConnection, frame: Uint8Array): void {
    const ctx = this.#ctx;
    // Another node's forwarding channel (docs/cluster.md): its first frame is a channel Hello,
    // which no client sends (command 14 is not a Request).
    if (connection.channel) return ctx.channels.onFrame(connection, frame);
    if (connection.session === null && isChannelHello(frame)) {
      ctx.listener().hideSession(connection);
      return ctx.channels.open(connection, frame);
    }
    this.#gateway.onFrame(connection, frame);
  }

  /** Behind the metadata worker: the op to wait for before a frame runs now. */
  metadataFence(): bigint | null {
    const published = this.#ctx.status.metadataApplied();
    return this.#ctx.metadata.appliedOp >= published ? null : published;
  }

  metadataReached(fence: bigint): boolean {
    return this.#ctx.metadata.appliedOp >= fence;
  }

  awaitMetadata(connection: ClientConnection): void {
    this.#awaiting.add(connection);
  }

  metadataWaitExpired(connection: ClientConnection, fence: bigint): void {
    this.#ctx.log.warn('metadata copy still behind: a held frame runs on the older copy', {
      connection: connection.clientId, fence, applied: this.#ctx.metadata.appliedOp,
    });
  }

  /** The shard's metadata copy moved: connections waiting on it go on (those still behind re-register). */
  onMetadataChange(): void {
    if (this.#awaiting.size === 0) return;
    const waiting = [...this.#awaiting];
    this.#awaiting.clear();
    for (const connection of waiting) connection.pump();
  }

  onClose(connection: ClientConnection): void {
    this.#awaiting.delete(connection);
    if (connection.channel) return this.#ctx.channels.onClose(connection);
    this.#gateway.disconnected(connection);
  }

  /** A reply from a group owner (another thread's ring, or this shard's own engines). */
  onReply(message: ReplyMessage, copy: boolean): void {
    const frame = message.frame === null || !copy ? message.frame : message.frame.slice();
    if (isForwardToken(message.token)) return this.#ctx.channels.reply(message.token, frame, message.completes);
    const connection = this.#ctx.listener().byToken(message.token);
    if (connection !== null) this.#gateway.reply(connection, message.group, frame, message.completes);
  }

  /**
   * A reply given as parts (a poll answered on this shard: header, prefix, batch views);
   * `written` runs once nothing references the parts any more (the socket wrote them, they were
   * copied, or there is no one to send them to).
   */
  onReplyParts(token: number, parts: readonly Uint8Array[], written: () => void): void {
    if (isForwardToken(token)) {
      this.#ctx.channels.reply(token, concatBytes(parts), true);
      return written();
    }
    const connection = this.#ctx.listener().byToken(token);
    if (connection !== null) this.#gateway.replyParts(connection, parts, written);
    else written();
  }

  /** The shard's once-a-second sweep: `[heartbeat]` releases of silent consumer-group members. */
  sweepStale(nowMs: number, staleAfterMs: number): void {
    this.#gateway.sweepStale(this.#ctx.listener().connections(), nowMs, staleAfterMs);
  }

  onSessionResult(message: SessionResultMessage): void {
    this.#gateway.onSessionResult(message);
  }

  requestCounts(): Record<string, number> {
    return this.#gateway.requestCounts();
  }

  /** Sessions and metadata-group requests go to the metadata worker, partition requests to their shard. */
  #route(message: GatewayMessage): void {
    const ctx = this.#ctx;
    const thread = message.kind === 'session_submit' || message.group === METADATA_GROUP ? METADATA_THREAD : ctx.ownerThreadOf(message.group);
    ctx.dispatch(thread, message);
  }

  /** The password check runs in the piscina pool; its verdict goes back to the gateway. */
  #verifyPassword(connection: GatewayConnection, password: string, hash: string): void {
    this.#ctx.hasher.verify(password, hash).then(
      (matches) => this.#gateway.passwordVerified(connection, matches),
      (error: unknown) => {
        this.#ctx.log.warn('password verification failed in the pool', { error });
        this.#gateway.passwordVerified(connection, null);
      },
    );
  }
}
