/**
 * The primary's side of forwarding channels on one shard (docs/cluster.md "Forwarded partition
 * requests"). A connection on the client port whose first frame is a channel Hello is another
 * node's forwarding link: after the handshake, each ForwardRequest becomes a `client_request`
 * of this node (marked `forwarded`, fenced on the forwarder's metadata op) under a token of its
 * own, and the reply to that token goes back on the channel as a ForwardReply.
 *
 * ```
 *  Hello ─ no [cluster.auth] / bad Hello ─▶ close          Finish ─ MAC fails ─▶ close
 *  ForwardRequest(id) ─▶ slot (token ≥ FORWARD_SLOT_BASE) ─▶ acceptForwarded(client_request)
 *  reply(token) ─▶ ForwardReply(id, frame)        slots full ─▶ ForwardReply(id, 58) at once
 * ```
 */
import { ErrorCode, METADATA_GROUP, RequestHeaderView } from '@shoal/protocol';
import type { ClientRequestMessage } from '../channels/messages.js';
import { RequestRoute } from '../channels/messages.js';
import type { ClientConnection } from '../client-plane/connection.js';
import { codeReply, type ReplyContext } from '@shoal/gateway';
import { FORWARD_SLOT_BASE, TOKEN_SLOTS_MAX, makeToken, nextGeneration, tokenSlot } from '../client-plane/token.js';
import type { Logger } from '../log/logger.js';
import { CHANNEL_HEADER_SIZE, decodeForwardRequest, encodeForwardReplyHeader } from './frames.js';
import { ChannelAcceptorHandshake, type ChannelIdentity } from './handshake.js';

/** Where forwarded requests enter this node (the shard worker: fence, then the owner). */
export interface ForwardedRequestSink {
  acceptForwarded(message: ClientRequestMessage): void;
}

interface Channel {
  readonly connection: ClientConnection;
  handshake: ChannelAcceptorHandshake | null;
  peer: number;
}

interface Slot {
  readonly channel: Channel;
  readonly forwardId: bigint;
  readonly deadlineMs: number;
}

/** Forwarded requests one shard holds at once (each one's slot lives until its reply). */
const SLOTS = Math.min(65_536, TOKEN_SLOTS_MAX - FORWARD_SLOT_BASE);
/** A slot whose reply never came is reclaimed after this long (the forwarder gave up long before). */
const SLOT_LIFETIME_MS = 60_000;
const FORWARDABLE_ROUTES = new Set<number>([RequestRoute.submit, RequestRoute.poll, RequestRoute.get_offset, RequestRoute.offset_local]);

export interface ChannelServerOptions {
  readonly shard: number;
  /** Null: forwarding is off (no `[cluster.auth]`), every Hello is refused. */
  readonly identity: ChannelIdentity | null;
  /** The client port's `frame_size_max` (channel frames are one channel header larger). */
  readonly frameSizeMax: number;
  readonly reply: ReplyContext;
  readonly randomBytes: (size: number) => Uint8Array;
  readonly log: Logger;
}

export class ChannelServer {
  readonly #o: ChannelServerOptions;
  readonly #sink: ForwardedRequestSink;
  readonly #channels = new Map<number, Channel>();
  readonly #slots: (Slot | null)[] = new Array<Slot | null>(SLOTS).fill(null);
  readonly #generations: number[] = new Array<number>(SLOTS).fill(0);
  readonly #free: number[] = Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i);
  readonly counters = { channels: 0, refused: 0, requests: 0, rejected: 0 };

  constructor(options: ChannelServerOptions, sink: ForwardedRequestSink) {
    this.#o = options;
    this.#sink = sink;
  }

  /** The first frame of `connection` was a channel Hello. */
  open(connection: ClientConnection, hello: Uint8Array): void {
    const identity = this.#o.identity;
    if (identity === null) return this.#refuse(connection, 'channel_without_auth');
    const handshake = new ChannelAcceptorHandshake(identity, this.#o.randomBytes);
    const challenge = handshake.onHello(hello);
    if (challenge === null) return this.#refuse(connection, 'channel_hello_refused');
    connection.becomeChannel(this.#o.frameSizeMax + 2 * CHANNEL_HEADER_SIZE);
    this.#channels.set(connection.token, { connection, handshake, peer: -1 });
    connection.send(challenge);
  }

  /** A frame of a connection `open` made a channel. */
  onFrame(connection: ClientConnection, frame: Uint8Array): void {
    const channel = this.#channels.get(connection.token);
    if (channel === undefined) return connection.close('channel_unknown');
    if (channel.handshake !== null) {
      const peer = channel.handshake.onFinish(frame);
      if (peer === null) return this.#refuse(connection, 'channel_finish_refused');
      channel.handshake = null;
      channel.peer = peer;
      this.counters.channels += 1;
      this.#o.log.info('forwarding channel accepted', { peer });
      return;
    }
    const request = decodeForwardRequest(frame);
    if (request === null || !FORWARDABLE_ROUTES.has(request.route) || request.group === METADATA_GROUP) {
      return connection.close('channel_bad_request');
    }
    this.counters.requests += 1;
    const slot = this.#free.pop();
    if (slot === undefined) {
      this.counters.rejected += 1;
      const answer = codeReply(this.#o.reply, new RequestHeaderView(request.header.slice()), ErrorCode.TransientNotAccepted);
      this.#send(channel, request.forwardId, answer, true);
      return;
    }
    const generation = nextGeneration(this.#generations[slot] ?? 0);
    this.#generations[slot] = generation;
    this.#slots[slot] = { channel, forwardId: request.forwardId, deadlineMs: Date.now() + SLOT_LIFETIME_MS };
    this.#sink.acceptForwarded({
      kind: 'client_request', route: request.route as RequestRoute, token: makeToken(this.#o.shard, FORWARD_SLOT_BASE + slot, generation),
      group: request.group, userId: request.userId, metadataOp: request.metadataOp, hostValue: request.hostValue,
      fenceOp: request.fenceOp, forwarded: true, header: request.header, body: request.body,
    });
  }

  /** The answer to a forwarded request's token. `frame` must stay unchanged (copy views first). */
  reply(token: number, frame: Uint8Array | null, completes: boolean): void {
    const index = tokenSlot(token) - FORWARD_SLOT_BASE;
    const slot = this.#slots[index] ?? null;
    if (slot === null || makeToken(this.#o.shard, FORWARD_SLOT_BASE + index, this.#generations[index] ?? 0) !== token) return;
    if (completes) this.#release(index);
    if (slot.channel.connection.closed) return;
    this.#send(slot.channel, slot.forwardId, frame, completes);
  }

  /** A channel connection closed: its outstanding slots answer nobody. */
  onClose(connection: ClientConnection): void {
    this.#channels.delete(connection.token);
  }

  /** Once a second: slots whose reply never came are reclaimed. */
  sweep(nowMs: number): void {
    for (let i = 0; i < this.#slots.length; i++) {
      const slot = this.#slots[i];
      if (slot !== null && slot !== undefined && (slot.deadlineMs <= nowMs || slot.channel.connection.closed)) this.#release(i);
    }
  }

  get outstanding(): number {
    return SLOTS - this.#free.length;
  }

  #send(channel: Channel, forwardId: bigint, frame: Uint8Array | null, completes: boolean): void {
    const head = encodeForwardReplyHeader(forwardId, frame, completes);
    channel.connection.sendParts(frame === null ? [head] : [head, frame]);
  }

  #release(index: number): void {
    this.#slots[index] = null;
    this.#free.push(index);
  }

  #refuse(connection: ClientConnection, reason: string): void {
    this.counters.refused += 1;
    this.#channels.delete(connection.token);
    connection.close(reason);
  }
}
