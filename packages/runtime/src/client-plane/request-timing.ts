/**
 * End-to-end time of one connection's requests on the shard that read them: from the frame
 * leaving the decoder to its reply handed to the socket (`shoal_request_duration_seconds`).
 *
 * ```
 *  pump: begin(frame) ─▶ handler.onFrame ─▶ end(command, grew, inFlight)
 *          │ a reply written during onFrame that echoes this request → observed at once
 *          │ no reply yet, the request went elsewhere (inFlight grew) → parked
 *          └ no reply and nothing in flight (EpochAhead: nothing is ever answered) → not observed
 *  send(reply): the parked request whose (operation, timestamp) the reply echoes → observed
 * ```
 *
 * Replies are matched by the echoed `operation` and `timestamp` (what a client correlates by,
 * framing.mdx), oldest first, so replies overtaking each other (two partitions, a metadata write
 * next to a produce) are timed against their own requests. An eviction echoes neither: its
 * request is dropped unmeasured when the connection has nothing left in flight (`settle`), or
 * when more requests are parked than the connection has in flight (the oldest goes first), so a
 * connection that never drains keeps at most its in-flight count. Typed arrays, allocated on the
 * first parked request, compacted (answered slots dropped) or doubled when full: no per-request
 * allocation.
 */
import { performance } from 'node:perf_hooks';
import { ClientCommand, COMMAND_OFFSET, FRAME_HEADER_SIZE, REPLY_HEADER, REQUEST_HEADER } from '@shoal/protocol';

/** Where a request's timing goes (the shard's ThreadMetrics, by command code). */
export interface RequestTimingSink {
  observe(command: number, elapsedMs: number): void;
}

const REQUEST_OPERATION_AT = REQUEST_HEADER.operation.offset;
const REQUEST_TIMESTAMP_AT = REQUEST_HEADER.timestamp.offset;
const REPLY_OPERATION_AT = REPLY_HEADER.operation.offset;
const REPLY_TIMESTAMP_AT = REPLY_HEADER.timestamp.offset;
const INITIAL_SLOTS = 8;

function u32At(frame: Uint8Array, at: number): number {
  return ((frame[at] as number) | ((frame[at + 1] as number) << 8) | ((frame[at + 2] as number) << 16) | ((frame[at + 3] as number) << 24)) >>> 0;
}

export class RequestTiming {
  readonly #sink: RequestTimingSink;
  // The request being handled (between begin and end).
  #active = false;
  #answered = false;
  #startMs = 0;
  #operation = 0;
  #tsLo = 0;
  #tsHi = 0;
  // Parked requests, oldest first in [#head, #tail); a settled one has code -1.
  #start = new Float64Array(0);
  #code = new Int32Array(0);
  #op = new Uint8Array(0);
  #lo = new Uint32Array(0);
  #hi = new Uint32Array(0);
  #head = 0;
  #tail = 0;
  /** Parked and not yet answered. */
  #live = 0;

  constructor(sink: RequestTimingSink) {
    this.#sink = sink;
  }

  /** Parked requests not yet answered. */
  get parked(): number {
    return this.#live;
  }

  begin(frame: Uint8Array): void {
    this.#active = true;
    this.#answered = false;
    this.#startMs = performance.now();
    this.#operation = frame[REQUEST_OPERATION_AT] as number;
    this.#tsLo = u32At(frame, REQUEST_TIMESTAMP_AT);
    this.#tsHi = u32At(frame, REQUEST_TIMESTAMP_AT + 4);
  }

  /**
   * After onFrame: `pending` when the request is still in flight (went to another thread or the
   * pool); `inFlight` is the connection's count, which bounds what may stay parked.
   */
  end(command: number, pending: boolean, inFlight: number): void {
    this.#active = false;
    if (this.#answered || !pending) return;
    this.#park(command);
    while (this.#live > inFlight) this.#dropOldest();
  }

  /**
   * A frame written to the connection (a whole reply, or the header part of one); `command` is
   * the code of the request being handled, if one is.
   */
  replied(frame: Uint8Array, command: number): void {
    if (frame.length < FRAME_HEADER_SIZE || frame[COMMAND_OFFSET] !== ClientCommand.Reply) return;
    const operation = frame[REPLY_OPERATION_AT] as number;
    const lo = u32At(frame, REPLY_TIMESTAMP_AT);
    const hi = u32At(frame, REPLY_TIMESTAMP_AT + 4);
    if (this.#active && !this.#answered && operation === this.#operation && lo === this.#tsLo && hi === this.#tsHi) {
      this.#answered = true;
      this.#sink.observe(command, performance.now() - this.#startMs);
      return;
    }
    for (let i = this.#head; i < this.#tail; i++) {
      const code = this.#code[i] as number;
      if (code < 0 || this.#op[i] !== operation || this.#lo[i] !== lo || this.#hi[i] !== hi) continue;
      this.#code[i] = -1;
      this.#live -= 1;
      this.#sink.observe(code, performance.now() - (this.#start[i] as number));
      this.#skipAnswered();
      return;
    }
  }

  /** Nothing is in flight on the connection: whatever is still parked was never answered. */
  settle(): void {
    this.#head = 0;
    this.#tail = 0;
    this.#live = 0;
  }

  #dropOldest(): void {
    this.#code[this.#head] = -1;
    this.#live -= 1;
    this.#skipAnswered();
  }

  #skipAnswered(): void {
    while (this.#head < this.#tail && (this.#code[this.#head] as number) < 0) this.#head++;
    if (this.#head === this.#tail) {
      this.#head = 0;
      this.#tail = 0;
    }
  }

  #park(command: number): void {
    if (this.#tail === this.#start.length) this.#makeRoom();
    const i = this.#tail++;
    this.#start[i] = this.#startMs;
    this.#code[i] = command;
    this.#op[i] = this.#operation;
    this.#lo[i] = this.#tsLo;
    this.#hi[i] = this.#tsHi;
    this.#live += 1;
  }

  /** Moves the unanswered entries to the front (in order), doubling the arrays when over half are unanswered. */
  #makeRoom(): void {
    const capacity = this.#start.length;
    const size = this.#live * 2 >= capacity ? Math.max(INITIAL_SLOTS, capacity * 2) : capacity;
    const start = size === capacity ? this.#start : new Float64Array(size);
    const code = size === capacity ? this.#code : new Int32Array(size);
    const op = size === capacity ? this.#op : new Uint8Array(size);
    const lo = size === capacity ? this.#lo : new Uint32Array(size);
    const hi = size === capacity ? this.#hi : new Uint32Array(size);
    let to = 0;
    // Forward copy: `to` never passes the slot being read, so compacting in place is safe.
    for (let from = this.#head; from < this.#tail; from++) {
      if ((this.#code[from] as number) < 0) continue;
      start[to] = this.#start[from] as number;
      code[to] = this.#code[from] as number;
      op[to] = this.#op[from] as number;
      lo[to] = this.#lo[from] as number;
      hi[to] = this.#hi[from] as number;
      to++;
    }
    this.#start = start;
    this.#code = code;
    this.#op = op;
    this.#lo = lo;
    this.#hi = hi;
    this.#head = 0;
    this.#tail = to;
  }
}
