/**
 * The forwarding side of one channel: this shard → one peer node's client port
 * (docs/cluster.md "Forwarded partition requests").
 *
 * ```
 *  send(request) ─ window full / peer backing off ──────────────▶ failed 58 (nothing was sent)
 *        │ pending[id] (a deadline), in send order
 *        ├ link up ─▶ ForwardRequest on the socket
 *        └ link down ─▶ queued; dial, Hello ▸ Challenge ▸ Finish, then the queue in order
 *  ForwardReply(id) ─▶ answered(pending, frame)        (completes: pending removed)
 *  socket lost ─▶ every sent request failed 57 (its outcome is unknown), unsent ones 58
 *  sweep ─▶ a request past its deadline failed 57 / 58; a late reply for it is dropped
 * ```
 *
 * One link per (shard, peer): one TCP stream, so the requests of one partition leave in the
 * order the shard forwarded them, and the primary's shard takes them from the stream in order.
 */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { ErrorCode, FRAME_HEADER_SIZE, FrameDecoder } from '@shoal/protocol';
import type { ClientRequestMessage, RequestRoute } from '../channels/messages.js';
import type { Logger } from '../log/logger.js';
import { decodeForwardReply, encodeForwardRequestHeader } from './frames.js';
import { ChannelDialerHandshake, type ChannelIdentity } from './handshake.js';

/** A forwarded request waiting for the primary's answer. */
export interface PendingForward {
  readonly id: bigint;
  /** The client connection's token (its shard gets the answer). */
  readonly token: number;
  readonly group: bigint;
  readonly route: RequestRoute;
  /** A copy of the client's request header (what our own 57 / 58 answers echo). */
  readonly header: Uint8Array;
  readonly bytes: number;
  readonly deadlineMs: number;
  sent: boolean;
}

/** Where a link reports the end of each request (the partition host of this shard). */
export interface ForwardOutcomes {
  /** The primary answered; `frame` is a view valid during the call (null: no answer). */
  forwardAnswered(request: PendingForward, frame: Uint8Array | null, completes: boolean): void;
  /** No answer will come: tell the client `code` (57 outcome unknown, 58 nothing happened). */
  forwardFailed(request: PendingForward, code: number): void;
}

export interface ForwardLinkSettings {
  readonly identity: ChannelIdentity;
  /** `frame_size_max` of the client port, plus one channel header. */
  readonly frameSizeMax: number;
  /** Requests and bytes a link may have outstanding. */
  readonly windowRequests: number;
  readonly windowBytes: number;
  /** How long a request may wait for its answer. */
  readonly timeoutMs: number;
  /** Dial + handshake budget. */
  readonly connectTimeoutMs: number;
  readonly randomBytes: (size: number) => Uint8Array;
  /**
   * The peers' client ports speak TLS (`[tcp.tls]`, the same on every node): the link dials TLS.
   * The peer's certificate is not verified (no CA is configured for it): the channel's own
   * handshake, keyed by the cluster secret, is what authenticates the peer; TLS gives secrecy.
   */
  readonly tls: boolean;
}

type LinkState = 'down' | 'connecting' | 'up';

const BACKOFF_MIN_MS = 50;
const BACKOFF_MAX_MS = 2000;

interface Queued {
  readonly pending: PendingForward;
  readonly parts: readonly Uint8Array[];
}

export class ForwardLink {
  readonly peer: number;
  readonly #host: string;
  readonly #port: number;
  readonly #settings: ForwardLinkSettings;
  readonly #outcomes: ForwardOutcomes;
  readonly #log: Logger;
  #state: LinkState = 'down';
  #socket: Socket | null = null;
  #decoder: FrameDecoder | null = null;
  #handshake: ChannelDialerHandshake | null = null;
  #connectTimer: NodeJS.Timeout | null = null;
  #retryAtMs = 0;
  #backoffMs = BACKOFF_MIN_MS;
  #nextId = 1n;
  /** Every outstanding request (sent or queued), in send order. */
  readonly #pending = new Map<bigint, PendingForward>();
  #queued: Queued[] = [];
  #bytes = 0;
  #corked = false;
  #closed = false;
  readonly counters = { forwarded: 0, answered: 0, failed: 0, connects: 0, refused: 0 };

  constructor(peer: number, address: { readonly host: string; readonly port: number }, settings: ForwardLinkSettings,
    outcomes: ForwardOutcomes, log: Logger) {
    this.peer = peer;
    this.#host = address.host;
    this.#port = address.port;
    this.#settings = settings;
    this.#outcomes = outcomes;
    this.#log = log;
  }

  get outstanding(): number {
    return this.#pending.size;
  }

  get up(): boolean {
    return this.#state === 'up';
  }

  /** Carries `message` to the peer. Its views may die after the call: what is kept is copied. */
  send(message: ClientRequestMessage, nowMs: number): void {
    const s = this.#settings;
    const bytes = message.body.length + 2 * FRAME_HEADER_SIZE;
    const pending: PendingForward = {
      id: this.#nextId++, token: message.token, group: message.group, route: message.route, header: message.header.slice(), bytes,
      deadlineMs: nowMs + s.timeoutMs, sent: false,
    };
    if (this.#closed || (this.#state === 'down' && nowMs < this.#retryAtMs)
      || this.#pending.size >= s.windowRequests || this.#bytes + bytes > s.windowBytes) {
      this.counters.failed += 1;
      this.#outcomes.forwardFailed(pending, ErrorCode.TransientNotAccepted);
      return;
    }
    this.#pending.set(pending.id, pending);
    this.#bytes += bytes;
    this.counters.forwarded += 1;
    const head = encodeForwardRequestHeader({
      forwardId: pending.id, route: message.route, userId: message.userId, group: message.group, metadataOp: message.metadataOp,
      fenceOp: message.fenceOp, hostValue: message.hostValue,
    }, message.header, message.body);
    // The socket keeps references until it has written them, and the views are a ring's or a
    // socket chunk's: the link sends its own copies.
    const parts = [head, pending.header, message.body.slice()];
    if (this.#state === 'up') {
      this.#write(parts);
      pending.sent = true;
      return;
    }
    this.#queued.push({ pending, parts });
    if (this.#state === 'down') this.#dial();
  }

  /** Requests past their deadline end now (57 if sent, 58 if still queued). */
  sweep(nowMs: number): void {
    for (const pending of this.#pending.values()) {
      if (pending.deadlineMs > nowMs) break; // in send order, so deadlines ascend
      this.#fail(pending, pending.sent ? ErrorCode.TransientNotCommitted : ErrorCode.TransientNotAccepted);
    }
    if (this.#queued.length > 0) this.#queued = this.#queued.filter((q) => this.#pending.has(q.pending.id));
  }

  /**
   * A newer view replaced this peer as `group`'s primary: its requests of that group end now, 57
   * if sent (outcome unknown: the old primary may have prepared it into the new view's log, or it
   * is never committed), 58 if still queued; a late reply is dropped. The link stays up.
   */
  abandonGroup(group: bigint): number {
    let ended = 0;
    for (const pending of [...this.#pending.values()]) {
      if (pending.group !== group) continue;
      this.#fail(pending, pending.sent ? ErrorCode.TransientNotCommitted : ErrorCode.TransientNotAccepted);
      ended++;
    }
    if (ended > 0 && this.#queued.length > 0) this.#queued = this.#queued.filter((q) => this.#pending.has(q.pending.id));
    return ended;
  }

  /** Shutdown: every outstanding request ends (57 / 58), the socket closes, nothing is dialed again. */
  close(): void {
    this.#closed = true;
    this.#lost();
  }

  // -------------------------------------------------------------------------------------------

  #dial(): void {
    const s = this.#settings;
    this.#state = 'connecting';
    this.counters.connects += 1;
    const socket: Socket = s.tls
      ? tlsConnect({ host: this.#host, port: this.#port, rejectUnauthorized: false, minVersion: 'TLSv1.2' })
      : connect({ host: this.#host, port: this.#port, noDelay: true });
    socket.setNoDelay(true);
    this.#socket = socket;
    this.#decoder = new FrameDecoder({ frameSizeMax: s.frameSizeMax });
    this.#handshake = new ChannelDialerHandshake(s.identity, this.peer, s.randomBytes);
    this.#connectTimer = setTimeout(() => this.#drop(socket, 'connect_timeout'), s.connectTimeoutMs);
    socket.on(s.tls ? 'secureConnect' : 'connect', () => {
      if (this.#socket === socket && this.#handshake !== null) socket.write(this.#handshake.hello());
    });
    socket.on('data', (chunk: Buffer) => this.#onData(socket, chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#drop(socket, 'closed'));
  }

  #onData(socket: Socket, chunk: Buffer): void {
    const decoder = this.#decoder;
    if (this.#socket !== socket || decoder === null) return;
    if (!decoder.push(chunk)) return this.#drop(socket, decoder.error ?? 'stream_error');
    for (let frame = decoder.pull(); frame !== null; frame = decoder.pull()) {
      if (this.#state === 'connecting') {
        this.#onChallenge(socket, frame);
        if (this.#socket !== socket) return;
        continue;
      }
      const reply = decodeForwardReply(frame);
      if (reply === null) return this.#drop(socket, 'bad_reply_frame');
      const pending = this.#pending.get(reply.forwardId);
      if (pending === undefined) continue; // answered by its deadline already
      if (reply.completes) this.#forget(pending);
      this.counters.answered += 1;
      this.#outcomes.forwardAnswered(pending, reply.frame, reply.completes);
    }
    if (decoder.error !== null) this.#drop(socket, decoder.error);
  }

  #onChallenge(socket: Socket, frame: Uint8Array): void {
    const finish = this.#handshake?.onChallenge(frame) ?? null;
    if (finish === null) {
      this.counters.refused += 1;
      this.#drop(socket, 'handshake_refused');
      return;
    }
    if (this.#connectTimer !== null) clearTimeout(this.#connectTimer);
    this.#connectTimer = null;
    this.#handshake = null;
    this.#state = 'up';
    this.#backoffMs = BACKOFF_MIN_MS;
    this.#log.info('forwarding channel up', { peer: this.peer });
    this.#write([finish]);
    const queued = this.#queued;
    this.#queued = [];
    for (const q of queued) {
      if (!this.#pending.has(q.pending.id)) continue;
      this.#write(q.parts);
      q.pending.sent = true;
    }
  }

  #write(parts: readonly Uint8Array[]): void {
    const socket = this.#socket;
    if (socket === null) return;
    // One writev per turn for everything forwarded in it.
    if (!this.#corked) {
      this.#corked = true;
      socket.cork();
      queueMicrotask(() => {
        this.#corked = false;
        if (!socket.destroyed) socket.uncork();
      });
    }
    for (const part of parts) if (part.length > 0) socket.write(part);
  }

  /** `socket` ended (or is given up): everything outstanding on it fails, dialing backs off. */
  #drop(socket: Socket, reason: string): void {
    if (this.#socket !== socket) return;
    const wasUp = this.#state === 'up';
    this.#lost();
    if (!this.#closed) {
      this.#retryAtMs = Date.now() + this.#backoffMs;
      this.#backoffMs = Math.min(BACKOFF_MAX_MS, this.#backoffMs * 2);
    }
    this.#log.info(wasUp ? 'forwarding channel down' : 'forwarding channel dial failed', { peer: this.peer, reason });
  }

  #lost(): void {
    const socket = this.#socket;
    this.#socket = null;
    this.#decoder = null;
    this.#handshake = null;
    this.#state = 'down';
    if (this.#connectTimer !== null) clearTimeout(this.#connectTimer);
    this.#connectTimer = null;
    this.#queued = [];
    socket?.destroy();
    for (const pending of [...this.#pending.values()]) {
      this.#fail(pending, pending.sent ? ErrorCode.TransientNotCommitted : ErrorCode.TransientNotAccepted);
    }
  }

  #fail(pending: PendingForward, code: number): void {
    this.#forget(pending);
    this.counters.failed += 1;
    this.#outcomes.forwardFailed(pending, code);
  }

  #forget(pending: PendingForward): void {
    if (this.#pending.delete(pending.id)) this.#bytes -= pending.bytes;
  }
}
