/**
 * A thread's end of the ring mesh: one producer per peer thread, one Inbox (one doorbell) for
 * every ring towards this thread, typed messages in and out.
 *
 * ```
 *  send(to, message) ──encode──▶ record(s) ──tryWriteParts──▶ ring self→to ──▶ peer's Inbox
 *                                    │ full (or a backlog exists)
 *                                    ▼
 *                            backlog[to] (copied records, FIFO) ──awaited write (parks)──▶ ring
 *
 *  run():  read ≤ framesPerRingPerTurn from each inbound ring → onMessage(message, from)
 *          → onBatchEnd() → flush producers → yield to the event loop (setImmediate) if anything
 *          was read, else park on the doorbell (Atomics.waitAsync)
 * ```
 *
 * Ring records: `[fragment u8][reserved 3][total_length u32]` + a chunk of the encoded message.
 * fragment 0 = the whole message; 1 first, 2 middle, 3 last for a message larger than the ring's
 * frame limit (a 64 MiB SendMessages batch through an 8 MiB ring). Fragments of one message are
 * consecutive in their ring (one producer, FIFO), so the consumer reassembles per source ring.
 *
 * Back-pressure: a full ring never drops a message. It goes to the destination's backlog, and
 * every later message to that destination queues behind it (FIFO per destination is what keeps
 * a reply behind the metadata commit it depends on). `backlogBytes` lets the owner of client
 * sockets stop reading while peers are slow. Inbound frames are always consumed (a visitor never
 * refuses), so two threads with full rings towards each other keep draining: no deadlock.
 */
import { assert } from '@shoal/stdx';
import { Inbox, type MeshEndpoints, RingProducer } from '@shoal/ring';
import type { Logger } from '../log/logger.js';
import { EnvelopeEncoder, decodeMessage, encodedLength } from './envelope.js';
import type { ChannelMessage } from './messages.js';

export const RECORD_HEADER_BYTES = 8;
const Fragment = { whole: 0, first: 1, middle: 2, last: 3 } as const;

export interface ChannelsOptions {
  readonly endpoints: MeshEndpoints;
  readonly onMessage: (message: ChannelMessage, from: number) => void;
  /** After each batch of inbound messages, before the producers are flushed. */
  readonly onBatchEnd: () => void;
  /** Frames taken from one inbound ring per batch (fairness, and a bounded turn). */
  readonly framesPerRingPerTurn: number;
  /** Largest message that may be reassembled from fragments. */
  readonly messageBytesMax: number;
  readonly log: Logger;
}

interface Reassembly {
  readonly buffer: Uint8Array;
  filled: number;
}

export interface ChannelStats {
  readonly sent: number;
  readonly received: number;
  readonly sentBytes: number;
  readonly receivedBytes: number;
  /** Bytes waiting for ring space, per destination thread. */
  readonly backlogBytes: readonly number[];
}

export class Channels {
  readonly self: number;
  readonly #producers: readonly (RingProducer | null)[];
  readonly #inbox: Inbox;
  readonly #backlog: Uint8Array[][];
  readonly #backlogBytes: number[];
  readonly #draining: boolean[];
  readonly #reassembly: (Reassembly | null)[];
  readonly #dirty: boolean[];
  readonly #encoder = new EnvelopeEncoder();
  readonly #recordHeader = new Uint8Array(RECORD_HEADER_BYTES);
  readonly #recordView = new DataView(this.#recordHeader.buffer);
  readonly #options: ChannelsOptions;
  #closed = false;
  #sent = 0;
  #received = 0;
  #sentBytes = 0;
  #receivedBytes = 0;

  constructor(options: ChannelsOptions) {
    this.#options = options;
    this.self = options.endpoints.thread;
    this.#producers = options.endpoints.outbound.map((handle) => (handle === null ? null : RingProducer.attach(handle)));
    this.#inbox = Inbox.attach(options.endpoints.inbound);
    const peers = this.#producers.length;
    this.#backlog = Array.from({ length: peers }, () => []);
    this.#backlogBytes = new Array<number>(peers).fill(0);
    this.#draining = new Array<boolean>(peers).fill(false);
    this.#reassembly = new Array<Reassembly | null>(options.endpoints.inbound.length).fill(null);
    this.#dirty = new Array<boolean>(peers).fill(false);
  }

  get threadCount(): number {
    return this.#producers.length;
  }

  /** Bytes waiting for ring space, all destinations. */
  get backlogBytes(): number {
    let total = 0;
    for (const bytes of this.#backlogBytes) total += bytes;
    return total;
  }

  /** Sends one message to thread `to` (copied into the ring, or into the backlog). */
  send(to: number, message: ChannelMessage): void {
    assert(to !== this.self, 'channels: send to self');
    const producer = this.#producers[to];
    assert(producer !== null && producer !== undefined, `channels: no ring to thread ${to}`);
    if (this.#closed) return;
    const parts = this.#encoder.encode(message);
    const length = encodedLength(parts);
    this.#sent += 1;
    this.#sentBytes += length;
    if (length + RECORD_HEADER_BYTES <= producer.frameSizeMax) {
      this.#recordView.setUint8(0, Fragment.whole);
      this.#recordView.setUint32(4, length, true);
      if (this.#backlog[to]?.length === 0) {
        const status = producer.tryWriteParts([this.#recordHeader, ...parts]);
        if (status === 'ok') {
          this.#dirty[to] = true;
          return;
        }
        if (status === 'closed') return this.#peerGone(to);
        assert(status === 'full', `channels: ring write ${status}`);
      }
      this.#enqueue(to, joinParts([this.#recordHeader, ...parts], RECORD_HEADER_BYTES + length));
      return;
    }
    this.#sendFragmented(to, producer, joinParts(parts, length));
  }

  /** Publishes every record written since the last flush (one store + at most one notify per ring). */
  flush(): void {
    for (let to = 0; to < this.#producers.length; to++) {
      if (!this.#dirty[to]) continue;
      this.#dirty[to] = false;
      const status = this.#producers[to]?.flush();
      if (status === 'closed') this.#peerGone(to);
    }
  }

  /** The receive loop; resolves when every inbound ring has ended or `close()` was called. */
  async run(): Promise<void> {
    const cap = this.#options.framesPerRingPerTurn;
    const visit = (frame: Uint8Array, source: number): void => this.#onRecord(frame, source);
    while (!this.#closed) {
      const count = this.#inbox.read(visit, cap);
      if (count > 0) this.#options.onBatchEnd();
      this.flush();
      if (this.#inbox.ended || this.#closed) break;
      if (count > 0) await yieldToEventLoop();
      else await this.#inbox.wait();
    }
  }

  stats(): ChannelStats {
    return {
      sent: this.#sent,
      received: this.#received,
      sentBytes: this.#sentBytes,
      receivedBytes: this.#receivedBytes,
      backlogBytes: [...this.#backlogBytes],
    };
  }

  /** Stops the loop and closes every ring end of this thread (peers see 'closed' / `ended`). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const producer of this.#producers) {
      try {
        producer?.close();
      } catch {
        // a producer with an awaited write still parked: the process is going away
      }
    }
    this.#inbox.close();
  }

  #sendFragmented(to: number, producer: RingProducer, message: Uint8Array): void {
    const chunkMax = producer.frameSizeMax - RECORD_HEADER_BYTES;
    for (let at = 0; at < message.length; at += chunkMax) {
      const end = Math.min(message.length, at + chunkMax);
      const kind = at === 0 ? Fragment.first : end === message.length ? Fragment.last : Fragment.middle;
      const record = new Uint8Array(RECORD_HEADER_BYTES + end - at);
      const view = new DataView(record.buffer);
      view.setUint8(0, kind);
      view.setUint32(4, message.length, true);
      record.set(message.subarray(at, end), RECORD_HEADER_BYTES);
      if (this.#backlog[to]?.length === 0) {
        const status = producer.tryWrite(record);
        if (status === 'ok') {
          this.#dirty[to] = true;
          continue;
        }
        if (status === 'closed') return this.#peerGone(to);
      }
      this.#enqueue(to, record);
    }
  }

  #enqueue(to: number, record: Uint8Array): void {
    (this.#backlog[to] as Uint8Array[]).push(record);
    this.#backlogBytes[to] = (this.#backlogBytes[to] ?? 0) + record.length;
    if (!this.#draining[to]) void this.#drain(to);
  }

  /** Writes the backlog of `to` in order, parking while its ring is full. */
  async #drain(to: number): Promise<void> {
    const producer = this.#producers[to] as RingProducer;
    const queue = this.#backlog[to] as Uint8Array[];
    this.#draining[to] = true;
    try {
      while (queue.length > 0 && !this.#closed) {
        const record = queue[0] as Uint8Array;
        const outcome = await producer.write(record);
        if (outcome === 'closed') return this.#peerGone(to);
        assert(outcome === 'ok', `channels: backlog write ${outcome}`);
        queue.shift();
        this.#backlogBytes[to] = (this.#backlogBytes[to] ?? 0) - record.length;
        this.#dirty[to] = true;
        if (queue.length === 0 || producer.unpublishedBytes > producer.capacityBytes / 4) this.flush();
      }
    } finally {
      this.#draining[to] = false;
    }
  }

  #peerGone(to: number): void {
    const dropped = this.#backlog[to]?.length ?? 0;
    this.#backlog[to] = [];
    this.#backlogBytes[to] = 0;
    if (this.#closed) return;
    // A peer closing is routine during shutdown (shards stop before the metadata worker); the
    // supervisor notices a crashed worker by its exit, not by this. Only lost frames are worth a warning.
    if (dropped > 0) this.#options.log.warn('peer thread closed its ring with frames queued for it', { to, dropped });
    else this.#options.log.debug('peer thread closed its ring', { to });
  }

  #onRecord(record: Uint8Array, source: number): void {
    const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
    const fragment = view.getUint8(0);
    const total = view.getUint32(4, true);
    const chunk = record.subarray(RECORD_HEADER_BYTES);
    if (fragment === Fragment.whole) {
      assert(chunk.length === total, 'channels: record length');
      this.#deliver(chunk, source);
      return;
    }
    let r = this.#reassembly[source] ?? null;
    if (fragment === Fragment.first) {
      assert(r === null, 'channels: a new message started inside a fragmented one');
      assert(total <= this.#options.messageBytesMax, `channels: fragmented message of ${total} bytes`);
      r = { buffer: new Uint8Array(total), filled: 0 };
      this.#reassembly[source] = r;
    }
    assert(r !== null, 'channels: fragment without a first fragment');
    assert(r.filled + chunk.length <= r.buffer.length, 'channels: fragments overflow their message');
    r.buffer.set(chunk, r.filled);
    r.filled += chunk.length;
    if (fragment === Fragment.last) {
      assert(r.filled === r.buffer.length, 'channels: fragmented message short');
      this.#reassembly[source] = null;
      this.#deliver(r.buffer, source);
    }
  }

  #deliver(bytes: Uint8Array, source: number): void {
    this.#received += 1;
    this.#receivedBytes += bytes.length;
    this.#options.onMessage(decodeMessage(bytes), source);
  }
}

function joinParts(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
