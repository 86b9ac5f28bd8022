/**
 * One client connection on the shard that accepted it: bytes in → frames → the shard's request
 * handler; replies out, with every limit a slow or hostile client could otherwise abuse.
 *
 * ```
 *  socket 'data' ──▶ FrameDecoder (bounded: one partial frame, ≤ frame_size_max)
 *                      │ pull while: inFlight < requests_in_flight_max, no barrier, not held
 *                      ▼
 *                    handler.onFrame(connection, frame)  ── synchronous answer → send()
 *                      │                                  └ async (ring, pool) → inFlight += 1
 *                      ▼                                         … reply → send(), requestDone()
 *  when pulling stops with frames left, the socket is paused and the frames stay in the decoder
 *  (it holds one chunk at most); requestDone() / barrier release resume the pump.
 * ```
 *
 * Metadata fence: a frame pulled while the shard's metadata copy is behind the op the metadata
 * worker last published (`handler.metadataFence`) is parked, with that op, and the connection
 * reads nothing more until the copy reaches it (`handler.awaitMetadata` pumps it then). Replies
 * to metadata writes leave the metadata worker only after their op is published, so a client
 * that saw one (on any connection, any shard) finds its effect in whatever it sends next: a login
 * right after CreateUser, a GetStream right after CreateStream. The wait is the ring's latency
 * between two threads; past `METADATA_FENCE_WAIT_MS` (a stuck ring) the frame runs anyway.
 *
 * Limits (config `[tcp]`): frame size (a larger `size` is a stream error: the connection closes
 * before the body is read), requests in flight, unsent reply bytes (reading stops above
 * `write_buffer_bytes_max`; above it plus one maximum frame the connection closes), and three
 * clocks checked by the shard's sweep (no timer per connection): a partial frame older than
 * `frame_read_timeout` (slow drip), no write progress for `write_stall_timeout` while replies
 * are queued (slow reader), and `idle_timeout` (when non-zero).
 */
import type { Socket } from 'node:net';
import { AckedFences, type BoundSession, type GatewayConnection } from '@shoal/gateway';
import { FrameDecoder } from '@shoal/protocol';
import { RequestTiming, type RequestTimingSink } from './request-timing.js';

export interface ConnectionLimits {
  readonly frameSizeMax: number;
  readonly requestsInFlightMax: number;
  readonly writeBufferBytesMax: number;
  /** 0: never. */
  readonly idleTimeoutMs: number;
  readonly frameReadTimeoutMs: number;
  readonly writeStallTimeoutMs: number;
}

export type { BoundSession };

export interface ConnectionHandler {
  /** One whole request frame (a view valid until this call returns). */
  onFrame(connection: ClientConnection, frame: Uint8Array): void;
  /** The socket is gone (after every in-flight reply was given up). */
  onClose(connection: ClientConnection, reason: string): void;
  /** Shard-wide back-pressure: true while the shard's outbound rings are backed up. */
  readonly holdReads: () => boolean;
  /** Where request end-to-end times go (none: not measured). */
  readonly timing?: RequestTimingSink;
  /** The op this shard's metadata copy must reach before a frame may run now; null when it has. */
  metadataFence(): bigint | null;
  /** True once the copy reached `fence`. */
  metadataReached(fence: bigint): boolean;
  /** `connection` parked a frame: pump it when the copy moves (or the sweep gives up waiting). */
  awaitMetadata(connection: ClientConnection): void;
  /** A parked frame waited `METADATA_FENCE_WAIT_MS` and runs anyway (worth a warning). */
  metadataWaitExpired(connection: ClientConnection, fence: bigint): void;
}

/** A parked frame runs after this long even if the copy is still behind (a stuck ring; logged). */
export const METADATA_FENCE_WAIT_MS = 2000;

export interface ConnectionCounters {
  bytesIn: number;
  bytesOut: number;
}

/**
 * Assembly buffers up to this size are reused from frame to frame (a producer's 1 MB batches are
 * assembled without allocating), and dropped by the sweep once the connection has been quiet for
 * `ASSEMBLY_IDLE_MS`: a busy large-batch producer holds at most 2 × 2 MiB, an idle connection
 * nothing. (A 64 KiB cap measured a 1 MB frame costing three allocations and 1.3 MB of regrowth
 * copies, and the garbage kept V8's GC threads at half a core.)
 */
const ASSEMBLY_RETAIN_BYTES = 2 * 1024 * 1024;
const ASSEMBLY_IDLE_MS = 1000;

export class ClientConnection implements GatewayConnection {
  readonly token: number;
  readonly slot: number;
  /** The u32 id GetClient addresses (node-unique). */
  readonly clientId: number;
  readonly address: string;
  readonly socket: Socket;
  session: BoundSession | null = null;
  /** Requests read and not yet answered. */
  inFlight = 0;
  /** Round-robin over a consumer group member's partitions when it polls without a partition id. */
  groupCounter = 0;
  /** The command code of the frame being handled (set by the handler; request latency by command). */
  command = 0;
  closed = false;
  /** Read-your-writes: per partition group, the op of the latest committed reply received. */
  readonly #acked = new AckedFences();
  #decoder: FrameDecoder;
  readonly #limits: ConnectionLimits;
  readonly #handler: ConnectionHandler;
  readonly #counters: ConnectionCounters;
  /** A login or logout is pending: later frames wait in the decoder. */
  #barrier = false;
  #paused = false;
  #lastActivityMs: number;
  /** When the current partial frame started arriving; -1 when none. */
  #partialSinceMs = -1;
  #stallSinceMs = -1;
  #bytesWrittenAtCheck = 0;
  #closeReason = '';
  /** Corked until the end of the current turn (see `#corkForTurn`). */
  #corked = false;
  readonly #timing: RequestTiming | null;
  #channel = false;
  /** A frame pulled while the metadata copy was behind, copied, and the op it waits for. */
  #parked: Uint8Array | null = null;
  #parkedFence = 0n;
  #parkedSinceMs = -1;
  /** Inside `pump` (see there). */
  #pumping = false;

  constructor(socket: Socket, ids: { token: number; slot: number; clientId: number }, limits: ConnectionLimits,
    handler: ConnectionHandler, counters: ConnectionCounters, nowMs: number) {
    this.socket = socket;
    this.token = ids.token;
    this.slot = ids.slot;
    this.clientId = ids.clientId;
    this.address = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.#limits = limits;
    this.#handler = handler;
    this.#counters = counters;
    this.#lastActivityMs = nowMs;
    this.#decoder = new FrameDecoder({ frameSizeMax: limits.frameSizeMax, assemblyRetainBytes: ASSEMBLY_RETAIN_BYTES });
    this.#timing = handler.timing === undefined ? null : new RequestTiming(handler.timing);
  }

  start(): void {
    const socket = this.socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('drain', () => this.pump());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#onClose());
  }

  /** Writes a whole frame. `frame` must stay unchanged afterwards (copy ring views first). */
  send(frame: Uint8Array): void {
    if (this.closed) return;
    this.#corkForTurn();
    this.#counters.bytesOut += frame.length;
    if (!this.#channel) this.#timing?.replied(frame, this.command);
    this.socket.write(frame);
    this.#checkOverflow();
  }

  /**
   * Writes a frame given as parts (header, then body pieces), in the turn's one write. `written`
   * runs from the last part's write callback: Node calls it once the socket is done with the
   * bytes (flushed to the kernel, or the write failed or was dropped on a destroyed socket), so
   * the parts' buffers can be reused (a poll's read buffers).
   */
  sendParts(parts: readonly Uint8Array[], written?: () => void): void {
    if (this.closed || parts.length === 0) {
      written?.();
      return;
    }
    this.#corkForTurn();
    if (!this.#channel) this.#timing?.replied(parts[0] as Uint8Array, this.command);
    const last = parts.length - 1;
    for (let i = 0; i < last; i++) {
      const part = parts[i] as Uint8Array;
      this.#counters.bytesOut += part.length;
      this.socket.write(part);
    }
    const tail = parts[last] as Uint8Array;
    this.#counters.bytesOut += tail.length;
    if (written === undefined) this.socket.write(tail);
    else this.socket.write(tail, () => written());
    this.#checkOverflow();
  }

  /**
   * Replies produced in one turn (a ring read or a socket read can commit hundreds of requests)
   * leave in one writev at the end of the turn instead of one write syscall each: with 256
   * single-message requests in flight, per-reply writes were 6 % of the primary's time.
   */
  #corkForTurn(): void {
    if (this.#corked) return;
    this.#corked = true;
    this.socket.cork();
    queueMicrotask(this.#uncork);
  }

  readonly #uncork = (): void => {
    this.#corked = false;
    if (!this.socket.destroyed) this.socket.uncork();
  };

  /** The read-your-writes fence of `group` (0: no write of this connection to wait for). */
  ackedOp(group: bigint): bigint {
    return this.#acked.of(group);
  }

  /** A committed reply for `group` at `op` reached this connection. */
  noteAcked(group: bigint, op: bigint): void {
    this.#acked.note(group, op);
  }

  /**
   * This connection turned out to be another node's forwarding channel (its first frame was a
   * channel Hello, docs/cluster.md): its frames may be one channel header larger than a client
   * frame. Called while the decoder holds nothing past the Hello (the dialer waits for the
   * Challenge before it sends again).
   */
  becomeChannel(frameSizeMax: number): void {
    this.#decoder = new FrameDecoder({ frameSizeMax, assemblyRetainBytes: ASSEMBLY_RETAIN_BYTES });
    this.#channel = true;
  }

  /** A forwarding channel (see `becomeChannel`): not a client session, not bound by in-flight limits. */
  get channel(): boolean {
    return this.#channel;
  }

  /** When the connection last sent bytes (ms since the epoch). */
  get lastActivityMs(): number {
    return this.#lastActivityMs;
  }

  /** One asynchronous request finished (answered or not): free its in-flight slot. */
  requestDone(): void {
    if (this.inFlight > 0) this.inFlight -= 1;
    if (this.inFlight === 0) this.#timing?.settle();
    this.pump();
  }

  /** A login/logout in progress: frames after it wait until `release()`. */
  hold(): void {
    this.#barrier = true;
  }

  release(): void {
    this.#barrier = false;
    this.pump();
  }

  /** Graceful close: queued replies are written, then FIN (shutdown drain). */
  end(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.#closeReason = reason;
    this.socket.end();
    this.socket.setTimeout(2000, () => this.socket.destroy());
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.#closeReason = reason;
    // A frame written this turn (an eviction) goes out before the reset, as it did uncorked.
    if (this.#corked) this.#uncork();
    this.socket.destroy();
  }

  /** The shard's periodic check of the three clocks. Returns a reason when it closed the connection. */
  sweep(nowMs: number): string | null {
    if (this.closed) return null;
    const limits = this.#limits;
    if (this.#parked !== null && nowMs - this.#parkedSinceMs > METADATA_FENCE_WAIT_MS) {
      this.#handler.metadataWaitExpired(this, this.#parkedFence);
      this.#parkedSinceMs = Number.NEGATIVE_INFINITY;
      this.pump();
      if (this.closed) return null;
    }
    // The slow-frame clock runs only while WE read: a connection we paused (back-pressure) is not slow.
    if (this.#partialSinceMs >= 0 && !this.#paused && nowMs - this.#partialSinceMs > limits.frameReadTimeoutMs) {
      this.close('frame_read_timeout');
      return 'frame_read_timeout';
    }
    if (limits.idleTimeoutMs > 0 && this.inFlight === 0 && nowMs - this.#lastActivityMs > limits.idleTimeoutMs) {
      this.close('idle_timeout');
      return 'idle_timeout';
    }
    // A quiet connection gives its retained assembly buffers back (a fresh decoder holds none).
    const decoder = this.#decoder;
    if (decoder.retainedBytes > 0 && decoder.bufferedBytes === 0 && decoder.pendingBytes === 0 && nowMs - this.#lastActivityMs > ASSEMBLY_IDLE_MS) {
      this.#decoder = new FrameDecoder({ frameSizeMax: limits.frameSizeMax, assemblyRetainBytes: ASSEMBLY_RETAIN_BYTES });
    }
    if (this.socket.writableLength > 0) {
      const written = this.socket.bytesWritten;
      if (written !== this.#bytesWrittenAtCheck || this.#stallSinceMs < 0) {
        this.#bytesWrittenAtCheck = written;
        this.#stallSinceMs = nowMs;
      } else if (nowMs - this.#stallSinceMs > limits.writeStallTimeoutMs) {
        this.close('write_stall_timeout');
        return 'write_stall_timeout';
      }
    } else {
      this.#stallSinceMs = -1;
    }
    return null;
  }

  /** Pulls frames while the limits allow, then pauses or resumes the socket. */
  pump(): void {
    // Not re-entrant: a frame answered synchronously (a poll of this shard's partition) frees its
    // slot inside the loop below, which re-checks every limit after each frame anyway. A nested
    // pass could pull past a frame it parked and run frames out of order.
    if (this.closed || this.#pumping) return;
    this.#pumping = true;
    try {
      this.#pull();
    } finally {
      this.#pumping = false;
    }
    if (this.closed) return;
    const decoder = this.#decoder;
    if (decoder.error !== null) {
      this.close(decoder.error);
      return;
    }
    this.#partialSinceMs = decoder.bufferedBytes > 0 ? (this.#partialSinceMs >= 0 ? this.#partialSinceMs : this.#lastActivityMs) : -1;
    // Frames may remain in the decoder only while we are holding back; then the socket waits too.
    const hold = this.#parked !== null || !this.#mayPull() || decoder.pendingBytes > 0;
    if (hold && !this.#paused) {
      this.#paused = true;
      this.socket.pause();
    } else if (!hold && this.#paused) {
      this.#paused = false;
      // The partial frame's clock restarts: its sender was waiting for us, not the other way round.
      if (this.#partialSinceMs >= 0) this.#partialSinceMs = Date.now();
      this.socket.resume();
    }
  }

  /** Runs the parked frame if it may run, then frames from the decoder until one parks or a limit stops. */
  #pull(): void {
    if (this.#parked !== null && !this.#runParked()) return;
    while (this.#parked === null && this.#mayPull()) {
      // Re-read each time: the first frame may turn this connection into a channel (new decoder).
      const frame = this.#decoder.pull();
      if (frame === null) return;
      // A forwarding channel's requests carry their own metadata fence (partition-host.ts).
      const fence = this.#channel ? null : this.#handler.metadataFence();
      if (fence !== null) {
        this.#park(frame, fence);
        return;
      }
      this.#handle(frame);
      if (this.closed) return;
    }
  }

  /** Runs the parked frame once the copy reached its fence (or the wait expired); false while it waits. */
  #runParked(): boolean {
    const frame = this.#parked as Uint8Array;
    if (this.#parkedSinceMs !== Number.NEGATIVE_INFINITY && !this.#handler.metadataReached(this.#parkedFence)) {
      this.#handler.awaitMetadata(this);
      return false;
    }
    this.#parked = null;
    this.#parkedSinceMs = -1;
    this.#handle(frame);
    return !this.closed;
  }

  #park(frame: Uint8Array, fence: bigint): void {
    this.#parked = frame.slice();
    this.#parkedFence = fence;
    this.#parkedSinceMs = Date.now();
    this.#handler.awaitMetadata(this);
  }

  #handle(frame: Uint8Array): void {
    // A forwarding channel carries other nodes' requests: their node times them end to end.
    const timing = this.#channel ? null : this.#timing;
    if (timing === null) {
      this.#handler.onFrame(this, frame);
      return;
    }
    const inFlight = this.inFlight;
    this.command = 0;
    timing.begin(frame);
    this.#handler.onFrame(this, frame);
    timing.end(this.command, this.inFlight > inFlight, this.inFlight);
  }

  #mayPull(): boolean {
    return !this.#barrier
      && (this.#channel || this.inFlight < this.#limits.requestsInFlightMax)
      && this.socket.writableLength <= this.#limits.writeBufferBytesMax
      && !this.#handler.holdReads();
  }

  #onData(chunk: Buffer): void {
    this.#counters.bytesIn += chunk.length;
    this.#lastActivityMs = Date.now();
    if (!this.#decoder.push(chunk)) {
      this.close(this.#decoder.error ?? 'stream_error');
      return;
    }
    this.pump();
  }

  #checkOverflow(): void {
    if (this.socket.writableLength > this.#limits.writeBufferBytesMax + this.#limits.frameSizeMax) this.close('write_overflow');
  }

  #onClose(): void {
    this.closed = true;
    this.#handler.onClose(this, this.#closeReason === '' ? 'peer_closed' : this.#closeReason);
  }
}
