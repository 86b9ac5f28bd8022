import { Socket, type SocketConstructorOpts } from 'node:net';
import {
  CommandCode, ErrorCode, FrameDecoder, Operation, REPLY_HEADER, classifyServerFrame, encodeRequestFrame, pollMessagesCommand,
} from '@shoal/protocol';
import { Session, nodeRandom, toConsumer, toPollingStrategy } from '@shoal/client';

/**
 * One lean client connection to one Shoal node: the SDK's sans-IO `Session` performs the
 * login-register (client id, session epoch, request counter), then the connection writes frames
 * the caller built itself and matches replies by the echoed `timestamp` (distinct per request),
 * with a Map lookup instead of the session's general-purpose queues. Kept deliberately small:
 *
 *   request(build) ──▶ frame = build(fields) ──▶ socket.write
 *   socket 'data' ──▶ FrameDecoder ──▶ timestamp → pending ──▶ resolve(payload) | 57: replay | reject
 *
 * Errors: a non-zero reply status or result rejection rejects with `LeanReplyError(code)` (58 is
 * `retriable` on another node); 57 TransientNotCommitted replays the same frame on this
 * connection (up to 8 times, 10 ms apart, as the SDK); a closed socket or an eviction rejects
 * every pending request with `LeanConnectionLost` (the outcome of those writes is unknown).
 */
export interface LeanCredentials {
  readonly username: string;
  readonly password: string;
}

export class LeanReplyError extends Error {
  override readonly name = 'LeanReplyError';
  constructor(readonly code: number, readonly address: string) {
    super(`${address} answered error ${code}`);
  }

  get notAccepted(): boolean {
    return this.code === ErrorCode.TransientNotAccepted;
  }
}

export class LeanConnectionLost extends Error {
  override readonly name = 'LeanConnectionLost';
  constructor(readonly address: string, reason: string) {
    super(`connection to ${address} lost: ${reason}`);
  }
}

export interface RequestFields {
  readonly client: bigint;
  readonly session: bigint;
  readonly request: bigint;
  readonly timestamp: bigint;
}

interface Pending {
  readonly frame: Uint8Array;
  readonly resolve: (payload: Uint8Array) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
  /** Resolve with a view of the decoder's bytes instead of a copy (`poll`'s contract). */
  readonly borrow: boolean;
  replays: number;
}

const REPLAY_MAX = 8;
const REPLAY_BACKOFF_MS = 10;

let lastTimestamp = 0;

/** Distinct increasing µs timestamps across every connection of the process (replies are matched by them). */
function nextTimestamp(): number {
  const now = Date.now() * 1000;
  lastTimestamp = now > lastTimestamp ? now : lastTimestamp + 1;
  return lastTimestamp;
}

const LEAN_ASSEMBLY_RETAIN_BYTES = 8 * 1024 * 1024;
const LEAN_READ_BUFFER_BYTES = 256 * 1024;

export class LeanConnection {
  readonly address: string;
  readonly #socket: Socket;
  /**
   * A poll reply of 1,000 × 1 KiB messages is ~1.07 MB, just above the decoder's default 1 MiB
   * retention: every reply then got fresh assembly buffers (two, with a regrowth copy) and left
   * them as garbage, which was the lean consumer's largest cost (its GC and `#reserve`, ~45 % of
   * its CPU while consuming). Retaining up to 8 MiB keeps the two alternating buffers.
   */
  readonly #decoder = new FrameDecoder({ assemblyRetainBytes: LEAN_ASSEMBLY_RETAIN_BYTES });
  readonly #pending = new Map<number, Pending>();
  /** Where the socket's reads go (set by `open`: the login's decoder, then `#onData`). */
  #sinkTo: (sink: (chunk: Uint8Array) => void) => void = () => {};
  #client = 0n;
  #session = 0n;
  #request = 0n;
  #closed: Error | null = null;
  readonly #requestTimeoutMs: number;

  private constructor(address: string, socket: Socket, requestTimeoutMs: number) {
    this.address = address;
    this.#socket = socket;
    this.#requestTimeoutMs = requestTimeoutMs;
  }

  /** Dials `host:port` and logs in; rejects on refusal, bad credentials or timeout. */
  static async open(address: string, credentials: LeanCredentials, options: { connectTimeoutMs?: number; requestTimeoutMs?: number } = {}): Promise<LeanConnection> {
    const { host, port } = splitAddress(address);
    // Reads land in one reused buffer (`onread`) instead of a fresh 64 KiB Buffer per read: at
    // ~300 MB consumed per run those chunks were most of the lean consumer's remaining garbage.
    // Safe because every chunk is handled before the next read: frames are decoded in the
    // callback, replies copied (or, for polls, walked in the microtasks that run before the next
    // read callback), and the decoder copies partial frames into its own assembly buffers.
    let sink: (chunk: Uint8Array) => void = () => {};
    const onread = {
      buffer: Buffer.allocUnsafe(LEAN_READ_BUFFER_BYTES),
      callback: (n: number, buffer: Uint8Array): boolean => {
        sink(buffer.subarray(0, n));
        return true;
      },
    };
    // `onread` is read by the Socket constructor (net.connect passes it there); @types/node only
    // declares it on connect's options.
    const socket = new Socket({ onread } as SocketConstructorOpts);
    socket.setNoDelay(true);
    const connection = new LeanConnection(address, socket, options.requestTimeoutMs ?? 30_000);
    connection.#sinkTo = (next) => { sink = next; };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new LeanConnectionLost(address, 'connect timeout'));
      }, options.connectTimeoutMs ?? 5000);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(new LeanConnectionLost(address, error.message));
      });
      socket.connect(port, host, () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve();
      });
    });
    // Installed before the login so a reset during it is an error, never an unhandled event.
    socket.on('error', (error) => connection.#fail(new LeanConnectionLost(address, error.message)));
    socket.on('close', () => connection.#fail(new LeanConnectionLost(address, 'closed')));
    await connection.#register(credentials);
    sink = (chunk) => connection.#onData(chunk);
    return connection;
  }

  /** Login-register through the SDK's sans-IO session (40 with a password). */
  async #register(credentials: LeanCredentials): Promise<void> {
    const session = new Session({ random: nodeRandom, clock: () => BigInt(nextTimestamp()) });
    session.register({ kind: 'password', username: credentials.username, password: credentials.password });
    const decoder = new FrameDecoder();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new LeanConnectionLost(this.address, 'login timeout')), 10_000);
      const finish = (error: Error | null): void => {
        clearTimeout(timer);
        this.#sinkTo(() => {});
        this.#socket.removeListener('close', onClose);
        if (error === null) resolve();
        else {
          this.#socket.destroy();
          reject(error);
        }
      };
      const onData = (chunk: Uint8Array): void => {
        decoder.push(chunk);
        for (let frame = decoder.pull(); frame !== null; frame = decoder.pull()) {
          for (const event of session.receive(frame)) {
            if (event.kind === 'bound') finish(null);
            else if (event.kind === 'failed') finish(new Error(`login to ${this.address} failed: ${event.error.message}`));
            else if (event.kind === 'evicted') finish(new Error(`login to ${this.address}: evicted (${event.error.message})`));
          }
        }
      };
      const onClose = (): void => finish(new LeanConnectionLost(this.address, 'closed during login'));
      this.#sinkTo(onData);
      this.#socket.once('close', onClose);
      for (const { frame } of session.drain().frames) this.#socket.write(frame);
    });
    this.#client = session.clientId;
    this.#session = session.epoch;
    // Partition-plane and non-replicated requests carry the current counter without advancing it.
    this.#request = session.counter;
  }

  get open(): boolean {
    return this.#closed === null;
  }

  get inFlight(): number {
    return this.#pending.size;
  }

  /** Sends the frame `build` returns for these header fields; resolves with the reply payload. */
  request(build: (fields: RequestFields) => Uint8Array, borrow = false): Promise<Uint8Array> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    const timestamp = nextTimestamp();
    const frame = build({ client: this.#client, session: this.#session, request: this.#request, timestamp: BigInt(timestamp) });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.#pending.delete(timestamp)) reject(new LeanConnectionLost(this.address, `no reply within ${this.#requestTimeoutMs} ms`));
      }, this.#requestTimeoutMs);
      this.#pending.set(timestamp, { frame, resolve, reject, timer, borrow, replays: 0 });
      this.#socket.write(frame);
    });
  }

  /**
   * POLL_MESSAGES (100) from `offset`, as a consumer with id 0, without auto-commit. The payload
   * is a VIEW of the socket chunk or the decoder's assembly buffer, valid until the decoder's
   * next push (the next socket read): read it before awaiting anything, as LeanConsumer does (a
   * 1 MB copy per reply was the rest of the lean consumer's garbage).
   */
  poll(streamId: number, topicId: number, partitionId: number, offset: number, count: number): Promise<Uint8Array> {
    const body = pollMessagesCommand.encodeRequest({
      consumer: toConsumer(0),
      streamId: { kind: 'numeric', value: streamId },
      topicId: { kind: 'numeric', value: topicId },
      partitionId,
      strategy: toPollingStrategy({ offset }),
      count,
      autoCommit: false,
    });
    return this.request((fields) => encodeRequestFrame({
      client: fields.client, session: fields.session, request: fields.request, timestamp: fields.timestamp,
      operation: Operation.NonReplicated, nonReplicatedCode: CommandCode.PollMessages,
    }, body), true);
  }

  #onData(chunk: Uint8Array): void {
    if (!this.#decoder.push(chunk)) return;
    for (let frame = this.#decoder.pull(); frame !== null; frame = this.#decoder.pull()) this.#onFrame(frame);
    if (this.#decoder.error !== null) {
      this.#fail(new LeanConnectionLost(this.address, `undecodable stream: ${this.#decoder.error}`));
      this.#socket.destroy();
    }
  }

  #onFrame(frame: Uint8Array): void {
    const outcome = classifyServerFrame(frame);
    if (outcome.outcome === 'error' && outcome.source === 'eviction') {
      this.#fail(new LeanConnectionLost(this.address, `evicted (error ${outcome.errorCode})`));
      this.#socket.destroy();
      return;
    }
    if (frame.length < 256) return;
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const timestamp = Number(view.getBigUint64(REPLY_HEADER.timestamp.offset, true));
    const pending = this.#pending.get(timestamp);
    if (pending === undefined) return;
    if (outcome.outcome === 'ok') {
      this.#settle(timestamp, pending);
      // A view into the socket chunk or the decoder's assembly buffer: copied, unless borrowed (poll).
      pending.resolve(pending.borrow ? outcome.payload : outcome.payload.slice());
      return;
    }
    if (outcome.errorCode === ErrorCode.TransientNotCommitted && pending.replays < REPLAY_MAX) {
      pending.replays++;
      setTimeout(() => {
        if (this.#closed === null && this.#pending.get(timestamp) === pending) this.#socket.write(pending.frame);
      }, REPLAY_BACKOFF_MS * pending.replays);
      return;
    }
    this.#settle(timestamp, pending);
    pending.reject(new LeanReplyError(outcome.errorCode, this.address));
  }

  #settle(timestamp: number, pending: Pending): void {
    clearTimeout(pending.timer);
    this.#pending.delete(timestamp);
  }

  #fail(error: Error): void {
    if (this.#closed !== null) return;
    this.#closed = error;
    for (const [timestamp, pending] of this.#pending) {
      this.#settle(timestamp, pending);
      pending.reject(error);
    }
  }

  close(): Promise<void> {
    this.#fail(new LeanConnectionLost(this.address, 'closed by the bench'));
    return new Promise((resolve) => {
      if (this.#socket.destroyed) {
        resolve();
        return;
      }
      this.#socket.once('close', () => resolve());
      this.#socket.end();
      setTimeout(() => this.#socket.destroy(), 1000).unref();
    });
  }
}

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  return { host, port: Number(address.slice(at + 1)) };
}
