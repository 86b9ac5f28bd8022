/**
 * A client connection without a transport: frames are pushed in whole, replies leave through a
 * callback. It paces its frames as the runtime's socket connection does (one frame at a time
 * into the handler, none while a login or logout holds the barrier or while `inFlightMax`
 * requests are unanswered), so the simulator's clients meet the gateway under the same rules as
 * TCP clients. Frames it holds back wait in an unbounded queue: its pusher (a simulated client)
 * bounds itself.
 */
import { concatBytes } from '@shoal/stdx';
import { AckedFences } from './acked-fences.js';
import type { BoundSession, GatewayConnection } from './connection.js';

export interface MemoryConnectionOptions {
  readonly token: number;
  readonly clientId: number;
  readonly address: string;
  readonly inFlightMax: number;
  /** The handler of each frame (the gateway's onFrame). */
  readonly onFrame: (connection: MemoryConnection, frame: Uint8Array) => void;
  /** A frame for the peer. */
  readonly send: (frame: Uint8Array) => void;
  /** The connection closed (by `close`, from either side). */
  readonly onClose: (connection: MemoryConnection, reason: string) => void;
  /** The host's clock for `lastActivityMs`. */
  readonly nowMs: () => number;
}

export class MemoryConnection implements GatewayConnection {
  readonly token: number;
  readonly clientId: number;
  readonly address: string;
  session: BoundSession | null = null;
  inFlight = 0;
  groupCounter = 0;
  command = 0;
  closed = false;
  lastActivityMs: number;
  readonly #options: MemoryConnectionOptions;
  readonly #queue: Uint8Array[] = [];
  readonly #fences = new AckedFences();
  #barrier = false;
  #pumping = false;

  constructor(options: MemoryConnectionOptions) {
    this.#options = options;
    this.token = options.token;
    this.clientId = options.clientId;
    this.address = options.address;
    this.lastActivityMs = options.nowMs();
  }

  /** Frames held back (barrier or in-flight limit). */
  get queued(): number {
    return this.#queue.length;
  }

  /** A whole frame from the peer. */
  push(frame: Uint8Array): void {
    if (this.closed) return;
    this.lastActivityMs = this.#options.nowMs();
    this.#queue.push(frame);
    this.pump();
  }

  send(frame: Uint8Array): void {
    if (!this.closed) this.#options.send(frame);
  }

  sendParts(parts: readonly Uint8Array[], written?: () => void): void {
    if (!this.closed) this.#options.send(concatBytes(parts));
    written?.();
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.#queue.length = 0;
    this.#options.onClose(this, reason);
  }

  hold(): void {
    this.#barrier = true;
  }

  release(): void {
    this.#barrier = false;
    this.pump();
  }

  requestDone(): void {
    if (this.inFlight > 0) this.inFlight -= 1;
    this.pump();
  }

  ackedOp(group: bigint): bigint {
    return this.#fences.of(group);
  }

  noteAcked(group: bigint, op: bigint): void {
    this.#fences.note(group, op);
  }

  /** Feeds queued frames to the handler while the barrier and the in-flight limit allow. */
  pump(): void {
    // A handler that answers at once calls back into pump (requestDone, release): the outer loop
    // carries on, so frames are handled in order and the stack stays flat.
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (!this.closed && !this.#barrier && this.inFlight < this.#options.inFlightMax && this.#queue.length > 0) {
        this.#options.onFrame(this, this.#queue.shift() as Uint8Array);
      }
    } finally {
      this.#pumping = false;
    }
  }
}
