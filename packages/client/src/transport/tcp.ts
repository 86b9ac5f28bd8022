import { Socket } from 'node:net';
import { isIP } from 'node:net';
import { type PeerCertificate, checkServerIdentity, connect as tlsConnect } from 'node:tls';
import { CommandCode, FRAME_SIZE_MAX_DEFAULT, FrameDecoder, type ClientVersionInfo, type LoginReply } from '@shoal/protocol';
import { type NodeAddress, formatAddress } from '../address.js';
import {
  ShoalAbortError, ShoalClosedError, ShoalConnectionError, ShoalConnectionLostError, type ShoalError, ShoalProtocolError,
  ShoalTimeoutError, asShoalError,
} from '../errors.js';
import { type ClientEvents, commandName } from '../events.js';
import { type Scheduler, type TimerHandle, backoffDelay } from '../scheduler.js';
import {
  type Credentials, type OutgoingFrame, type RandomSource, type ReplyInfo, Session, type SessionCall, type SessionEvent,
  type Ticket,
} from '../session.js';
import { nodeRandom, nodeScheduler } from './node-scheduler.js';

/**
 * One TCP connection to one node, driving a sans-IO `Session`:
 *
 *   request() ─▶ session.submit ─▶ pump: session.drain ─▶ socket.write   (stops while the socket
 *                                                                         is back-pressured)
 *   socket 'data' ─▶ FrameDecoder ─▶ session.receive ─▶ resolve / reject / schedule a 57 replay
 *
 * - Bounded in-flight window (the session's `windowMax`): requests pipeline up to it; beyond it
 *   they wait in the session queue, which is also where they wait while `write` reports a full
 *   socket buffer (until 'drain').
 * - Every request has a timeout and takes an AbortSignal; a timed-out or aborted request is
 *   abandoned in the session (its late reply is recognised and dropped).
 * - 57 TransientNotCommitted: the same frame (same request number, same session) is written
 *   again on this connection after a short back-off, up to `replayAttemptsMax` times.
 * - Lazy (re)connect: a request on a closed connection dials, and logs in again with the stored
 *   credentials, under the reconnect policy; each dial gets a fresh session (fresh client id).
 * - Heartbeat: a ping after `heartbeatIntervalMs` without traffic keeps the server from evicting
 *   the session as stale.
 */
export interface ReconnectPolicy {
  /** Re-dial a connection that was open before (default true). */
  readonly enabled?: boolean;
  /** Dial attempts per reconnection (default 3; Infinity = unlimited). */
  readonly maxRetries?: number;
  /** Pause between dial attempts (default 1000 ms). */
  readonly intervalMs?: number;
  /** Minimum pause between losing a connection and the first re-dial (default 0). */
  readonly reestablishAfterMs?: number;
}

/**
 * TLS to the node (the server's `[tcp.tls]`): TLS 1.2 or 1.3, the server certificate verified
 * against `ca` (or the system roots) and its name checked against `servername` (default: the
 * host dialed). Both checks are on unless `rejectUnauthorized: false` (testing only).
 */
export interface TlsOptions {
  /** PEM CA certificate(s) to trust instead of the system roots. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** The name the server certificate must carry, sent as SNI (the connection string's `tls_domain`). */
  readonly servername?: string;
  /** Default true: refuse a certificate that does not verify or does not name the server. */
  readonly rejectUnauthorized?: boolean;
}

export interface ConnectionOptions {
  /** TLS on (with defaults when `true` or `{}`); absent or false: plaintext TCP. */
  readonly tls?: TlsOptions | boolean;
  readonly connectTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  readonly noDelay?: boolean;
  readonly windowMax?: number;
  readonly frameSizeMax?: number;
  readonly heartbeatIntervalMs?: number;
  readonly replayAttemptsMax?: number;
  readonly replayBackoffMs?: number;
  readonly reconnect?: ReconnectPolicy;
  readonly stampRequestChecksum?: boolean;
  readonly versionInfo?: ClientVersionInfo;
}

export interface ConnectionDeps {
  readonly scheduler?: Scheduler;
  readonly random?: RandomSource & { readonly float?: () => number };
  /** Where connection events go (connected, disconnected, reconnecting, replay, evicted). */
  readonly events?: ClientEvents;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface Reply {
  readonly payload: Uint8Array;
  readonly info: ReplyInfo;
}

export type ConnectionState = 'idle' | 'connecting' | 'open' | 'closed' | 'shutdown';

interface Pending {
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: ShoalError) => void;
  timer: TimerHandle | null;
  cleanup: () => void;
}

const DEFAULTS = {
  connectTimeoutMs: 5000,
  requestTimeoutMs: 30_000,
  noDelay: true,
  windowMax: 64,
  heartbeatIntervalMs: 5000,
  replayAttemptsMax: 8,
  replayBackoffMs: 10,
} as const;

export class TcpConnection {
  readonly address: NodeAddress;
  readonly #options: ConnectionOptions;
  readonly #scheduler: Scheduler;
  readonly #random: RandomSource & { readonly float?: () => number };
  readonly #events: ClientEvents | null;
  #state: ConnectionState = 'idle';
  #socket: Socket | null = null;
  #session: Session | null = null;
  #decoder: FrameDecoder | null = null;
  #pending = new Map<Ticket, Pending>();
  #opening: Promise<void> | null = null;
  #writeBlocked = false;
  #credentials: Credentials | null = null;
  #login: LoginReply | null = null;
  #everOpened = false;
  #lostAt = Number.NEGATIVE_INFINITY;
  #lastSentAt = 0;
  /**
   * Whether a lost connection is re-dialed in place (`reconnect`: attempts, interval, reestablish
   * wait) before a request fails. A cluster router that knows other nodes turns it off: one dial,
   * and a failure goes back to the router, which marks the node down and tries the next one at
   * once. Retrying in place cost about 3 s per dead node (4 attempts 1 s apart), during which a
   * write waited for a node that was gone instead of reaching its new primary.
   */
  reconnectInPlace = true;
  #heartbeat: TimerHandle | null = null;
  #closeListeners = new Set<(error: ShoalError | null) => void>();
  #evictionListeners = new Set<(error: ShoalError) => void>();

  constructor(address: NodeAddress, options: ConnectionOptions = {}, deps: ConnectionDeps = {}) {
    this.address = address;
    this.#options = options;
    this.#scheduler = deps.scheduler ?? nodeScheduler;
    this.#random = deps.random ?? nodeRandom;
    this.#events = deps.events ?? null;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** The login reply of the current session (null when not logged in). */
  get login(): LoginReply | null {
    return this.#login;
  }

  get credentials(): Credentials | null {
    return this.#credentials;
  }

  /** Client id of the current session (0 when none). */
  get clientId(): bigint {
    return this.#session?.clientId ?? 0n;
  }

  /** Requests written and not yet answered. */
  get inFlight(): number {
    return this.#session?.inFlightCount ?? 0;
  }

  /** Requests waiting to be written (window full, lane busy, or the socket pushing back). */
  get queued(): number {
    return this.#session?.queuedCount ?? 0;
  }

  /** Replies and evictions the session could not match (late replies of abandoned requests, …). */
  get dropped(): ReadonlyMap<string, number> {
    return this.#session?.dropped ?? new Map();
  }

  /** Credentials used on every (re)connect; `null` stops logging in. */
  setCredentials(credentials: Credentials | null): void {
    this.#credentials = credentials;
  }

  onClose(listener: (error: ShoalError | null) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  onEviction(listener: (error: ShoalError) => void): () => void {
    this.#evictionListeners.add(listener);
    return () => this.#evictionListeners.delete(listener);
  }

  /** Dials (and logs in with the stored credentials) unless already open. */
  async connect(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'shutdown') throw new ShoalClosedError('connection');
    if (this.#state === 'open') return;
    if (this.#opening === null) {
      this.#opening = this.#open(signal).finally(() => {
        this.#opening = null;
      });
    }
    await this.#opening;
  }

  /** Sends one command and resolves with its reply payload (after the result section). */
  async request(call: SessionCall, options: RequestOptions = {}): Promise<Reply> {
    throwIfAborted(options.signal);
    await this.connect(options.signal);
    return this.#submit(call, options);
  }

  /** Logs in on this connection (a fresh registration) and keeps the credentials for reconnects. */
  async authenticate(credentials: Credentials, options: RequestOptions = {}): Promise<LoginReply> {
    this.#credentials = credentials;
    if (this.#state !== 'open') {
      await this.connect(options.signal);
      if (this.#login === null) throw new ShoalProtocolError('login_missing');
      return this.#login;
    }
    return this.#register(credentials, options);
  }

  /** Logs out the current session and forgets the credentials. */
  async logout(options: RequestOptions = {}): Promise<void> {
    this.#credentials = null;
    if (this.#state !== 'open' || this.#login === null) return;
    await this.#submit({ code: CommandCode.LogoutUser, body: new Uint8Array(0) }, options);
    this.#login = null;
  }

  /**
   * Clean close: pending requests fail with ShoalClosedError, the socket is ended (FIN) and
   * destroyed if the peer does not close within a second. The connection cannot be reused.
   */
  async close(): Promise<void> {
    if (this.#state === 'shutdown') return;
    const socket = this.#socket;
    this.#state = 'shutdown';
    this.#teardown(new ShoalClosedError('connection'), () => new ShoalClosedError('connection'));
    if (socket === null || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      const force = this.#scheduler.setTimer(1000, () => socket.destroy(), { unref: true });
      socket.once('close', () => {
        this.#scheduler.clearTimer(force);
        resolve();
      });
      socket.end();
    });
  }

  // ── opening ──────────────────────────────────────────────────────────────────────────────

  async #open(signal?: AbortSignal): Promise<void> {
    const reconnect = this.#options.reconnect ?? {};
    const retrying = this.#everOpened && (reconnect.enabled ?? true) && this.reconnectInPlace;
    const attempts = retrying ? Math.max(1, (reconnect.maxRetries ?? 3) + 1) : 1;
    const wait = (reconnect.reestablishAfterMs ?? 0) - (this.#scheduler.now() - this.#lostAt);
    if (retrying && wait > 0) await this.#scheduler.sleep(wait, signal);
    let lastError: ShoalError | null = null;
    const node = formatAddress(this.address);
    for (let attempt = 0; attempt < attempts; attempt++) {
      const delayMs = attempt > 0 ? reconnect.intervalMs ?? 1000 : Math.max(0, wait);
      if (retrying) this.#events?.emit({ type: 'reconnecting', node, attempt: attempt + 1, attemptsMax: attempts, delayMs });
      if (attempt > 0) await this.#scheduler.sleep(reconnect.intervalMs ?? 1000, signal);
      if (this.#state === 'shutdown') throw new ShoalClosedError('connection');
      try {
        await this.#dial(signal);
        this.#everOpened = true;
        if (this.#credentials !== null) await this.#register(this.#credentials, { ...(signal === undefined ? {} : { signal }) });
        if (this.#isShutdown()) {
          this.#socket?.destroy();
          throw new ShoalClosedError('connection');
        }
        if (this.#socket === null) throw new ShoalConnectionLostError(formatAddress(this.address), false);
        this.#state = 'open';
        this.#events?.emit({ type: 'connected', node, reconnect: retrying, attempts: attempt + 1 });
        return;
      } catch (error) {
        lastError = asShoalError(error);
        if (this.#isShutdown()) throw new ShoalClosedError('connection');
        this.#fail(lastError);
        if (!lastError.retriable || lastError instanceof ShoalAbortError) throw lastError;
      }
    }
    if (retrying && lastError !== null) this.#events?.emit({ type: 'reconnect_failed', node, attempts, error: lastError });
    throw lastError ?? new ShoalConnectionError(`cannot connect to ${formatAddress(this.address)}`, formatAddress(this.address));
  }

  /** `close()` may run while a dial or login is awaited (a method, so TypeScript does not narrow it away). */
  #isShutdown(): boolean {
    return this.#state === 'shutdown';
  }

  #dial(signal?: AbortSignal): Promise<void> {
    const where = formatAddress(this.address);
    this.#state = 'connecting';
    const tls = this.#options.tls;
    return new Promise<void>((resolve, reject) => {
      const socket = tls === undefined || tls === false ? new Socket() : this.#tlsSocket(tls === true ? {} : tls, () => finish(null));
      let settled = false;
      const finish = (error: ShoalError | null): void => {
        if (settled) return;
        settled = true;
        this.#scheduler.clearTimer(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.removeListener('error', onError);
        if (error !== null) {
          socket.destroy();
          if (this.#state === 'connecting') this.#state = 'closed';
          reject(error);
          return;
        }
        this.#adopt(socket);
        resolve();
      };
      const onError = (error: Error): void => finish(new ShoalConnectionError(`cannot connect to ${where}: ${error.message}`, where, { cause: error }));
      const onAbort = (): void => finish(new ShoalAbortError(signal?.reason));
      const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
      const timer = this.#scheduler.setTimer(timeoutMs, () => finish(new ShoalConnectionError(`connect to ${where} timed out after ${timeoutMs} ms`, where)));
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      if (tls === undefined || tls === false) socket.connect({ host: this.address.host, port: this.address.port }, () => finish(null));
    });
  }

  /** A TLS socket dialing this node; `ready` runs once the handshake verified the server. */
  #tlsSocket(tls: TlsOptions, ready: () => void): Socket {
    const host = this.address.host;
    const servername = tls.servername ?? host;
    return tlsConnect({
      host, port: this.address.port,
      // SNI carries names only; an IP literal is still checked against the certificate's IP SANs.
      ...(isIP(servername) === 0 ? { servername } : {}),
      ...(tls.servername === undefined ? {} : { checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(servername, cert) }),
      ...(tls.ca === undefined ? {} : { ca: caList(tls.ca) }),
      rejectUnauthorized: tls.rejectUnauthorized ?? true,
      minVersion: 'TLSv1.2',
    }, ready);
  }

  #adopt(socket: Socket): void {
    socket.setNoDelay(this.#options.noDelay ?? DEFAULTS.noDelay);
    socket.setKeepAlive(true);
    this.#socket = socket;
    this.#decoder = new FrameDecoder({ frameSizeMax: this.#options.frameSizeMax ?? FRAME_SIZE_MAX_DEFAULT });
    this.#session = new Session({
      random: this.#random,
      clock: () => this.#scheduler.nowMicros(),
      windowMax: this.#options.windowMax ?? DEFAULTS.windowMax,
      replayAttemptsMax: this.#options.replayAttemptsMax ?? DEFAULTS.replayAttemptsMax,
      ...(this.#options.stampRequestChecksum === undefined ? {} : { stampRequestChecksum: this.#options.stampRequestChecksum }),
      ...(this.#options.versionInfo === undefined ? {} : { versionInfo: this.#options.versionInfo }),
    });
    this.#writeBlocked = false;
    this.#login = null;
    socket.on('data', (chunk: Buffer) => this.#onData(socket, chunk));
    socket.on('drain', () => {
      if (socket !== this.#socket) return;
      this.#writeBlocked = false;
      this.#pump();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.#onSocketClose(socket));
    this.#armHeartbeat();
  }

  async #register(credentials: Credentials, options: RequestOptions): Promise<LoginReply> {
    const session = this.#session;
    if (session === null) throw new ShoalClosedError('connection');
    const ticket = session.register(credentials);
    await this.#await(ticket, options);
    if (this.#login === null) throw new ShoalProtocolError('login_missing');
    return this.#login;
  }

  // ── requests ─────────────────────────────────────────────────────────────────────────────

  #submit(call: SessionCall, options: RequestOptions): Promise<Reply> {
    const session = this.#session;
    if (session === null || this.#state !== 'open') {
      return Promise.reject(this.#state === 'shutdown' ? new ShoalClosedError('connection') : new ShoalConnectionLostError(formatAddress(this.address), false));
    }
    return this.#await(session.submit(call), options);
  }

  #await(ticket: Ticket, options: RequestOptions): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      const pending: Pending = { resolve, reject, timer: null, cleanup: () => undefined };
      const timeoutMs = options.timeoutMs ?? this.#options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
      if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
        pending.timer = this.#scheduler.setTimer(timeoutMs, () => this.#giveUp(ticket, new ShoalTimeoutError('request', timeoutMs)));
      }
      const signal = options.signal;
      if (signal !== undefined) {
        const onAbort = (): void => this.#giveUp(ticket, new ShoalAbortError(signal.reason));
        signal.addEventListener('abort', onAbort, { once: true });
        pending.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.#pending.set(ticket, pending);
      this.#pump();
    });
  }

  #giveUp(ticket: Ticket, error: ShoalError): void {
    this.#session?.abandon(ticket);
    this.#settle(ticket, error);
    this.#pump();
  }

  #settle(ticket: Ticket, outcome: Reply | ShoalError): void {
    const pending = this.#pending.get(ticket);
    if (pending === undefined) return;
    this.#pending.delete(ticket);
    if (pending.timer !== null) this.#scheduler.clearTimer(pending.timer);
    pending.cleanup();
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  /** Writes what the session lets go, until the window closes or the socket pushes back. */
  #pump(): void {
    const session = this.#session;
    if (session === null || this.#writeBlocked) return;
    const { frames, events } = session.drain();
    this.#handle(events);
    for (const frame of frames) this.#write(frame);
  }

  #write(frame: OutgoingFrame): void {
    const socket = this.#socket;
    if (socket === null || socket.destroyed) return;
    this.#lastSentAt = this.#scheduler.now();
    if (!socket.write(frame.frame)) this.#writeBlocked = true;
  }

  // ── inbound ──────────────────────────────────────────────────────────────────────────────

  #onData(socket: Socket, chunk: Buffer): void {
    if (socket !== this.#socket) return;
    const decoder = this.#decoder;
    const session = this.#session;
    if (decoder === null || session === null) return;
    if (decoder.push(chunk)) {
      for (let frame = decoder.pull(); frame !== null; frame = decoder.pull()) {
        // A view of the chunk stays valid; an assembled frame is reused on the next push, and
        // replies (polled payloads) outlive this callback: copy those.
        const owned = frame.buffer === chunk.buffer ? frame : new Uint8Array(frame);
        this.#handle(session.receive(owned));
      }
    }
    if (decoder.error !== null) {
      this.#fail(new ShoalProtocolError(decoder.error, `stream from ${formatAddress(this.address)}`));
      return;
    }
    this.#pump();
  }

  #handle(events: readonly SessionEvent[]): void {
    for (const event of events) {
      switch (event.kind) {
        case 'reply':
          this.#settle(event.ticket, { payload: event.payload, info: event.info });
          break;
        case 'failed':
          this.#settle(event.ticket, event.error);
          break;
        case 'transient':
          this.#scheduleReplay(event.ticket, event.code, event.attempt);
          break;
        case 'bound':
          this.#login = event.login;
          break;
        case 'evicted':
          this.#login = null;
          this.#events?.emit({ type: 'evicted', node: formatAddress(this.address), error: event.error });
          for (const listener of this.#evictionListeners) listener(event.error);
          // The session is dead; the next request re-dials and registers afresh.
          this.#scheduler.setTimer(0, () => this.#fail(event.error));
          break;
        case 'dropped':
          break;
      }
    }
  }

  #scheduleReplay(ticket: Ticket, code: number, attempt: number): void {
    const base = this.#options.replayBackoffMs ?? DEFAULTS.replayBackoffMs;
    const delay = backoffDelay(attempt - 1, base, base * 32, this.#random.float ?? (() => 0.5));
    this.#events?.emit({ type: 'replay', node: formatAddress(this.address), command: commandName(code), attempt, delayMs: delay });
    const session = this.#session;
    this.#scheduler.setTimer(delay, () => {
      if (session === null || session !== this.#session || !this.#pending.has(ticket)) return;
      const frame = session.replay(ticket);
      if (frame !== null) this.#write(frame);
    });
  }

  // ── closing ──────────────────────────────────────────────────────────────────────────────

  #onSocketClose(socket: Socket): void {
    if (socket !== this.#socket) return;
    this.#fail(null);
  }

  /** The socket is gone or unusable: fail what is pending, keep the connection re-dialable. */
  #fail(cause: ShoalError | null): void {
    if (this.#state === 'shutdown') return;
    if (this.#socket === null) {
      if (this.#state === 'connecting') this.#state = 'closed';
      return;
    }
    const where = formatAddress(this.address);
    const wasOpen = this.#state === 'open';
    this.#teardown(cause, (written) => new ShoalConnectionLostError(where, written, cause ?? undefined));
    this.#state = 'closed';
    if (wasOpen) this.#events?.emit({ type: 'disconnected', node: where, error: cause });
  }

  #teardown(cause: ShoalError | null, makeError: (written: boolean) => ShoalError): void {
    const socket = this.#socket;
    const session = this.#session;
    this.#socket = null;
    this.#session = null;
    this.#decoder = null;
    this.#login = null;
    this.#lostAt = this.#scheduler.now();
    if (this.#heartbeat !== null) this.#scheduler.clearTimer(this.#heartbeat);
    this.#heartbeat = null;
    if (session !== null) this.#handle(session.close(makeError));
    for (const ticket of [...this.#pending.keys()]) this.#settle(ticket, makeError(false));
    if (socket !== null && this.#state !== 'shutdown') socket.destroy();
    for (const listener of this.#closeListeners) listener(cause);
  }

  #armHeartbeat(): void {
    const interval = this.#options.heartbeatIntervalMs ?? DEFAULTS.heartbeatIntervalMs;
    if (!(interval > 0)) return;
    const socket = this.#socket;
    const tick = (): void => {
      if (socket !== this.#socket || this.#state === 'shutdown') return;
      const idle = this.#scheduler.now() - this.#lastSentAt;
      if (this.#state === 'open' && idle >= interval && this.#session !== null && this.#session.inFlightCount === 0) {
        this.#submit({ code: CommandCode.Ping, body: new Uint8Array(0) }, {}).catch(() => undefined);
      }
      this.#heartbeat = this.#scheduler.setTimer(Math.max(10, interval - Math.min(idle, interval)), tick, { unref: true });
    };
    this.#lastSentAt = this.#scheduler.now();
    this.#heartbeat = this.#scheduler.setTimer(interval, tick, { unref: true });
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ShoalAbortError(signal.reason);
}

function caList(ca: NonNullable<TlsOptions['ca']>): (string | Buffer)[] {
  const list = typeof ca === 'string' || ca instanceof Uint8Array ? [ca] : [...ca];
  return list.map((item) => (typeof item === 'string' ? item : Buffer.from(item)));
}
