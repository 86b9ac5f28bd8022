/**
 * A simulated client: a minimal session that follows framing.mdx (LoginRegister with request 0,
 * a per-client request counter advanced by metadata-plane operations only, the session epoch from
 * the login reply echoed in every request), one request in flight at a time, except for bursts:
 * in burst mode a client now and then sends batches to several partitions at once (a producer
 * fanning out; partition ops carry no request number), each in flight on its own.
 *
 * Like a cluster SDK it holds a connection to each node it talks to, and each connection logs in
 * on its own (the node's gateway binds the session to that connection, node-gateway.ts), always
 * under the client's one id: a rebind keeps the client table's watermark, so a request resent
 * through another node stays exactly-once. A metadata op needs the newest epoch (the core fences
 * older ones with SessionTooLow), so it first logs in again on a connection bound earlier; a
 * partition op uses whatever its connection bound (the gateway fences it against that).
 *
 * Why not packages/client's Session: its retry model replays only on 57 on one connection; the
 * simulator must resend the SAME request (same client id and request number) through another
 * node after a timeout or a retriable answer, which is what makes exactly-once observable.
 *
 *   op ─▶ its node's link bound (fresh enough)? ── no ──▶ parked; the link logs in ─reply ok─▶ sent
 *          │ yes: sent ─reply─▶ acked (recorded)
 *          │ timeout / 58 / 57: resend through the next node (same request)
 *          │ 40 (the node forgot the session: it restarted): the link logs in again, the op waits
 *          └ eviction from that node: its link unbound, its sent ops unknown (NoSession: a new client id)
 */
import {
  COMMAND_OFFSET, ClientCommand, EVICTION_HEADER, ErrorCode, EvictionReason, HEADER_SIZE, Operation, REPLY_HEADER, SHOAL_PROTOCOL_VERSION, classifyServerFrame, createConsumerGroupCommand,
  createStreamCommand, createTopicCommand, createUserCommand, decodeLoginReply, encodeLoginRegisterRequest, encodeRequestFrame,
  isMetadataPlane, sendMessagesCommand,
} from '@shoal/protocol';
import type { Prng } from '@shoal/stdx';
import { type WorkOp, type WorkloadOptions, burstOps, nextOp, setupOps } from './workload.js';

export interface ClientEnv {
  readonly replicaCount: number;
  now(): number;
  /**
   * The incarnation of node `node`'s process (its boot count), 0 while it is down: what a TCP
   * client learns from a refused connect or a reset, so a connection to a dead or restarted
   * node is known lost at once.
   */
  incarnation(node: number): number;
  send(from: number, to: number, frame: Uint8Array): void;
  /** A request finished with an answer (or was given up). */
  acked(record: AckRecord): void;
}

export type AckRecord =
  | {
      readonly kind: 'metadata';
      readonly clientIndex: number;
      readonly client: bigint;
      readonly request: bigint;
      readonly work: WorkOp;
      readonly code: number;
      /** The committed op of the reply (0 for a pre-commit answer). */
      readonly op: number;
      /** The created object's id when the reply carried one. */
      readonly createdId: number | null;
    }
  | {
      readonly kind: 'send';
      readonly clientIndex: number;
      readonly partitionId: number;
      readonly baseOffset: number;
      readonly messages: number;
      readonly frames: Uint8Array;
    }
  | {
      /** A consumer-offset write answered (code 0: committed; else a committed rejection). */
      readonly kind: 'offset';
      readonly clientIndex: number;
      readonly partitionId: number;
      readonly consumer: number;
      /** null: a delete. */
      readonly offset: bigint | null;
      readonly code: number;
      /** The op the reply names (0 when it names none). */
      readonly op: number;
    }
  | { readonly kind: 'rejected'; readonly clientIndex: number; readonly work: WorkOp; readonly code: number }
  | { readonly kind: 'unknown'; readonly clientIndex: number; readonly work: WorkOp; readonly why: string };

interface InFlight {
  readonly work: WorkOp;
  readonly request: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  readonly metadata: boolean;
  /** When it was sent, or parked waiting for its link's login. */
  sentAt: number;
  attempts: number;
  target: number;
  /** Resend at this tick (after a retriable answer), or -1. */
  resendAt: number;
  /** False while parked behind its link's login. */
  sent: boolean;
  /** The incarnation of the node it was sent to (its connection died with a crash: no reply will come). */
  via: number;
}

/** This client's connection to one node, and the session it bound there. */
interface Link {
  state: 'unbound' | 'registering' | 'bound';
  epoch: bigint;
  /** The node incarnation the connection was made to (a restart drops it and its session). */
  incarnation: number;
  /** The Register in flight: its timestamp (the reply echoes it) and when it left. */
  loginTimestamp: bigint;
  loginSentAt: number;
  /** No new login before this tick (after a refused one). */
  retryAt: number;
}

const TIMEOUT_TICKS = 150;
const RETRY_PAUSE_TICKS = 15;
const ATTEMPTS_MAX = 60;

export class SimClient {
  readonly index: number;
  readonly endpoint: number;
  readonly #env: ClientEnv;
  readonly #prng: Prng;
  readonly #options: WorkloadOptions;
  #clientId = 0n;
  readonly #links: Link[];
  /** The newest epoch any link bound: what the metadata core's client table holds. */
  #latestEpoch = 0n;
  #counter = 1n;
  #inFlight: InFlight[] = [];
  #nextAt = 0;
  #seq = 0;
  #setup: WorkOp[];
  #primaryGuess: number;
  readonly #partitionGuess = new Map<number, number>();
  /** Stop starting new operations (liveness phase drains). */
  stopped = false;
  #timestamp = 1n;
  completed = 0;

  /** A scripted client runs only what this returns (null: nothing now); no random workload. */
  readonly #script: (() => WorkOp | null) | null;

  constructor(index: number, endpoint: number, env: ClientEnv, prng: Prng, options: WorkloadOptions, script: (() => WorkOp | null) | null = null) {
    this.index = index;
    this.endpoint = endpoint;
    this.#env = env;
    this.#prng = prng;
    this.#options = options;
    this.#script = script;
    this.#setup = index === 0 && script === null ? setupOps(options) : [];
    this.#primaryGuess = prng.below(env.replicaCount);
    this.#links = Array.from({ length: env.replicaCount }, () => ({ state: 'unbound', epoch: 0n, incarnation: 0, loginTimestamp: 0n, loginSentAt: 0, retryAt: 0 }));
    this.#newClientId();
  }

  get busy(): boolean {
    return this.#inFlight.length > 0;
  }

  tick(): void {
    const now = this.#env.now();
    this.#expireLogins(now);
    if (this.#inFlight.length > 0) {
      for (const f of [...this.#inFlight]) this.#tickInFlight(f, now);
      return;
    }
    if (now < this.#nextAt || this.stopped) return;
    if (this.#script !== null) {
      const scripted = this.#script();
      if (scripted !== null) this.#start(scripted);
      return;
    }
    if (this.#setup.length === 0 && this.#options.burst && this.#prng.below(4) === 0) {
      for (const work of burstOps(this.#prng, this.#options, this.index, () => this.#seq++)) this.#start(work);
      return;
    }
    const work = this.#setup.shift() ?? nextOp(this.#prng, this.#options, this.index, this.#seq++);
    this.#start(work);
  }

  /** A frame from node `from` on this client's connection to it. */
  deliver(from: number, frame: Uint8Array): void {
    if (frame.length < HEADER_SIZE || from >= this.#links.length) return;
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const command = frame[COMMAND_OFFSET];
    if (command === ClientCommand.Eviction) {
      const at = EVICTION_HEADER.client.offset;
      const client = view.getBigUint64(at, true) | (view.getBigUint64(at + 8, true) << 64n);
      if (client === this.#clientId) this.#onEviction(from, frame[EVICTION_HEADER.reason.offset] as number);
      return;
    }
    if (command !== ClientCommand.Reply) return;
    const client = view.getBigUint64(REPLY_HEADER.client.offset, true) | (view.getBigUint64(REPLY_HEADER.client.offset + 8, true) << 64n);
    const request = view.getBigUint64(REPLY_HEADER.request.offset, true);
    const operation = frame[REPLY_HEADER.operation.offset];
    const timestamp = view.getBigUint64(REPLY_HEADER.timestamp.offset, true);
    if (client !== this.#clientId) return;
    if (operation === Operation.Register) {
      this.#onLoginReply(from, timestamp, frame);
      return;
    }
    const f = this.#inFlight.find((x) => x.sent && x.timestamp === timestamp && x.request === request && x.operation === operation);
    if (f === undefined) return;
    const outcome = classifyServerFrame(frame);
    if (outcome.outcome === 'error') {
      const code = outcome.errorCode;
      if (code === ErrorCode.TransientNotCommitted || code === ErrorCode.TransientNotAccepted) {
        this.#retriable(f);
        return;
      }
      if (code === ErrorCode.Unauthenticated) {
        // The node does not know this connection's session (it restarted): log in there again.
        // The gateway ran nothing, so the op waits for the login and goes again.
        this.#unbind(from);
        this.#park(f);
        return;
      }
      this.#finish(f, code, frame, null);
      return;
    }
    const replica = frame[REPLY_HEADER.replica.offset] as number;
    if (f.metadata) this.#primaryGuess = Number(view.getBigUint64(REPLY_HEADER.op.offset, true)) > 0 ? replica : this.#primaryGuess;
    this.#finish(f, 0, frame, outcome.payload);
  }

  // -------------------------------------------------------------------------------------------

  #newClientId(): void {
    this.#clientId = this.#prng.u128() | 1n;
    this.#counter = 1n;
    this.#latestEpoch = 0n;
    for (const link of this.#links) link.state = 'unbound';
  }

  #tickInFlight(f: InFlight, now: number): void {
    if (!this.#inFlight.includes(f)) return;
    if (f.resendAt >= 0) {
      if (now >= f.resendAt) this.#resend(f, false);
    } else if (f.sent && this.#env.incarnation(f.target) !== f.via) {
      this.#retriable(f);
    } else if (now - f.sentAt >= TIMEOUT_TICKS) {
      this.#resend(f, true);
    } else if (!f.sent) {
      this.#login(f.target, f.metadata);
    }
  }

  /** A Register unanswered for a timeout: the link may log in again. */
  #expireLogins(now: number): void {
    for (const link of this.#links) {
      if (link.state === 'registering' && now - link.loginSentAt >= TIMEOUT_TICKS) link.state = 'unbound';
    }
  }

  /** The link to `node` can carry a request (a metadata op needs the newest epoch). */
  #ready(node: number, metadata: boolean): boolean {
    const link = this.#connected(node);
    return link !== null && link.state === 'bound' && (!metadata || link.epoch === this.#latestEpoch);
  }

  /** The link to `node`, reset when its connection was lost (a crash or restart); null while the node is down. */
  #connected(node: number): Link | null {
    const link = this.#links[node] as Link;
    const incarnation = this.#env.incarnation(node);
    if (incarnation !== link.incarnation) {
      link.state = 'unbound';
      link.incarnation = incarnation;
    }
    return incarnation === 0 ? null : link;
  }

  /** Logs the link to `node` in, unless it is ready, already registering or pausing after a refusal. */
  #login(node: number, metadata: boolean): void {
    const link = this.#connected(node);
    const now = this.#env.now();
    if (link === null) {
      // Connection refused: the ops waiting for this node move on at once.
      for (const f of this.#inFlight) if (!f.sent && f.target === node && f.resendAt < 0) this.#retriable(f);
      return;
    }
    if (this.#ready(node, metadata) || link.state === 'registering' || now < link.retryAt) return;
    link.state = 'registering';
    link.loginTimestamp = this.#timestamp++;
    link.loginSentAt = now;
    const body = encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'vopr', sdkVersion: '0' }, username: 'iggy', password: 'iggy', context: '',
    });
    const frame = encodeRequestFrame({ client: this.#clientId, operation: Operation.Register, request: 0n, session: 0n, timestamp: link.loginTimestamp }, body);
    this.#env.send(this.endpoint, node, frame);
  }

  #onLoginReply(from: number, timestamp: bigint, frame: Uint8Array): void {
    const link = this.#links[from] as Link;
    if (link.state !== 'registering' || link.loginTimestamp !== timestamp) return;
    const outcome = classifyServerFrame(frame);
    const login = outcome.outcome === 'ok' ? decodeLoginReply(outcome.payload) : null;
    if (login === null || !login.ok) {
      // Refused (58 / 57: not caught up, no primary reachable): the link pauses and the ops
      // waiting for it move on to the next node, as a retriable answer to the op itself would.
      link.state = 'unbound';
      link.retryAt = this.#env.now() + RETRY_PAUSE_TICKS;
      for (const f of this.#inFlight) if (!f.sent && f.target === from) this.#retriable(f);
      return;
    }
    link.state = 'bound';
    link.epoch = login.value.session;
    if (link.epoch > this.#latestEpoch) this.#latestEpoch = link.epoch;
    for (const f of [...this.#inFlight]) {
      if (!f.sent && f.target === from) this.#dispatch(f);
    }
  }

  #start(work: WorkOp): void {
    const metadata = isMetadataPlane(work.operation) || work.operation === Operation.CreateTopic;
    const request = this.#counter;
    if (metadata) this.#counter += 1n;
    const target = metadata ? this.#primaryGuess : (this.#partitionGuess.get(work.partitionId ?? 0) ?? this.#prng.below(this.#env.replicaCount));
    const f: InFlight = {
      work, request, operation: work.operation, timestamp: this.#timestamp++, metadata, sentAt: this.#env.now(), attempts: 1, target, resendAt: -1, sent: false, via: 0,
    };
    this.#inFlight.push(f);
    this.#dispatch(f);
  }

  /** Sends `f` through its target's link with that link's epoch, or parks it behind a login. */
  #dispatch(f: InFlight): void {
    if (!this.#ready(f.target, f.metadata)) {
      this.#park(f);
      return;
    }
    const link = this.#links[f.target] as Link;
    f.sent = true;
    f.via = link.incarnation;
    f.sentAt = this.#env.now();
    f.resendAt = -1;
    const frame = encodeRequestFrame({ client: this.#clientId, operation: f.operation, request: f.request, session: link.epoch, timestamp: f.timestamp }, f.work.body);
    this.#env.send(this.endpoint, f.target, frame);
  }

  #park(f: InFlight): void {
    f.sent = false;
    f.sentAt = this.#env.now();
    f.resendAt = -1;
    this.#login(f.target, f.metadata);
  }

  #resend(f: InFlight, rotate: boolean): void {
    f.attempts += 1;
    if (f.attempts > ATTEMPTS_MAX) {
      this.#giveUp(f, 'attempts exhausted');
      return;
    }
    if (rotate) f.target = (f.target + 1) % this.#env.replicaCount;
    this.#dispatch(f);
  }

  #retriable(f: InFlight): void {
    f.target = (f.target + 1) % this.#env.replicaCount;
    if (f.work.partitionId !== undefined && !isMetadataPlane(f.operation)) this.#partitionGuess.set(f.work.partitionId, f.target);
    else this.#primaryGuess = f.target;
    f.resendAt = this.#env.now() + RETRY_PAUSE_TICKS;
  }

  #unbind(node: number): void {
    const link = this.#links[node] as Link;
    link.state = 'unbound';
  }

  /**
   * An eviction from node `from`: its link is unbound and the ops it carried have unknown
   * outcomes. NoSession means the client table lost this client: a fresh id, as after any reset.
   */
  #onEviction(from: number, reason: number): void {
    const noSession = reason === EvictionReason.NoSession;
    const lost = noSession ? this.#inFlight : this.#inFlight.filter((f) => f.sent && f.target === from);
    this.#inFlight = noSession ? [] : this.#inFlight.filter((f) => !lost.includes(f));
    if (noSession) this.#newClientId();
    else this.#unbind(from);
    (this.#links[from] as Link).retryAt = this.#env.now() + RETRY_PAUSE_TICKS;
    this.#nextAt = this.#env.now() + RETRY_PAUSE_TICKS;
    for (const f of lost) {
      // The setup must happen (its outcome is unknown: a second CreateStream may answer "exists").
      if (this.#script === null && (f.work.kind === 'setup_stream' || f.work.kind === 'setup_topic')) this.#setup.unshift(f.work);
      this.#env.acked({ kind: 'unknown', clientIndex: this.index, work: f.work, why: `evicted (reason ${reason})` });
    }
  }

  #drop(f: InFlight): void {
    const i = this.#inFlight.indexOf(f);
    if (i >= 0) this.#inFlight.splice(i, 1);
  }

  #giveUp(f: InFlight, why: string): void {
    this.#drop(f);
    this.#nextAt = this.#env.now() + RETRY_PAUSE_TICKS;
    if (this.#script === null && (f.work.kind === 'setup_stream' || f.work.kind === 'setup_topic')) this.#setup.unshift(f.work);
    this.#env.acked({ kind: 'unknown', clientIndex: this.index, work: f.work, why });
  }

  #finish(f: InFlight, code: number, frame: Uint8Array, payload: Uint8Array | null): void {
    this.#drop(f);
    this.completed += 1;
    this.#nextAt = this.#options.burst ? this.#env.now() : this.#env.now() + this.#prng.range(0, 3);
    const work = f.work;
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const op = Number(view.getBigUint64(REPLY_HEADER.op.offset, true));
    if (work.kind === 'send') {
      if (code !== 0 || payload === null) {
        this.#env.acked({ kind: 'rejected', clientIndex: this.index, work, code });
        return;
      }
      const response = sendMessagesCommand.decodeResponse(payload);
      const confirmation = response.ok ? response.value.confirmations[0] : undefined;
      if (confirmation === undefined) throw new Error('SendMessages reply without a confirmation');
      this.#env.acked({
        kind: 'send', clientIndex: this.index, partitionId: work.partitionId ?? 0, baseOffset: Number(confirmation.baseOffset),
        messages: work.messages ?? 0, frames: work.frames ?? new Uint8Array(0),
      });
      return;
    }
    if (work.kind === 'store_offset' || work.kind === 'delete_offset') {
      this.#env.acked({
        kind: 'offset', clientIndex: this.index, partitionId: work.partitionId ?? 0, consumer: work.consumer ?? 0, offset: work.offset ?? null, code, op,
      });
      return;
    }
    if (this.#script === null && (work.kind === 'setup_stream' || work.kind === 'setup_topic') && code !== 0 && op === 0) {
      // Not decided yet (e.g. the stream is not visible to admission): try again.
      this.#setup.unshift(work);
    }
    if (this.#script === null && work.kind === 'setup_topic' && (code === ErrorCode.StreamIdNotFound || code === ErrorCode.StreamNameNotFound) && this.#setup[0]?.kind !== 'setup_stream') {
      // The data stream is not there (its creation's outcome was lost): create it first.
      this.#setup.unshift(setupOps(this.#options)[0] as WorkOp);
    }
    this.#env.acked({
      kind: 'metadata', clientIndex: this.index, client: this.#clientId, request: f.request, work, code, op,
      createdId: code === 0 && payload !== null ? createdIdOf(work, payload) : null,
    });
  }
}

function createdIdOf(work: WorkOp, payload: Uint8Array): number | null {
  switch (work.kind) {
    case 'create_stream':
    case 'setup_stream': {
      const r = createStreamCommand.decodeResponse(payload);
      return r.ok && r.value !== null ? r.value.id : null;
    }
    case 'create_topic':
    case 'setup_topic': {
      const r = createTopicCommand.decodeResponse(payload);
      return r.ok && r.value !== null ? r.value.id : null;
    }
    case 'create_user': {
      const r = createUserCommand.decodeResponse(payload);
      return r.ok && r.value !== null ? r.value.id : null;
    }
    case 'create_group': {
      const r = createConsumerGroupCommand.decodeResponse(payload);
      return r.ok && r.value !== null ? r.value.id : null;
    }
    default:
      return null;
  }
}
