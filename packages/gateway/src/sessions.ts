/**
 * Login-register (40, 45), logout (39) and disconnects on the client plane
 * (connection-lifecycle.mdx, replication-semantics.md §7.2 and §8):
 *
 * ```
 *  Register ─▶ ClientVersionInfo prefix? ── no ──▶ Eviction 15 MalformedLogin
 *              │ protocol window? ── no ──▶ Eviction 14 IncompatibleProtocol (+ window)
 *              │ 40: user from the metadata view, password verified by the host (verifyPassword:
 *              │     the runtime's piscina pool) and handed back (passwordVerified)
 *              │ 45: personal access token (hash lookup, expiry, user status)
 *              │      bad credentials ──▶ Eviction 9 / 10, inactive user ──▶ Eviction 11
 *              ▼
 *   session_submit(register) ──route──▶ metadata owner: the core proposes the Register
 *              ▼ session_result
 *   ok: bind {client, user, epoch = register op}; reply [count=0][user][session][version][server]
 *   not_primary / not_caught_up / pipeline_full / primary_unreachable: result [1][0][58]
 *   in_progress / canceled / forward_timed_out: result [1][0][57]
 *   client_id_owned_by_another_user: Eviction 12 SessionError
 * ```
 *
 * The connection holds every later frame while a login or logout is pending (its barrier), so a
 * client's requests never overtake its own registration. A transport disconnect of a bound
 * connection submits a Logout with request u64::MAX (the reference's disconnect logout), and a
 * Register that commits after its connection died is logged out the same way.
 */
import { U64_MAX } from '@shoal/stdx';
import {
  ErrorCode, EvictionReason, FRAME_HEADER_SIZE, RequestHeaderView, decodeClientVersionPrefix, decodeLoginRegisterRequest,
  decodeLoginRegisterWithPatRequest, isProtocolCompatible, registerCodeOfBody,
} from '@shoal/protocol';
import type { SessionOutcome } from '@shoal/consensus';
import type { GatewayConnection } from './connection.js';
import type { GatewayContext } from './context.js';
import { type SessionResultMessage, TOKEN_NONE } from './messages.js';
import { codeReply, eviction, incompatibleProtocolEviction, loginReply, statusReply } from './replies.js';

interface PendingSession {
  readonly kind: 'register' | 'logout';
  /** A copy of the request header: the reply echoes it. */
  readonly header: Uint8Array;
  readonly client: bigint;
  readonly userId: number;
}

/** A password login waiting for the host's verdict. */
interface Verifying {
  readonly header: Uint8Array;
  readonly client: bigint;
  readonly userId: number;
  readonly active: boolean;
}

/** The verdict of a password check: null when the check itself failed (the pool broke). */
export type PasswordVerdict = boolean | null;

const RETRY_ANYWHERE: ReadonlySet<SessionOutcome> = new Set(['not_primary', 'not_caught_up', 'pipeline_full', 'primary_unreachable']);

export class SessionFlows {
  readonly #ctx: GatewayContext;
  /** By connection token: at most one pending session operation per connection (the barrier). */
  readonly #pending = new Map<number, PendingSession>();
  /** By connection token: password logins whose verdict the host has not handed back yet. */
  readonly #verifying = new Map<number, Verifying>();

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** A Register request (operation 1): gate, verify, then submit it to the metadata core. */
  register(connection: GatewayConnection, frame: Uint8Array): void {
    const ctx = this.#ctx;
    const header = new RequestHeaderView(frame);
    const client = header.client;
    const body = frame.subarray(FRAME_HEADER_SIZE);
    const prefix = decodeClientVersionPrefix(body);
    if (!prefix.ok) return this.#evict(connection, client, EvictionReason.MalformedLogin);
    if (!isProtocolCompatible(prefix.value.info.protocolVersion)) {
      connection.send(incompatibleProtocolEviction(ctx.reply, client));
      return;
    }
    const code = registerCodeOfBody(body);
    if (!code.ok) return this.#evict(connection, client, EvictionReason.MalformedLogin);
    // No catalog yet, or no user at all: a cluster replica whose metadata has not caught up with
    // the root user's creation (a single node only serves once it exists). Retriable.
    if (!ctx.metadata.ready || ctx.metadata.state.model.users.size === 0) {
      connection.send(codeReply(ctx.reply, header, ErrorCode.TransientNotAccepted));
      return;
    }
    const headerCopy = frame.slice(0, FRAME_HEADER_SIZE);
    if (code.value === 45) {
      const request = decodeLoginRegisterWithPatRequest(body);
      if (!request.ok) return this.#evict(connection, client, EvictionReason.MalformedLogin);
      const login = ctx.metadata.state.verifyPersonalAccessToken(request.value.token, ctx.nowMicros());
      if (!login.ok) {
        return this.#evict(connection, client, login.code === ErrorCode.UserInactive ? EvictionReason.UserInactive : EvictionReason.InvalidToken);
      }
      this.#submitRegister(connection, headerCopy, client, login.userId);
      return;
    }
    const request = decodeLoginRegisterRequest(body);
    if (!request.ok) return this.#evict(connection, client, EvictionReason.MalformedLogin);
    const target = ctx.metadata.state.verifyLoginTarget(request.value.username);
    if (!target.ok) return this.#evict(connection, client, EvictionReason.InvalidCredentials);
    // The password check runs in the host (a pool); later frames of this connection wait behind it.
    connection.hold();
    connection.inFlight += 1;
    this.#verifying.set(connection.token, { header: headerCopy, client, userId: target.userId, active: target.active });
    ctx.output.verifyPassword(connection, request.value.password, target.passwordHash);
  }

  /** The host's verdict on a password login of `connection` (see GatewayOutput.verifyPassword). */
  passwordVerified(connection: GatewayConnection, verdict: PasswordVerdict): void {
    const login = this.#verifying.get(connection.token);
    this.#verifying.delete(connection.token);
    if (login === undefined || connection.closed) return;
    if (verdict === null) {
      connection.send(codeReply(this.#ctx.reply, new RequestHeaderView(login.header), ErrorCode.TransientNotAccepted));
      this.#finish(connection);
      return;
    }
    if (!verdict || !login.active) {
      this.#finish(connection);
      return this.#evict(connection, login.client, verdict ? EvictionReason.UserInactive : EvictionReason.InvalidCredentials);
    }
    // Still holding the barrier and the in-flight slot: they pass to the Register.
    this.#submitRegister(connection, login.header, login.client, login.userId, true);
  }

  /** A Logout request (operation 3, code 39) on a bound connection. */
  logout(connection: GatewayConnection, frame: Uint8Array): void {
    const session = connection.session;
    const header = new RequestHeaderView(frame);
    if (session === null) return; // the caller answered Unauthenticated already
    connection.hold();
    connection.inFlight += 1;
    this.#pending.set(connection.token, { kind: 'logout', header: frame.slice(0, FRAME_HEADER_SIZE), client: session.client, userId: session.userId });
    this.#ctx.output.route({
      kind: 'session_submit', session: 'logout', token: connection.token, client: session.client, userId: session.userId,
      epoch: header.session, request: header.request,
    });
  }

  /** The transport closed: a bound session is logged out (request u64::MAX, nobody waits). */
  disconnected(connection: GatewayConnection): void {
    this.#pending.delete(connection.token);
    this.#verifying.delete(connection.token);
    const session = connection.session;
    if (session === null) return;
    connection.session = null;
    this.#submitDisconnect(session.client, session.userId, session.epoch);
  }

  /**
   * `[heartbeat]`: a bound connection silent for `staleAfterMs` that holds a consumer-group
   * membership is released (Eviction 13 StaleClient, then a Logout), so its groups rebalance. A
   * connection without memberships is left alone (the reference's rule).
   */
  releaseIfStale(connection: GatewayConnection, nowMs: number, staleAfterMs: number): boolean {
    const session = connection.session;
    if (session === null || connection.inFlight > 0 || nowMs - connection.lastActivityMs < staleAfterMs) return false;
    if (!this.#ctx.metadata.ready || this.#ctx.metadata.state.membershipsOf(session.client).length === 0) return false;
    connection.send(eviction(this.#ctx.reply, session.client, EvictionReason.StaleClient));
    this.disconnected(connection);
    this.#ctx.output.sessionChanged(connection);
    return true;
  }

  onResult(result: SessionResultMessage): void {
    const ctx = this.#ctx;
    if (result.token === TOKEN_NONE) return; // a disconnect logout: nobody waits
    const pending = this.#pending.get(result.token);
    const connection = ctx.output.connectionOf(result.token);
    this.#pending.delete(result.token);
    if (pending === undefined || connection === null) {
      // The connection is gone; a Register that still committed must not leave a session behind.
      if (result.session === 'register' && result.outcome === 'ok') this.#submitDisconnect(result.client, result.userId, result.epoch);
      return;
    }
    const header = new RequestHeaderView(pending.header);
    if (result.outcome === 'ok') {
      if (pending.kind === 'register') {
        // A connection that logs in again under a new client id leaves its old session: log it out.
        const previous = connection.session;
        if (previous !== null && previous.client !== pending.client) this.#submitDisconnect(previous.client, previous.userId, previous.epoch);
        connection.session = { client: pending.client, userId: pending.userId, epoch: result.epoch };
        connection.send(loginReply(ctx.reply, header, pending.userId, result.epoch));
      } else {
        connection.session = null;
        connection.send(statusReply(ctx.reply, header, 0));
      }
      ctx.output.sessionChanged(connection);
    } else if (result.outcome === 'client_id_owned_by_another_user') {
      connection.send(eviction(ctx.reply, pending.client, EvictionReason.SessionError));
    } else {
      const code = RETRY_ANYWHERE.has(result.outcome) ? ErrorCode.TransientNotAccepted : ErrorCode.TransientNotCommitted;
      connection.send(codeReply(ctx.reply, header, code));
    }
    this.#finish(connection);
  }

  #submitRegister(connection: GatewayConnection, header: Uint8Array, client: bigint, userId: number, holding = false): void {
    if (!holding) {
      connection.hold();
      connection.inFlight += 1;
    }
    this.#pending.set(connection.token, { kind: 'register', header, client, userId });
    this.#ctx.output.route({
      kind: 'session_submit', session: 'register', token: connection.token, client, userId, epoch: 0n, request: 0n,
    });
  }

  #submitDisconnect(client: bigint, userId: number, epoch: bigint): void {
    this.#ctx.output.route({
      kind: 'session_submit', session: 'logout', token: TOKEN_NONE, client, userId, epoch, request: U64_MAX,
    });
  }

  #finish(connection: GatewayConnection): void {
    connection.requestDone();
    connection.release();
  }

  #evict(connection: GatewayConnection, client: bigint, reason: EvictionReason): void {
    const ctx = this.#ctx;
    connection.send(eviction(ctx.reply, client, reason));
    if (connection.session?.client === client) {
      connection.session = null;
      ctx.output.sessionChanged(connection);
    }
  }
}
