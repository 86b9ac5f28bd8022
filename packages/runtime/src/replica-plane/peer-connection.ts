/**
 * One established replica link, after the handshake: validated frames in, a bounded queue out.
 *
 * Inbound (replication-semantics.md §1.2):
 *
 *   socket chunk ─▶ FrameDecoder (step 1: 256 <= size <= max_message_size, command <= 29)
 *                     │ stream error ─▶ the connection is closed (frames before it are delivered)
 *                     ▼
 *                  validateHeader(frame, { messageSizeMax, replicaCount })   steps 2..7
 *                     │ reason ─▶ that frame is dropped, counted and logged; the stream goes on
 *                     ▼           (client-bound 8/13, reserved 0..4, handshake 14..16, bad bit
 *                  onFrames(peer, frames)          patterns, seals, validate(), suffix, prepares)
 *
 * This is the one validation of a frame on this node: the consensus core is told so
 * (`FrameIngress.validated`) and does not repeat it. Frames handed to `onFrames` are views into
 * the socket chunk or the decoder's assembly buffer, valid only during the callback (copy them,
 * e.g. into a ring, before returning), except those marked `owned`: a frame of at least
 * `LINK_HAND_OFF_BYTES` that straddled socket reads was assembled into a buffer of its own,
 * which the receiver keeps (a backup's journal adopts a prepare without copying it).
 *
 * Outbound (§10.4): `send(frame)` enqueues on a queue of `peer_queue_capacity` frames; a full
 * queue drops the frame and counts it (VSR retransmits; callers learn it from the result). The
 * writer takes up to `max_batch` frames per write, corked into one writev, and waits for 'drain'
 * while the socket is backed up; the queue is what absorbs a slow peer, so memory is bounded by
 * the queue plus one batch in the socket.
 *
 *   send ─▶ [f][f][f][ ][ ] ─flush (≤ max_batch, cork/uncork = one writev)─▶ socket ─▶ kernel
 *             queue (≤ capacity; overflow dropped)          ▲ 'drain' resumes flushing
 *
 * A sent frame is not copied: do not modify it after `send`.
 */
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { BoundedQueue } from '@shoal/stdx';
import { FrameDecoder, validateHeader, type FrameStreamError } from '@shoal/protocol';
import type { FrameIngress } from '@shoal/consensus';
import { SILENT_LOG, type ReplicaPlaneLog } from './log.js';

/** Why a connection ended. */
export type PeerCloseReason =
  /** §1.2 step 1 failed: the stream cannot be trusted any more. */
  | FrameStreamError
  | 'peer_closed'
  | 'socket_error'
  /** `close()` / `destroy()` by the owner (plane stopping, duplicate, runtime request). */
  | 'local_close';

export type SendOutcome = 'queued' | 'queue_full' | 'closed';

/** A validated frame off a link: `ingress` says it was validated, and whether its buffer is handed over. */
export interface LinkFrame {
  readonly bytes: Uint8Array;
  readonly ingress: FrameIngress;
}

/** Validated by the link; a view the receiver must copy to keep. */
export const LINK_VIEW: FrameIngress = Object.freeze({ validated: true, owned: false });
/** Validated by the link; a buffer of its own that the receiver keeps. */
export const LINK_OWNED: FrameIngress = Object.freeze({ validated: true, owned: true });

export interface PeerConnectionOptions {
  readonly peer: number;
  /** Connected TCP socket (plain, adopted from a hand-off, or TLS). */
  readonly socket: Socket;
  /** Bytes already read past the handshake; processed before anything else from the socket. */
  readonly leftover?: Uint8Array;
  /** Frames whose `replica` is >= this are dropped (`replica_out_of_range`). */
  readonly replicaCount: number;
  /** `message_bus.max_message_size` (default 64 MiB). */
  readonly messageSizeMax: number;
  /** `message_bus.peer_queue_capacity`. */
  readonly queueCapacity: number;
  /** `message_bus.max_batch`: frames per write. */
  readonly maxBatch: number;
  /** Budget for `close()` to flush the queue and close before the socket is destroyed. */
  readonly closeTimeoutMs: number;
  /** Validated frames, in order; views valid only during the call unless `ingress.owned`. */
  readonly onFrames: (peer: number, frames: readonly LinkFrame[]) => void;
  /** Called once when the socket has closed, with the first reason seen. */
  readonly onClose: (peer: number, reason: PeerCloseReason) => void;
  /** Every dropped inbound frame, with its reason (after counting). */
  readonly onDrop?: (peer: number, reason: string, frame: Uint8Array) => void;
  readonly log?: ReplicaPlaneLog;
}

export interface PeerConnectionStats {
  framesIn: number;
  bytesIn: number;
  framesOut: number;
  bytesOut: number;
  /** Writes (each one writev of up to `max_batch` frames). */
  writeBatches: number;
  /** Outbound frames refused because the queue was full. */
  queueDropped: number;
  /** Inbound frames dropped by validation, in total and per reason. */
  framesDropped: number;
  readonly dropReasons: Record<string, number>;
}

/**
 * A frame at least this large that straddles socket reads (a prepare of a batch of more than a
 * few dozen 1 KiB messages) is assembled into a buffer of exactly its size, allocated when its
 * header is in, and handed over (`LinkFrame.ingress.owned`): a backup's journal keeps it as is.
 * Before, it was assembled into a reused buffer and the journal copied it out (one 1 MiB copy per
 * prepare on every backup); the allocation count is the same. The peer passed the replica
 * handshake (authenticated when `cluster.auth.enabled`) and holds the one link of its pair, so
 * allocating a declared size up front costs at most `max_message_size` per link, one partial
 * frame each: bounded by the roster, not by what strangers send.
 */
export const LINK_HAND_OFF_BYTES = 64 * 1024;
/** Smaller straddling frames (acks, commits, small prepares) share two reused buffers of at most this. */
const LINK_ASSEMBLY_RETAIN_BYTES = LINK_HAND_OFF_BYTES;

/** A batch stops growing past this many bytes (it always takes at least one frame). */
export const WRITE_BATCH_BYTES_MAX = 4 * 1024 * 1024;
/** Drops of one reason are logged for the first few, then once every this many. */
const DROP_LOG_FIRST = 8;
const DROP_LOG_EVERY = 1024;

export class PeerConnection {
  readonly peer: number;
  readonly stats: PeerConnectionStats = {
    framesIn: 0,
    bytesIn: 0,
    framesOut: 0,
    bytesOut: 0,
    writeBatches: 0,
    queueDropped: 0,
    framesDropped: 0,
    dropReasons: {},
  };
  readonly #options: PeerConnectionOptions;
  readonly #socket: Socket;
  readonly #decoder: FrameDecoder;
  readonly #queue: BoundedQueue<Uint8Array>;
  readonly #log: ReplicaPlaneLog;
  #started = false;
  #flushScheduled = false;
  #awaitingDrain = false;
  #closing = false;
  #closed = false;
  #closeReason: PeerCloseReason | null = null;
  #closeTimer: NodeJS.Timeout | null = null;
  readonly #closeWaiters: (() => void)[] = [];

  constructor(options: PeerConnectionOptions) {
    if (!(Number.isInteger(options.queueCapacity) && options.queueCapacity > 0)) throw new RangeError('queueCapacity must be a positive integer');
    if (!(Number.isInteger(options.maxBatch) && options.maxBatch > 0)) throw new RangeError('maxBatch must be a positive integer');
    this.peer = options.peer;
    this.#options = options;
    this.#socket = options.socket;
    this.#decoder = new FrameDecoder({
      frameSizeMax: options.messageSizeMax,
      assemblyRetainBytes: LINK_ASSEMBLY_RETAIN_BYTES,
      handOffBytes: LINK_HAND_OFF_BYTES,
    });
    this.#queue = new BoundedQueue<Uint8Array>(options.queueCapacity);
    this.#log = options.log ?? SILENT_LOG;
  }

  /** Frames waiting in the outbound queue. */
  get queued(): number {
    return this.#queue.length;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Starts serving: processes the leftover bytes first, then reads the socket. Separate from
   * the constructor so the owner has registered the connection before the first `onFrames`.
   */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const socket = this.#socket;
    if (!(socket instanceof TLSSocket)) socket.setNoDelay(true);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#closeReason ??= 'socket_error';
      this.#log.debug('replica connection error', { peer: this.peer, code: error.code ?? error.message });
    });
    socket.on('close', () => this.#onSocketClose());
    if (socket.destroyed) {
      this.#onSocketClose();
      return;
    }
    const leftover = this.#options.leftover;
    if (leftover !== undefined && leftover.length > 0) this.#ingest(leftover);
    if (this.#closing) return;
    socket.on('data', (chunk: Buffer) => this.#ingest(chunk));
    socket.resume();
  }

  /** Runs `callback` once the socket has closed (at once if it already has). */
  onceClosed(callback: () => void): void {
    if (this.#closed) callback();
    else this.#closeWaiters.push(callback);
  }

  /** Enqueues one frame for the peer. Never blocks; a full queue drops the frame. */
  send(frame: Uint8Array): SendOutcome {
    if (this.#closing || this.#closed) return 'closed';
    if (!this.#queue.push(frame)) {
      this.stats.queueDropped++;
      return 'queue_full';
    }
    this.#scheduleFlush();
    return 'queued';
  }

  /** Graceful close: flush what is queued, then close; destroyed after `closeTimeoutMs` at most. */
  close(reason: PeerCloseReason = 'local_close'): void {
    if (this.#closing || this.#closed) return;
    this.#closing = true;
    this.#closeReason ??= reason;
    this.#closeTimer = setTimeout(() => this.#socket.destroy(), this.#options.closeTimeoutMs);
    this.#closeTimer.unref();
    if (!this.#flushScheduled && !this.#awaitingDrain) this.#flush();
  }

  /** Immediate close; queued frames are discarded. */
  destroy(reason: PeerCloseReason = 'local_close'): void {
    this.#closing = true;
    this.#closeReason ??= reason;
    this.#socket.destroy();
  }

  #ingest(chunk: Uint8Array): void {
    if (this.#closing) return;
    this.stats.bytesIn += chunk.length;
    if (!this.#decoder.push(chunk)) return;
    let frames: LinkFrame[] | null = null;
    for (let frame = this.#decoder.pull(); frame !== null; frame = this.#decoder.pull()) {
      const owned = this.#decoder.lastFrameOwned;
      const reason = validateHeader(frame, 0, { messageSizeMax: this.#options.messageSizeMax, replicaCount: this.#options.replicaCount });
      if (reason !== null) {
        this.#drop(reason, frame);
        continue;
      }
      this.stats.framesIn++;
      (frames ??= []).push({ bytes: frame, ingress: owned ? LINK_OWNED : LINK_VIEW });
    }
    if (frames !== null) this.#options.onFrames(this.peer, frames);
    const error = this.#decoder.error;
    if (error !== null) {
      this.#log.warn('replica stream error: closing the connection', { peer: this.peer, reason: error });
      this.destroy(error);
    }
  }

  #drop(reason: string, frame: Uint8Array): void {
    this.stats.framesDropped++;
    const count = (this.stats.dropReasons[reason] ?? 0) + 1;
    this.stats.dropReasons[reason] = count;
    if (count <= DROP_LOG_FIRST || count % DROP_LOG_EVERY === 0) {
      this.#log.warn('replica frame dropped', { peer: this.peer, reason, command: frame[60] ?? -1, count });
    }
    this.#options.onDrop?.(this.peer, reason, frame);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#awaitingDrain) return;
    this.#flushScheduled = true;
    // Sends made in the same turn (a broadcast, a repair round) share one writev.
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    const socket = this.#socket;
    if (this.#closed || socket.destroyed) return;
    if (!this.#queue.empty) {
      let frames = 0;
      let bytes = 0;
      socket.cork();
      while (frames < this.#options.maxBatch && (frames === 0 || bytes < WRITE_BATCH_BYTES_MAX)) {
        const frame = this.#queue.shift();
        if (frame === undefined) break;
        socket.write(frame);
        frames++;
        bytes += frame.length;
      }
      socket.uncork();
      this.stats.framesOut += frames;
      this.stats.bytesOut += bytes;
      this.stats.writeBatches++;
    }
    if (socket.writableNeedDrain) {
      this.#awaitingDrain = true;
      socket.once('drain', () => {
        this.#awaitingDrain = false;
        this.#flush();
      });
      return;
    }
    if (!this.#queue.empty) {
      // Yield to I/O between batches instead of monopolising the loop.
      this.#flushScheduled = true;
      setImmediate(() => this.#flush());
      return;
    }
    if (this.#closing) socket.end();
  }

  #onSocketClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing = true;
    if (this.#closeTimer !== null) clearTimeout(this.#closeTimer);
    this.#queue.clear();
    this.#options.onClose(this.peer, this.#closeReason ?? 'peer_closed');
    for (const waiter of this.#closeWaiters.splice(0)) waiter();
  }
}
