import {
  CommandCode, ErrorCode, EvictionReason, HEADER_SIZE, Operation, REPLY_HEADER, SHOAL_PROTOCOL_VERSION, type ClientVersionInfo,
  type LoginReply, classifyServerFrame, decodeLoginReply, encodeRequestFrame, parseResultSection, isMetadataPlane, isRequestChecksumStamped,
  loginRegisterCommand, loginRegisterWithPatCommand, operationForCode, xxh3_64,
} from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import {
  ShoalClosedError, type ShoalError, ShoalEvictionError, ShoalProtocolError, ShoalResponseError,
} from './errors.js';

/**
 * The sans-IO client session: no sockets, no timers, no clocks of its own. The host (the TCP
 * transport, a simulator, a test) feeds it calls and server frames and performs what it hands
 * back: frames to write, outcomes to deliver, replays to schedule.
 *
 *   submit(call) ──▶ queue ──drain()──▶ in flight ──receive(reply)──▶ event: reply | failed
 *                     (FIFO)   window ▲        │ 57 ──▶ event: transient ──replay(ticket)──▶ same frame
 *                                     │        └ eviction ──▶ every pending call fails, session dead
 *
 * Request numbering (framing.mdx "Request numbering"; client_frames.json `session_rules`):
 * - the counter starts at 1 for each client id;
 * - Register (40/45) sends request 0 and session 0, with a client id minted fresh for each
 *   registration (a pre-login ping uses, and so mints, the id the next registration will bind);
 * - metadata-plane operations (128..149, and 138 DeleteSegments, see below) send the counter and
 *   advance it; Logout does the same;
 * - partition-plane (160..162) and non-replicated (2) operations send the current value and do not
 *   advance it;
 * - every request after login echoes the session epoch of the login reply.
 * DeleteSegments (138) is metadata by framing.mdx but partition-routed by the reference; advancing
 * the counter for it is correct under both readings (the counter is a watermark, gaps are fine).
 *
 * Numbers are assigned when a call leaves the queue, and calls leave in submission order, so the
 * wire order of metadata requests is their number order. The metadata plane admits one request
 * per client at a time (replication-semantics §7.3: a second one in flight is NotReady), so at
 * most one metadata-plane request is in flight; Register and Logout go alone.
 *
 * Correlation: a reply echoes `request`, `operation` and `timestamp`. Partition and non-replicated
 * requests share request numbers, so among in-flight calls with the same (request, operation) the
 * echoed timestamp decides (the host's clock stamps each request with a distinct timestamp);
 * with a zero clock the oldest such call wins (FIFO).
 */

/** Source of client ids: any non-zero u128 (zero is re-drawn). */
export interface RandomSource {
  u128(): bigint;
}

export interface SessionOptions {
  readonly random: RandomSource;
  /** Request `timestamp` in µs; echoed by the server, used to correlate. Default: always 0. */
  readonly clock?: () => bigint;
  /** Stamp `request_checksum = XXH3-64(body)` where the Rust SDK does (default false, like the Node SDK). */
  readonly stampRequestChecksum?: boolean;
  /** In-flight frames at most (pipelining window), default 64. */
  readonly windowMax?: number;
  /** Replays of a request answered 57 TransientNotCommitted before it fails (default 8). */
  readonly replayAttemptsMax?: number;
  /** ClientVersionInfo of the login body. */
  readonly versionInfo?: ClientVersionInfo;
}

export const SDK_NAME = 'shoal-node-sdk';
export const SDK_VERSION = '0.1.0';
export const DEFAULT_VERSION_INFO: ClientVersionInfo = Object.freeze({
  protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: SDK_NAME, sdkVersion: SDK_VERSION,
});

export type Credentials =
  | { readonly kind: 'password'; readonly username: string; readonly password: string; readonly context?: string }
  | { readonly kind: 'token'; readonly token: string; readonly context?: string };

/** A command to send: its code and its encoded body (see the protocol codecs). */
export interface SessionCall {
  readonly code: number;
  readonly body: Uint8Array;
}

export type Ticket = number;

export interface OutgoingFrame {
  readonly ticket: Ticket;
  readonly request: bigint;
  readonly frame: Uint8Array;
}

/** Reply metadata worth surfacing (the committed op, the view that produced it, who answered). */
export interface ReplyInfo {
  readonly op: bigint;
  readonly commit: bigint;
  readonly view: number;
  readonly replica: number;
}

export type SessionEvent =
  | { readonly kind: 'reply'; readonly ticket: Ticket; readonly code: number; readonly payload: Uint8Array; readonly info: ReplyInfo }
  | { readonly kind: 'failed'; readonly ticket: Ticket; readonly error: ShoalError }
  /** 57: outcome unknown; the host replays the same frame (`replay(ticket)`) after a pause. */
  | { readonly kind: 'transient'; readonly ticket: Ticket; readonly code: number; readonly attempt: number }
  | { readonly kind: 'bound'; readonly clientId: bigint; readonly login: LoginReply }
  | { readonly kind: 'evicted'; readonly error: ShoalEvictionError }
  | { readonly kind: 'dropped'; readonly reason: DropReason };

export type DropReason = 'foreign_client' | 'unmatched' | 'abandoned' | 'not_a_server_frame';

export type SessionState = 'unregistered' | 'registering' | 'bound' | 'evicted' | 'closed';

type Lane = 'register' | 'logout' | 'metadata' | 'other';

interface Entry {
  readonly ticket: Ticket;
  readonly code: number;
  readonly operation: number;
  readonly body: Uint8Array;
  readonly lane: Lane;
  request: bigint;
  timestamp: bigint;
  frame: Uint8Array | null;
  replays: number;
  awaitingReplay: boolean;
}

/** Abandoned calls whose replies may still arrive; bounded (oldest forgotten first). */
const GHOSTS_MAX = 1024;

export class Session {
  readonly #random: RandomSource;
  readonly #clock: () => bigint;
  readonly #stamp: boolean;
  readonly #windowMax: number;
  readonly #replayAttemptsMax: number;
  readonly #versionInfo: ClientVersionInfo;

  #state: SessionState = 'unregistered';
  #clientId = 0n;
  /** The current client id has been sent in a Register: the next registration mints a new one. */
  #clientIdRegistered = false;
  #epoch = 0n;
  #userId: number | null = null;
  #counter = 1n;
  #nextTicket = 1;
  #queue: Entry[] = [];
  #inFlight: Entry[] = [];
  #ghosts: Entry[] = [];
  #eviction: ShoalEvictionError | null = null;
  readonly #dropped = new Map<DropReason, number>();

  constructor(options: SessionOptions) {
    this.#random = options.random;
    this.#clock = options.clock ?? (() => 0n);
    this.#stamp = options.stampRequestChecksum ?? false;
    this.#windowMax = options.windowMax ?? 64;
    this.#replayAttemptsMax = options.replayAttemptsMax ?? 8;
    this.#versionInfo = options.versionInfo ?? DEFAULT_VERSION_INFO;
    assert(Number.isInteger(this.#windowMax) && this.#windowMax >= 1, 'windowMax >= 1');
    assert(Number.isInteger(this.#replayAttemptsMax) && this.#replayAttemptsMax >= 0, 'replayAttemptsMax >= 0');
  }

  get state(): SessionState {
    return this.#state;
  }

  /** The client id of the current (or next) registration; 0 until one is minted. */
  get clientId(): bigint {
    return this.#clientId;
  }

  /** The session epoch bound by the login reply (0 when not logged in). */
  get epoch(): bigint {
    return this.#epoch;
  }

  get userId(): number | null {
    return this.#userId;
  }

  /** The request number the next partition / non-replicated request would carry. */
  get counter(): bigint {
    return this.#counter;
  }

  get inFlightCount(): number {
    return this.#inFlight.length;
  }

  get queuedCount(): number {
    return this.#queue.length;
  }

  get dropped(): ReadonlyMap<DropReason, number> {
    return this.#dropped;
  }

  /** Queues a command; returns its ticket. Fails at once (event-free) only through `drain`. */
  submit(call: SessionCall): Ticket {
    const operation = operationForCode(call.code);
    assert(operation !== null, `unknown command code ${call.code}`);
    assert(operation !== Operation.Register, 'use register() for login');
    const lane: Lane = operation === Operation.Logout ? 'logout'
      : isMetadataPlane(operation) || operation === Operation.DeleteSegments ? 'metadata' : 'other';
    return this.#enqueue(call.code, operation, call.body, lane);
  }

  /** Queues a login-register (40 with a password, 45 with a personal access token). */
  register(credentials: Credentials): Ticket {
    const context = credentials.context ?? '';
    const body = credentials.kind === 'password'
      ? loginRegisterCommand.encodeRequest({ versionInfo: this.#versionInfo, username: credentials.username, password: credentials.password, context })
      : loginRegisterWithPatCommand.encodeRequest({ versionInfo: this.#versionInfo, token: credentials.token, context });
    const code = credentials.kind === 'password' ? CommandCode.LoginRegister : CommandCode.LoginRegisterWithPat;
    if (this.#state === 'evicted') {
      this.#state = 'unregistered';
      this.#eviction = null;
    }
    return this.#enqueue(code, Operation.Register, body, 'register');
  }

  #enqueue(code: number, operation: number, body: Uint8Array, lane: Lane): Ticket {
    const ticket = this.#nextTicket++;
    this.#queue.push({ ticket, code, operation, body, lane, request: 0n, timestamp: 0n, frame: null, replays: 0, awaitingReplay: false });
    return ticket;
  }

  /**
   * Frames that may be written now, in order, plus calls failed without being sent (a dead
   * session). Stops at the first call that has to wait (window full, metadata lane busy, a
   * Register or Logout that must go alone): dispatch order is submission order.
   */
  drain(): { readonly frames: OutgoingFrame[]; readonly events: SessionEvent[] } {
    const frames: OutgoingFrame[] = [];
    const events: SessionEvent[] = [];
    while (this.#queue.length > 0) {
      const head = this.#queue[0] as Entry;
      if (this.#state === 'closed' || (this.#state === 'evicted' && head.lane !== 'register')) {
        this.#queue.shift();
        events.push({ kind: 'failed', ticket: head.ticket, error: this.#deadError() });
        continue;
      }
      if (!this.#mayDispatch(head)) break;
      this.#queue.shift();
      this.#encode(head);
      this.#inFlight.push(head);
      frames.push({ ticket: head.ticket, request: head.request, frame: head.frame as Uint8Array });
    }
    return { frames, events };
  }

  #mayDispatch(entry: Entry): boolean {
    if (this.#inFlight.length >= this.#windowMax) return false;
    if (this.#inFlight.some((e) => e.lane === 'register' || e.lane === 'logout')) return false;
    if (entry.lane === 'register' || entry.lane === 'logout') return this.#inFlight.length === 0;
    if (entry.lane === 'metadata') return !this.#inFlight.some((e) => e.lane === 'metadata');
    return true;
  }

  #encode(entry: Entry): void {
    if (entry.lane === 'register') {
      if (this.#clientId === 0n || this.#clientIdRegistered) this.#mintClientId();
      this.#clientIdRegistered = true;
      this.#state = 'registering';
      entry.request = 0n;
    } else {
      if (this.#clientId === 0n) this.#mintClientId();
      entry.request = this.#counter;
      if (entry.lane === 'metadata' || entry.lane === 'logout') this.#counter++;
    }
    entry.timestamp = this.#clock();
    const session = entry.lane === 'register' ? 0n : this.#epoch;
    const requestChecksum = this.#stamp && isRequestChecksumStamped(entry.operation) ? xxh3_64(entry.body) : 0n;
    entry.frame = encodeRequestFrame({
      client: this.#clientId,
      operation: entry.operation,
      request: entry.request,
      session,
      timestamp: entry.timestamp,
      requestChecksum,
      nonReplicatedCode: entry.operation === Operation.NonReplicated ? entry.code : 0,
    }, entry.body);
  }

  #mintClientId(): void {
    let id = 0n;
    for (let draws = 0; id === 0n; draws++) {
      assert(draws < 16, 'random source keeps returning 0');
      id = BigInt.asUintN(128, this.#random.u128());
    }
    this.#clientId = id;
    this.#clientIdRegistered = false;
    this.#counter = 1n;
  }

  /** Consumes one server frame (a whole Reply or Eviction, as the frame decoder cut it). */
  receive(frame: Uint8Array): SessionEvent[] {
    if (frame.length < HEADER_SIZE) return [this.#drop('not_a_server_frame')];
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const command = view.getUint8(60);
    if (command === 13) return this.#onEviction(frame, view);
    if (command !== 8) return [this.#drop('not_a_server_frame')];
    const client = u128At(view, REPLY_HEADER.client.offset);
    if (client !== this.#clientId || client === 0n) return [this.#drop('foreign_client')];
    const request = view.getBigUint64(REPLY_HEADER.request.offset, true);
    const operation = view.getUint8(REPLY_HEADER.operation.offset);
    const timestamp = view.getBigUint64(REPLY_HEADER.timestamp.offset, true);
    const index = findCall(this.#inFlight, request, operation, timestamp);
    if (index < 0) {
      const ghost = findCall(this.#ghosts, request, operation, timestamp);
      if (ghost >= 0) {
        this.#ghosts.splice(ghost, 1);
        return [this.#drop('abandoned')];
      }
      return [this.#drop('unmatched')];
    }
    const entry = this.#inFlight[index] as Entry;
    return this.#settle(entry, index, frame, view);
  }

  #settle(entry: Entry, index: number, frame: Uint8Array, view: DataView): SessionEvent[] {
    const bare = entry.lane === 'register' ? bareLoginReply(frame, view) : null;
    const outcome = bare === null ? classifyServerFrame(frame) : { outcome: 'ok' as const, operation: entry.operation, payload: bare };
    if (outcome.outcome === 'error') {
      const malformed = outcome.source === 'result_section' && !parseResultSection(frame.subarray(HEADER_SIZE)).ok;
      if (!malformed && (outcome.source === 'status' || outcome.source === 'result_section')) {
        if (outcome.errorCode === ErrorCode.TransientNotCommitted && entry.replays < this.#replayAttemptsMax) {
          entry.replays++;
          entry.awaitingReplay = true;
          return [{ kind: 'transient', ticket: entry.ticket, code: entry.code, attempt: entry.replays }];
        }
        this.#retire(index, entry);
        return [{ kind: 'failed', ticket: entry.ticket, error: new ShoalResponseError(outcome.errorCode, outcome.source, entry.code) }];
      }
      this.#retire(index, entry);
      return [{ kind: 'failed', ticket: entry.ticket, error: new ShoalProtocolError(`reply_${outcome.source}`, `error ${outcome.errorCode}`) }];
    }
    this.#retire(index, entry);
    const info: ReplyInfo = {
      op: view.getBigUint64(REPLY_HEADER.op.offset, true),
      commit: view.getBigUint64(REPLY_HEADER.commit.offset, true),
      view: view.getUint32(52, true),
      replica: view.getUint8(61),
    };
    const events: SessionEvent[] = [];
    if (entry.lane === 'register') {
      const login = decodeLoginReply(outcome.payload);
      if (!login.ok) {
        this.#state = 'unregistered';
        return [{ kind: 'failed', ticket: entry.ticket, error: new ShoalProtocolError(outcome.payload.length === 0 ? 'login_reply_empty' : login.reason) }];
      }
      this.#state = 'bound';
      this.#epoch = login.value.session;
      this.#userId = login.value.userId;
      events.push({ kind: 'bound', clientId: this.#clientId, login: login.value });
    } else if (entry.lane === 'logout') {
      this.#unbind();
    }
    events.push({ kind: 'reply', ticket: entry.ticket, code: entry.code, payload: outcome.payload, info });
    return events;
  }

  #retire(index: number, entry: Entry): void {
    this.#inFlight.splice(index, 1);
    if (entry.lane === 'register' && this.#state === 'registering') this.#state = 'unregistered';
  }

  #unbind(): void {
    this.#state = 'unregistered';
    this.#epoch = 0n;
    this.#userId = null;
    // The id is retired: the next request or registration mints a fresh one.
    this.#clientId = 0n;
    this.#clientIdRegistered = false;
  }

  #onEviction(frame: Uint8Array, view: DataView): SessionEvent[] {
    const client = u128At(view, 128);
    if (client !== this.#clientId || client === 0n) return [this.#drop('foreign_client')];
    const outcome = classifyServerFrame(frame);
    const reason = view.getUint8(255);
    const code = outcome.outcome === 'error' ? outcome.errorCode : ErrorCode.Unauthenticated;
    const error = new ShoalEvictionError(code, reason, view.getUint32(144, true), view.getUint32(148, true));
    const events: SessionEvent[] = [{ kind: 'evicted', error }];
    for (const entry of [...this.#inFlight, ...this.#queue]) events.push({ kind: 'failed', ticket: entry.ticket, error });
    this.#inFlight = [];
    this.#queue = [];
    this.#ghosts = [];
    this.#unbind();
    this.#state = 'evicted';
    this.#eviction = error;
    return events;
  }

  /** The frame to resend for a call answered 57 (same bytes: same request number and session). */
  replay(ticket: Ticket): OutgoingFrame | null {
    const entry = this.#inFlight.find((e) => e.ticket === ticket);
    if (entry === undefined || !entry.awaitingReplay || entry.frame === null) return null;
    entry.awaitingReplay = false;
    return { ticket, request: entry.request, frame: entry.frame };
  }

  /**
   * Forgets a call (timeout, abort). A queued call is removed unsent; an in-flight one frees its
   * window slot and lane and stays as a ghost so its late reply is recognised and dropped.
   * Returns whether the call had been written.
   */
  abandon(ticket: Ticket): boolean {
    const queued = this.#queue.findIndex((e) => e.ticket === ticket);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      return false;
    }
    const index = this.#inFlight.findIndex((e) => e.ticket === ticket);
    if (index < 0) return false;
    const entry = this.#inFlight[index] as Entry;
    this.#retire(index, entry);
    this.#ghosts.push(entry);
    if (this.#ghosts.length > GHOSTS_MAX) this.#ghosts.shift();
    return true;
  }

  /**
   * The transport is gone: every pending call fails (`written` tells whether the call had left),
   * and the session is dead for good (a new connection gets a new session).
   */
  close(makeError: (written: boolean) => ShoalError): SessionEvent[] {
    const events: SessionEvent[] = [];
    for (const entry of this.#inFlight) events.push({ kind: 'failed', ticket: entry.ticket, error: makeError(true) });
    for (const entry of this.#queue) events.push({ kind: 'failed', ticket: entry.ticket, error: makeError(false) });
    this.#inFlight = [];
    this.#queue = [];
    this.#ghosts = [];
    this.#state = 'closed';
    return events;
  }

  #deadError(): ShoalError {
    if (this.#state === 'closed') return new ShoalClosedError('session');
    if (this.#eviction !== null) return this.#eviction;
    return new ShoalEvictionError(ErrorCode.Unauthenticated, EvictionReason.NoSession, 0, 0);
  }

  #drop(reason: DropReason): SessionEvent {
    this.#dropped.set(reason, (this.#dropped.get(reason) ?? 0) + 1);
    return { kind: 'dropped', reason };
  }
}

/**
 * A login reply body without the result section (framing.mdx: "A login-register reply carries the
 * result section only when non-empty"), as opposed to the sectioned body the reference server and
 * the vectors use. Returned only when the sectioned reading fails and the bare one decodes exactly.
 */
function bareLoginReply(frame: Uint8Array, view: DataView): Uint8Array | null {
  if (view.getUint32(REPLY_HEADER.status.offset, true) !== 0) return null;
  const body = frame.subarray(HEADER_SIZE);
  const section = parseResultSection(body);
  if (section.ok && section.value.code === 0 && decodeLoginReply(section.value.payload).ok) return null;
  return decodeLoginReply(body).ok ? body : null;
}

/**
 * The call a reply answers: same request and operation, and
 * - a non-zero echoed timestamp must equal the call's (the host stamps distinct timestamps, so
 *   this is exact even among calls sharing a request number);
 * - a zero echo (a zero clock, or a server that does not echo) matches the oldest such call.
 * A call waiting for its 57 replay has no reply outstanding and matches nothing.
 */
function findCall(list: readonly Entry[], request: bigint, operation: number, timestamp: bigint): number {
  for (let i = 0; i < list.length; i++) {
    const e = list[i] as Entry;
    if (e.awaitingReplay || e.request !== request || e.operation !== operation) continue;
    if (timestamp === 0n || e.timestamp === timestamp) return i;
  }
  return -1;
}

function u128At(view: DataView, offset: number): bigint {
  return view.getBigUint64(offset, true) | (view.getBigUint64(offset + 8, true) << 64n);
}
