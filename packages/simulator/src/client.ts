/**
 * A simulated client: a minimal session that follows framing.mdx (LoginRegister with request 0,
 * a per-client request counter advanced by metadata-plane operations only, the session epoch from
 * the login reply echoed in every request), one request in flight at a time, except for bursts:
 * in burst mode a client now and then sends batches to several partitions at once (a producer
 * fanning out; partition ops carry no request number), each in flight on its own.
 *
 * Why not packages/client's Session: its retry model replays only on 57 on one connection; the
 * simulator must resend the SAME frame (same client id and request number) to another replica
 * after a timeout or a retriable answer, which is what makes exactly-once observable.
 *
 *   unbound ─login─▶ registering ─reply ok─▶ bound ─▶ op in flight ─reply─▶ acked (recorded)
 *      ▲                 │ timeout/58/57: resend to the next replica           │ 57/58/timeout: resend
 *      └── eviction ◀────┴──────────────────────────────────────────────────────┘ (same bytes)
 */
import {
  ErrorCode, HEADER_SIZE, Operation, REPLY_HEADER, SHOAL_PROTOCOL_VERSION, classifyServerFrame, createConsumerGroupCommand,
  createStreamCommand, createTopicCommand, createUserCommand, decodeLoginReply, encodeLoginRegisterRequest, encodeRequestFrame,
  isMetadataPlane, sendMessagesCommand,
} from '@shoal/protocol';
import type { Prng } from '@shoal/stdx';
import { type WorkOp, type WorkloadOptions, burstOps, nextOp, setupOps } from './workload.js';

export interface ClientEnv {
  readonly replicaCount: number;
  now(): number;
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
  readonly work: WorkOp | null;
  readonly frame: Uint8Array;
  readonly request: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  sentAt: number;
  attempts: number;
  target: number;
  /** Resend at this tick (after a retriable answer), or -1. */
  resendAt: number;
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
  #state: 'unbound' | 'registering' | 'bound' = 'unbound';
  #epoch = 0n;
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

  constructor(index: number, endpoint: number, env: ClientEnv, prng: Prng, options: WorkloadOptions) {
    this.index = index;
    this.endpoint = endpoint;
    this.#env = env;
    this.#prng = prng;
    this.#options = options;
    this.#setup = index === 0 ? setupOps(options) : [];
    this.#primaryGuess = prng.below(env.replicaCount);
  }

  get busy(): boolean {
    return this.#inFlight.length > 0;
  }

  tick(): void {
    const now = this.#env.now();
    if (this.#inFlight.length > 0) {
      for (const f of [...this.#inFlight]) {
        if (f.resendAt >= 0 && now >= f.resendAt) this.#resend(f, false);
        else if (f.resendAt < 0 && now - f.sentAt >= TIMEOUT_TICKS) this.#resend(f, true);
      }
      return;
    }
    if (now < this.#nextAt) return;
    if (this.#state === 'unbound') {
      this.#login();
      return;
    }
    if (this.#state !== 'bound' || this.stopped) return;
    if (this.#setup.length === 0 && this.#options.burst && this.#prng.below(4) === 0) {
      for (const work of burstOps(this.#prng, this.#options, this.index, () => this.#seq++)) this.#send(work);
      return;
    }
    const work = this.#setup.shift() ?? nextOp(this.#prng, this.#options, this.index, this.#seq++);
    this.#send(work);
  }

  deliver(frame: Uint8Array): void {
    if (this.#inFlight.length === 0 || frame.length < HEADER_SIZE) return;
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const command = frame[60];
    if (command === 13) {
      const client = view.getBigUint64(128, true) | (view.getBigUint64(136, true) << 64n);
      if (client === this.#clientId) this.#onEviction(frame[255] as number);
      return;
    }
    if (command !== 8) return;
    const client = view.getBigUint64(REPLY_HEADER.client.offset, true) | (view.getBigUint64(REPLY_HEADER.client.offset + 8, true) << 64n);
    const request = view.getBigUint64(REPLY_HEADER.request.offset, true);
    const operation = frame[REPLY_HEADER.operation.offset];
    const timestamp = view.getBigUint64(REPLY_HEADER.timestamp.offset, true);
    if (client !== this.#clientId) return;
    const f = this.#inFlight.find((x) => x.timestamp === timestamp && x.request === request && x.operation === operation);
    if (f === undefined) return;
    const outcome = classifyServerFrame(frame);
    const replica = frame[61] as number;
    if (outcome.outcome === 'error') {
      const code = outcome.errorCode;
      if (code === ErrorCode.TransientNotCommitted || code === ErrorCode.TransientNotAccepted) {
        this.#retriable(f);
        return;
      }
      if (code === ErrorCode.Unauthenticated && f.operation !== Operation.Register) {
        // The node does not know this session (a gateway that restarted): log in again.
        this.#onEviction(-1);
        return;
      }
      this.#finish(f, code, frame, null);
      return;
    }
    if (f.operation === Operation.Register) {
      const login = decodeLoginReply(outcome.payload);
      if (!login.ok) {
        this.#retriable(f);
        return;
      }
      this.#state = 'bound';
      this.#epoch = login.value.session;
      this.#counter = 1n;
      this.#inFlight = [];
      this.#primaryGuess = replica;
      return;
    }
    if (isMetadataPlane(f.operation) || f.operation === Operation.CreateTopic) this.#primaryGuess = Number(view.getBigUint64(REPLY_HEADER.op.offset, true)) > 0 ? replica : this.#primaryGuess;
    this.#finish(f, 0, frame, outcome.payload);
  }

  // -------------------------------------------------------------------------------------------

  #login(): void {
    this.#clientId = this.#prng.u128() | 1n;
    this.#state = 'registering';
    const body = encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'vopr', sdkVersion: '0' }, username: 'iggy', password: 'iggy', context: '',
    });
    this.#start(null, Operation.Register, 0n, body, this.#primaryGuess);
  }

  #send(work: WorkOp): void {
    const metadata = isMetadataPlane(work.operation) || work.operation === Operation.CreateTopic;
    const request = this.#counter;
    if (metadata) this.#counter += 1n;
    const target = metadata ? this.#primaryGuess : (this.#partitionGuess.get(work.partitionId ?? 0) ?? this.#prng.below(this.#env.replicaCount));
    this.#start(work, work.operation, request, work.body, target);
  }

  #start(work: WorkOp | null, operation: number, request: bigint, body: Uint8Array, target: number): void {
    const timestamp = this.#timestamp++;
    const frame = encodeRequestFrame({ client: this.#clientId, operation, request, session: this.#epoch, timestamp }, body);
    const f: InFlight = { work, frame, request, operation, timestamp, sentAt: this.#env.now(), attempts: 1, target, resendAt: -1 };
    this.#inFlight.push(f);
    this.#env.send(this.endpoint, target, frame);
  }

  #resend(f: InFlight, rotate: boolean): void {
    f.attempts += 1;
    if (f.attempts > ATTEMPTS_MAX) {
      this.#giveUp(f, 'attempts exhausted');
      return;
    }
    if (rotate) f.target = (f.target + 1) % this.#env.replicaCount;
    f.sentAt = this.#env.now();
    f.resendAt = -1;
    this.#env.send(this.endpoint, f.target, f.frame);
  }

  #retriable(f: InFlight): void {
    f.target = (f.target + 1) % this.#env.replicaCount;
    if (f.work !== null && f.work.partitionId !== undefined && !isMetadataPlane(f.operation)) this.#partitionGuess.set(f.work.partitionId, f.target);
    else this.#primaryGuess = f.target;
    f.resendAt = this.#env.now() + RETRY_PAUSE_TICKS;
  }

  #onEviction(reason: number): void {
    const lost = this.#inFlight;
    this.#state = 'unbound';
    this.#epoch = 0n;
    this.#inFlight = [];
    this.#nextAt = this.#env.now() + RETRY_PAUSE_TICKS;
    for (const f of lost) {
      if (f.work === null) continue;
      // The setup must happen (its outcome is unknown: a second CreateStream may answer "exists").
      if (f.work.kind === 'setup_stream' || f.work.kind === 'setup_topic') this.#setup.unshift(f.work);
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
    if (f.work === null) {
      this.#state = 'unbound';
      return;
    }
    if (f.work.kind === 'setup_stream' || f.work.kind === 'setup_topic') this.#setup.unshift(f.work);
    this.#env.acked({ kind: 'unknown', clientIndex: this.index, work: f.work, why });
  }

  #finish(f: InFlight, code: number, frame: Uint8Array, payload: Uint8Array | null): void {
    this.#drop(f);
    this.completed += 1;
    this.#nextAt = this.#options.burst ? this.#env.now() : this.#env.now() + this.#prng.range(0, 3);
    const work = f.work;
    if (work === null) {
      // A refused login: try again later with a fresh client id.
      this.#state = 'unbound';
      this.#nextAt = this.#env.now() + RETRY_PAUSE_TICKS * 4;
      return;
    }
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
    if ((work.kind === 'setup_stream' || work.kind === 'setup_topic') && code !== 0 && op === 0) {
      // Not decided yet (e.g. the stream is not visible to admission): try again.
      this.#setup.unshift(work);
    }
    if (work.kind === 'setup_topic' && (code === ErrorCode.StreamIdNotFound || code === ErrorCode.StreamNameNotFound) && this.#setup[0]?.kind !== 'setup_stream') {
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
