/**
 * `MetadataHost`: the metadata-plane host duties that are not consensus but belong next to it.
 *
 *   submitRequest ─▶ checkRequest (client-table preflight, §7.3)
 *                      ├ not new ──────────────▶ core.onRequest (cached reply, eviction, 57, 59)
 *                      └ new ─▶ hostWorkFor ─▶ ports (hash, token, in-flight, segments; maybe async)
 *                                         └▶ admit(CURRENT state) ─▶ propose (onRequest) | reject | evict
 *   login ─▶ verifyLoginTarget ─▶ ports.verifyPassword ─▶ submitSession(register)
 *   tick  ─▶ root bootstrap, PAT cleaner, consumer-group revocation reconciler (internal ops)
 *
 * Ports may answer synchronously (the simulator's deterministic fakes: everything stays
 * synchronous) or with a Promise (the runtime's piscina pool; the continuation re-checks the
 * request and flushes the driver itself).
 *
 * INTERNAL OPERATIONS (server-originated: root creation, DeletePersonalAccessToken as the owner,
 * 66, 67) go through internal sessions: the core refuses client 0 on `onRequest`, so the host
 * registers its own client per acting user (id `INTERNAL_CLIENT_TAG << 80 | replica << 32 | user`)
 * and proposes as that client, so internal operations are exactly-once through the client table
 * like any other request. Progress is observed on the client table (bound epoch, watermark), not
 * on replies: replies to internal clients carry `INTERNAL_TOKEN` and the host's transport drops them.
 */
import type { ClientRequest, ClientToken } from '@shoal/consensus';
import { ErrorCode, EvictionReason, Operation, deletePersonalAccessTokenCommand } from '@shoal/protocol';
import {
  type AdmitHostInputs, type HostWork, admit, buildRootUserCreateBody, encodeCompleteRevocation, encodeRemoveConsumerGroupMember,
  hostWorkFor,
} from '@shoal/state';
import { buildEvictionFrame, buildStatusReply } from './client-replies.js';
import type { MetadataDriver } from './metadata-driver.js';
import type { Transport } from './ports.js';

/** Each port may answer now or later. */
type Maybe<T> = T | Promise<T>;

export interface AdmissionPorts {
  /** Salted, memory-hard hash (PHC-like string) of a new password. */
  hashPassword(password: string): Maybe<string>;
  verifyPassword(storedHash: string, password: string): Maybe<boolean>;
  /** A fresh raw personal access token (1..255 bytes). */
  generateToken(): Maybe<string>;
  /** JoinConsumerGroup: the group's partitions with polled-but-uncommitted data (default none). */
  inFlightPartitions?(work: { streamId: number; topicId: number; groupId: number; partitionIds: readonly number[] }): Maybe<readonly number[]>;
  /** DeleteSegments: exclusive end offset of the `segmentsCount` oldest sealed segments (0 = none). */
  resolveSegments?(work: { streamId: number; topicId: number; partitionId: number; segmentsCount: number }): Maybe<bigint>;
}

export interface MetadataHostOptions {
  readonly driver: MetadataDriver;
  /** The same transport the driver sends with (rejects and refused logins go through it). */
  readonly transport: Transport;
  readonly ports: AdmissionPorts;
  /** Wall clock, µs (PAT expiry, revocation timeouts, admission timestamps). */
  readonly now: () => bigint;
  readonly rootUsername?: string;
  readonly rootPassword?: string;
  /** Propose the root user on an empty cluster (default true). */
  readonly bootstrapRoot?: boolean;
  /** PAT cleaner period in ticks (default 6000 = 60 s; 0 disables). */
  readonly patCleanerIntervalTicks?: number;
  /** A pending revocation older than this is completed (67), µs (default 30 s). */
  readonly revocationTimeoutMicros?: bigint;
  /** Ticks before an unfinished internal operation is re-sent (default 100). */
  readonly internalRetryTicks?: number;
}

export type LoginCredentials =
  | { readonly kind: 'password'; readonly username: string; readonly password: string }
  | { readonly kind: 'token'; readonly token: string };

export interface LoginRequest {
  readonly client: bigint;
  readonly token: ClientToken;
  readonly credentials: LoginCredentials;
}

/** Outcome of `login` before consensus: submitted (answer comes as a session result) or refused. */
export type LoginOutcome = { readonly kind: 'submitted'; readonly userId: number } | { readonly kind: 'refused'; readonly code: number; readonly eviction: number };

/** Token of requests the host makes for itself; the transport drops frames carrying it. */
export const INTERNAL_TOKEN: ClientToken = -1;
/** High tag of internal client ids ("SHOAL"). */
export const INTERNAL_CLIENT_TAG = 0x5348_4f41_4cn;

export function internalClientId(replica: number, userId: number): bigint {
  return (INTERNAL_CLIENT_TAG << 80n) | (BigInt(replica) << 32n) | BigInt(userId);
}

export function isInternalClient(client: bigint): boolean {
  return client >> 80n === INTERNAL_CLIENT_TAG;
}

function isPromise<T>(value: Maybe<T>): value is Promise<T> {
  return typeof value === 'object' && value !== null && typeof (value as Promise<T>).then === 'function';
}

/** Applies `next` now when `value` is ready, else when it resolves. */
function then<T>(value: Maybe<T>, next: (v: T, async: boolean) => void, failed: (e: unknown) => void): void {
  if (isPromise(value)) value.then((v) => next(v, true), failed);
  else next(value, false);
}

interface InternalOp {
  readonly key: string;
  readonly operation: number;
  readonly body: Uint8Array;
}

interface InternalSession {
  readonly userId: number;
  readonly client: bigint;
  epoch: bigint;
  registeredAt: number;
  nextRequest: bigint;
  inFlight: (InternalOp & { request: bigint; sentAt: number }) | null;
  readonly queue: InternalOp[];
}

export class MetadataHost {
  readonly #o: MetadataHostOptions;
  readonly #sessions = new Map<number, InternalSession>();
  /** Keys of internal ops queued or in flight (dedupe). */
  readonly #pending = new Set<string>();
  #ticks = 0;
  /** A root-password hash is in flight (root bootstrap). */
  #rootHashing = false;

  constructor(options: MetadataHostOptions) {
    this.#o = options;
  }

  get driver(): MetadataDriver {
    return this.#o.driver;
  }

  // -------------------------------------------------------------------------------------------
  // Client requests.

  /** A metadata write from a logged-in client: preflight, admission, propose (or answer). */
  submitRequest(req: ClientRequest): void {
    const driver = this.#o.driver;
    if (driver.fatal !== null) return;
    if (driver.checkRequest(req) !== 'new') {
      driver.onRequest(req);
      return;
    }
    const work = hostWorkFor(driver.state, req.operation, req.body);
    then(this.#hostInputs(work), (inputs, async) => this.#admit(req, inputs, async), (e) => this.#portFailed(req, e));
  }

  /**
   * Verifies credentials (off-thread when the port is async) and submits the Register; the
   * committed outcome arrives as a `session_result`. `done` gets the pre-consensus outcome.
   */
  login(req: LoginRequest, done: (outcome: LoginOutcome) => void): void {
    const driver = this.#o.driver;
    const state = driver.state;
    if (req.credentials.kind === 'token') {
      const pat = state.verifyPersonalAccessToken(req.credentials.token, this.#o.now());
      if (!pat.ok) {
        done({ kind: 'refused', code: pat.code, eviction: pat.code === ErrorCode.UserInactive ? EvictionReason.UserInactive : EvictionReason.InvalidToken });
        return;
      }
      this.#register(req, pat.userId, done, false);
      return;
    }
    const target = state.verifyLoginTarget(req.credentials.username);
    if (!target.ok) {
      done({ kind: 'refused', code: target.code, eviction: EvictionReason.InvalidCredentials });
      return;
    }
    if (!target.active) {
      done({ kind: 'refused', code: ErrorCode.UserInactive, eviction: EvictionReason.UserInactive });
      return;
    }
    then(this.#o.ports.verifyPassword(target.passwordHash, req.credentials.password), (matches, async) => {
      if (!matches) done({ kind: 'refused', code: ErrorCode.InvalidCredentials, eviction: EvictionReason.InvalidCredentials });
      else this.#register(req, target.userId, done, async);
    }, () => done({ kind: 'refused', code: ErrorCode.InvalidCredentials, eviction: EvictionReason.InvalidCredentials }));
  }

  /** A transport disconnect: the client leaves every consumer group (66, on the primary). */
  removeClient(client: bigint): void {
    this.#enqueue(0, { key: `66:${client}`, operation: Operation.RemoveConsumerGroupMember, body: encodeRemoveConsumerGroupMember(client) });
  }

  /** Call after `driver.tick()`: bootstrap, cleaner, reconciler, internal sessions. */
  tick(): void {
    this.#ticks += 1;
    const driver = this.#o.driver;
    if (driver.fatal !== null) return;
    if (!driver.caughtUpPrimary) return;
    const state = driver.state;
    if ((this.#o.bootstrapRoot ?? true) && state.model.users.size === 0) this.#bootstrapRoot();
    const every = this.#o.patCleanerIntervalTicks ?? 6000;
    if (every > 0 && this.#ticks % every === 0) {
      for (const t of state.expiredTokens(this.#o.now())) {
        this.#enqueue(t.userId, {
          key: `pat:${t.userId}:${t.name}`, operation: Operation.DeletePersonalAccessToken,
          body: deletePersonalAccessTokenCommand.encodeRequest({ name: t.name }),
        });
      }
    }
    const timeout = this.#o.revocationTimeoutMicros ?? 30_000_000n;
    const now = this.#o.now();
    for (const r of state.pendingRevocations()) {
      if (r.createdAt + timeout > now) continue;
      this.#enqueue(0, {
        key: `67:${r.streamId}:${r.topicId}:${r.groupId}:${r.sourceClient}:${r.partitionId}`,
        operation: Operation.CompleteConsumerGroupRevocation,
        body: encodeCompleteRevocation({ streamId: r.streamId, topicId: r.topicId, groupId: r.groupId, sourceClient: r.sourceClient, partitionId: r.partitionId }),
      });
    }
    this.#pump();
  }

  /** Internal operations queued or in flight (tests). */
  get internalPending(): number {
    return this.#pending.size;
  }

  // -------------------------------------------------------------------------------------------

  #hostInputs(work: HostWork): Maybe<AdmitHostInputs> {
    const ports = this.#o.ports;
    switch (work.kind) {
      case 'none':
        return {};
      case 'hash_password':
        return mapMaybe(ports.hashPassword(work.password), (passwordHash) => ({ passwordHash }));
      case 'verify_and_hash': {
        const matches = ports.verifyPassword(work.storedHash, work.currentPassword);
        return mapMaybe(matches, (currentPasswordMatches) =>
          currentPasswordMatches ? mapMaybe(ports.hashPassword(work.newPassword), (passwordHash) => ({ currentPasswordMatches, passwordHash })) : { currentPasswordMatches });
      }
      case 'generate_token':
        return mapMaybe(ports.generateToken(), (token) => ({ token }));
      case 'gather_in_flight':
        return ports.inFlightPartitions === undefined ? { inFlight: [] } : mapMaybe(ports.inFlightPartitions(work), (inFlight) => ({ inFlight }));
      case 'resolve_segments':
        return ports.resolveSegments === undefined ? { segmentsUpToOffset: 0n } : mapMaybe(ports.resolveSegments(work), (segmentsUpToOffset) => ({ segmentsUpToOffset }));
    }
  }

  #admit(req: ClientRequest, inputs: AdmitHostInputs, async: boolean): void {
    const driver = this.#o.driver;
    if (driver.fatal !== null) return;
    // After an await the request may have become a duplicate (a retry committed meanwhile).
    if (async && driver.checkRequest(req) !== 'new') {
      driver.onRequest(req);
      driver.flush();
      return;
    }
    const actor = driver.sessionUser(req.client)?.userId ?? req.userId;
    const result = admit(driver.state, {
      operation: req.operation, body: req.body, actor: { userId: actor }, client: req.client, timestamp: this.#o.now(), host: inputs,
    });
    if (result.kind === 'propose') {
      driver.onRequest({ ...req, operation: result.operation, body: result.body });
      if (async) driver.flush();
      return;
    }
    if (result.kind === 'reject') {
      this.#o.transport.sendToClient(req.client, req.token, buildStatusReply(this.#context(req), result.status));
      return;
    }
    const reason = result.reason === 'invalid_request_operation' ? EvictionReason.InvalidRequestOperation : EvictionReason.InvalidRequestBody;
    this.#o.transport.sendToClient(req.client, req.token, buildEvictionFrame(this.#context(req), reason));
  }

  #portFailed(req: ClientRequest, error: unknown): void {
    void error;
    // The outcome is unknown to the client but nothing was proposed: a retriable "not committed".
    this.#o.transport.sendToClient(req.client, req.token, buildStatusReply(this.#context(req), ErrorCode.TransientNotCommitted));
  }

  #context(req: ClientRequest): Parameters<typeof buildStatusReply>[0] {
    const d = this.#o.driver;
    const s = d.status;
    return {
      cluster: d.config.cluster, view: s.view, replica: d.config.replica, client: req.client, request: req.request,
      operation: req.operation, timestamp: req.timestamp, requestChecksum: req.requestChecksum, commit: BigInt(s.commitMax),
    };
  }

  #register(req: LoginRequest, userId: number, done: (o: LoginOutcome) => void, async: boolean): void {
    const driver = this.#o.driver;
    done({ kind: 'submitted', userId });
    driver.submitSession({ session: 'register', client: req.client, userId, epoch: 0n, request: 0n, token: req.token });
    if (async) driver.flush();
  }

  #bootstrapRoot(): void {
    // One hash at a time: with an async port the 'root' key is only pending once it returns.
    if (this.#pending.has('root') || this.#rootHashing) return;
    const username = this.#o.rootUsername ?? 'iggy';
    const password = this.#o.rootPassword ?? 'iggy';
    this.#rootHashing = true;
    then(this.#o.ports.hashPassword(password), (hash) => {
      this.#rootHashing = false;
      if (this.#o.driver.state.model.users.size > 0) return;
      const root = buildRootUserCreateBody(username, hash);
      this.#enqueue(0, { key: 'root', operation: root.operation, body: root.body });
    }, () => {
      this.#rootHashing = false;
    });
  }

  #enqueue(userId: number, op: InternalOp): void {
    if (this.#pending.has(op.key)) return;
    this.#pending.add(op.key);
    let session = this.#sessions.get(userId);
    if (session === undefined) {
      session = {
        userId, client: internalClientId(this.#o.driver.config.replica, userId), epoch: 0n, registeredAt: -Infinity,
        nextRequest: 1n, inFlight: null, queue: [],
      };
      this.#sessions.set(userId, session);
    }
    session.queue.push(op);
  }

  /** Moves every internal session forward: register, send the next op, observe completion, retry. */
  #pump(): void {
    const driver = this.#o.driver;
    const retry = this.#o.internalRetryTicks ?? 100;
    for (const session of this.#sessions.values()) {
      if (session.inFlight === null && session.queue.length === 0) continue;
      const bound = driver.sessionUser(session.client);
      if (bound === null || bound.userId !== session.userId) {
        // Not registered (or evicted): register, then retry the in-flight op under the new epoch.
        if (this.#ticks - session.registeredAt >= retry) {
          session.registeredAt = this.#ticks;
          driver.submitSession({ session: 'register', client: session.client, userId: session.userId, epoch: 0n, request: 0n, token: INTERNAL_TOKEN });
        }
        continue;
      }
      if (bound.epoch !== session.epoch) {
        session.epoch = bound.epoch;
        if (session.inFlight !== null) session.inFlight.sentAt = -Infinity;
      }
      const entry = driver.replica.clientSession(session.client);
      const watermark = entry?.watermark ?? 0n;
      if (session.inFlight !== null && watermark >= session.inFlight.request) {
        this.#pending.delete(session.inFlight.key);
        session.inFlight = null;
      }
      if (session.inFlight === null) {
        const next = session.queue.shift();
        if (next === undefined) continue;
        session.nextRequest = (watermark >= session.nextRequest ? watermark : session.nextRequest - 1n) + 1n;
        session.inFlight = { ...next, request: session.nextRequest, sentAt: -Infinity };
        session.nextRequest += 1n;
      }
      const op = session.inFlight;
      if (this.#ticks - op.sentAt < retry) continue;
      op.sentAt = this.#ticks;
      driver.onRequest({
        client: session.client, request: op.request, session: session.epoch, requestChecksum: 0n, operation: op.operation,
        body: op.body, userId: session.userId, timestamp: this.#o.now(), token: INTERNAL_TOKEN,
      });
    }
  }
}

function mapMaybe<T, R>(value: Maybe<T>, f: (v: T) => Maybe<R>): Maybe<R> {
  return isPromise(value) ? value.then(f) : f(value);
}
