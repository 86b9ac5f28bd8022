/**
 * The simulated packet network. Endpoints are replicas (0..n-1) and clients (n..). Every packet
 * takes its own one-way delay; at each tick the ready packets of every link are delivered in a
 * random order (more hostile than TCP's per-connection FIFO).
 *
 * Replica-to-replica frames first wait in the sender's per-peer queue, as in the runtime
 * (`message_bus.peer_queue_capacity`, replica-plane/peer-connection.ts): a full queue drops the
 * NEW frame; the queue drains at the end of each step (`flush`: one event-loop turn) at most
 * `linkBytesPerTick` bytes per link, so a burst larger than the queue, or a slow link, overruns
 * it exactly as a real link does.
 *
 *   send ─▶ [replica→replica: peer queue ≤ capacity, tail drop] ─flush(bytes/tick)─▶
 *        ─▶ lost? ─▶ link queue (bounded: when full a RANDOM queued packet is evicted)
 *                        │ due = now + max(min, exp(mean))
 *   tick ─▶ ready packets of all links, shuffled ─▶ duplicate? (a copy re-queued, fresh delay)
 *                                                ─▶ corrupt? (replica frames: one bit flipped)
 *                                                ─▶ blocked by a partition / endpoint down? dropped
 *                                                ─▶ deliver
 *
 * Partitions and clogs apply to replica-to-replica links; client links only suffer delay, loss,
 * duplication, reordering and the endpoint being down.
 */
import type { Prng } from '@shoal/stdx';
import { exponential } from './random.js';

export interface NetworkFaults {
  /** Per-packet one-way delay: max(min, exponential(mean)) ticks. */
  readonly delayMinTicks: number;
  readonly delayMeanTicks: number;
  readonly lossProbability: number;
  readonly duplicateProbability: number;
  /** Replica frames only: a bit flip at delivery. */
  readonly corruptProbability: number;
  /** Per-link queue bound. */
  readonly linkCapacity: number;
  /**
   * TCP-like links: each directed link delivers in send order (only different links interleave
   * randomly). Off: a link's ready packets come out in a random order (more hostile than TCP).
   */
  readonly fifoLinks?: boolean;
  /** Replica links: the sender's per-peer queue, in frames (the runtime's default is 256). */
  readonly peerQueueCapacity?: number;
  /** Replica links: bytes a per-peer queue hands to the wire per tick (at least one frame); 0 = unbounded. */
  readonly linkBytesPerTick?: number;
}

/** `message_bus.peer_queue_capacity`'s default (packages/runtime/src/config/schema.ts). */
export const PEER_QUEUE_CAPACITY = 256;

export const CLEAN_NETWORK: NetworkFaults = Object.freeze({
  delayMinTicks: 1,
  delayMeanTicks: 1,
  lossProbability: 0,
  duplicateProbability: 0,
  corruptProbability: 0,
  linkCapacity: 256,
  fifoLinks: true,
});

export interface Packet {
  readonly from: number;
  readonly to: number;
  readonly frame: Uint8Array;
  due: number;
}

export interface NetworkStats {
  sent: number;
  delivered: number;
  lost: number;
  duplicated: number;
  corrupted: number;
  evicted: number;
  blocked: number;
  /** Frames dropped at a full per-peer queue (the sender's side). */
  queueDropped: number;
}

export class Network {
  readonly replicas: number;
  readonly endpoints: number;
  readonly #prng: Prng;
  faults: NetworkFaults;
  readonly #links: Packet[][];
  /** Directed replica links currently cut: blocked[from * endpoints + to]. */
  readonly #blocked: Uint8Array;
  readonly #down: Uint8Array;
  /** Endpoints whose process is paused: nothing leaves their queues, nothing is read (held, not lost). */
  readonly #clogged: Uint8Array;
  /** Test/debug: the down flags. */
  get downFlags(): readonly number[] { return [...this.#down]; }
  /** FIFO mode: the due tick of the last packet queued per link (a later one is never due earlier). */
  readonly #lastDue: Float64Array;
  #pending = 0;
  /** Per directed replica link: frames waiting in the sender's per-peer queue (FIFO). */
  readonly #outbox: Uint8Array[][];
  #queued = 0;
  readonly stats: NetworkStats = { sent: 0, delivered: 0, lost: 0, duplicated: 0, corrupted: 0, evicted: 0, blocked: 0, queueDropped: 0 };

  constructor(replicas: number, clients: number, prng: Prng, faults: NetworkFaults) {
    this.replicas = replicas;
    this.endpoints = replicas + clients;
    this.#prng = prng;
    this.faults = faults;
    this.#links = Array.from({ length: this.endpoints * this.endpoints }, () => []);
    this.#blocked = new Uint8Array(this.endpoints * this.endpoints);
    this.#down = new Uint8Array(this.endpoints);
    this.#clogged = new Uint8Array(this.endpoints);
    this.#lastDue = new Float64Array(this.endpoints * this.endpoints);
    this.#outbox = Array.from({ length: replicas * replicas }, () => []);
  }

  get pending(): number {
    return this.#pending;
  }

  send(from: number, to: number, frame: Uint8Array, now: number): void {
    this.stats.sent++;
    if (this.#down[from] === 1) return;
    if (from < this.replicas && to < this.replicas) {
      const queue = this.#outbox[from * this.replicas + to] as Uint8Array[];
      if (queue.length >= (this.faults.peerQueueCapacity ?? PEER_QUEUE_CAPACITY)) {
        this.stats.queueDropped++;
        return;
      }
      queue.push(frame);
      this.#queued++;
      return;
    }
    this.#transmit(from, to, frame, now);
  }

  /** Frames waiting in per-peer queues. */
  get queued(): number {
    return this.#queued;
  }

  /** End of a step (the event-loop turn): every per-peer queue hands its bandwidth's worth to the wire. */
  flush(now: number): void {
    if (this.#queued === 0) return;
    const budget = this.faults.linkBytesPerTick ?? 0;
    const n = this.replicas;
    for (let from = 0; from < n; from++) {
      if (this.#clogged[from] === 1) continue;
      for (let to = 0; to < n; to++) {
        const queue = this.#outbox[from * n + to] as Uint8Array[];
        if (queue.length === 0 || this.#clogged[to] === 1) continue; // the peer reads nothing: TCP backpressure
        let taken = 0;
        let bytes = 0;
        while (taken < queue.length && (budget <= 0 || taken === 0 || bytes + (queue[taken] as Uint8Array).length <= budget)) {
          const frame = queue[taken] as Uint8Array;
          bytes += frame.length;
          taken++;
          this.#transmit(from, to, frame, now);
        }
        queue.splice(0, taken);
        this.#queued -= taken;
      }
    }
  }

  #transmit(from: number, to: number, frame: Uint8Array, now: number): void {
    if (this.#prng.float() < this.faults.lossProbability) {
      this.stats.lost++;
      return;
    }
    this.#enqueue({ from, to, frame, due: now + this.#delay() }, from * this.endpoints + to);
  }

  /** Ready packets of every link, in a random order (removed from the links). */
  takeReady(now: number): Packet[] {
    if (this.#pending === 0) return [];
    const ready: Packet[] = [];
    for (let i = 0; i < this.#links.length; i++) {
      const link = this.#links[i] as Packet[];
      if (link.length === 0) continue;
      let kept = 0;
      for (let j = 0; j < link.length; j++) {
        const p = link[j] as Packet;
        if (p.due <= now && this.#clogged[p.to] !== 1) ready.push(p);
        else link[kept++] = p;
      }
      link.length = kept;
    }
    this.#pending -= ready.length;
    if (this.faults.fifoLinks === true) this.#interleave(ready);
    else this.#prng.shuffle(ready);
    const out: Packet[] = [];
    for (const p of ready) {
      const key = p.from * this.endpoints + p.to;
      if (this.#down[p.to] === 1 || this.#blocked[key] === 1) {
        this.stats.blocked++;
        continue;
      }
      if (this.faults.duplicateProbability > 0 && this.#prng.float() < this.faults.duplicateProbability) {
        this.stats.duplicated++;
        this.#enqueue({ from: p.from, to: p.to, frame: p.frame, due: now + 1 + this.#delay() }, key);
      }
      let frame = p.frame;
      if (p.to < this.replicas && p.from < this.replicas && this.faults.corruptProbability > 0 && this.#prng.float() < this.faults.corruptProbability) {
        frame = frame.slice();
        const bit = this.#prng.below(frame.length * 8);
        frame[bit >> 3] = (frame[bit >> 3] as number) ^ (1 << (bit & 7));
        this.stats.corrupted++;
      }
      this.stats.delivered++;
      out.push(frame === p.frame ? p : { from: p.from, to: p.to, frame, due: p.due });
    }
    return out;
  }

  /**
   * A paused process (SIGSTOP, a long GC pause): its queues stop draining, frames for it wait in
   * the network (they are delivered when it resumes), and its peers' queues toward it back up.
   */
  setClogged(endpoint: number, clogged: boolean): void {
    this.#clogged[endpoint] = clogged ? 1 : 0;
  }

  /** Cuts (or heals) the directed replica link from → to. */
  setBlocked(from: number, to: number, blocked: boolean): void {
    this.#blocked[from * this.endpoints + to] = blocked ? 1 : 0;
  }

  isBlocked(from: number, to: number): boolean {
    return this.#blocked[from * this.endpoints + to] === 1;
  }

  /** What a replica's host sees of its link to `to`: the peer is up and neither direction is cut. */
  linked(from: number, to: number): boolean {
    return this.#down[to] === 0 && this.#blocked[from * this.endpoints + to] === 0 && this.#blocked[to * this.endpoints + from] === 0;
  }

  healAll(): void {
    this.#blocked.fill(0);
  }

  /** A crashed endpoint: its queued packets vanish, nothing reaches it. */
  setDown(endpoint: number, down: boolean): void {
    this.#down[endpoint] = down ? 1 : 0;
    if (!down) return;
    if (endpoint < this.replicas) {
      // The process is gone: so are its queues (and nothing queued for it will be sent).
      for (let other = 0; other < this.replicas; other++) {
        for (const key of [endpoint * this.replicas + other, other * this.replicas + endpoint]) {
          const queue = this.#outbox[key] as Uint8Array[];
          this.#queued -= queue.length;
          queue.length = 0;
        }
      }
    }
    for (let other = 0; other < this.endpoints; other++) {
      for (const key of [endpoint * this.endpoints + other, other * this.endpoints + endpoint]) {
        const link = this.#links[key] as Packet[];
        this.#pending -= link.length;
        link.length = 0;
      }
    }
  }

  /** Random interleaving of the links' ready packets, each link's in send order. */
  #interleave(ready: Packet[]): void {
    const byLink = new Map<number, Packet[]>();
    for (const p of ready) {
      const key = p.from * this.endpoints + p.to;
      const list = byLink.get(key);
      if (list === undefined) byLink.set(key, [p]);
      else list.push(p);
    }
    const lists = [...byLink.values()];
    ready.length = 0;
    while (lists.length > 0) {
      const i = this.#prng.below(lists.length);
      const list = lists[i] as Packet[];
      ready.push(list.shift() as Packet);
      if (list.length === 0) {
        lists[i] = lists[lists.length - 1] as Packet[];
        lists.pop();
      }
    }
  }

  #delay(): number {
    return Math.max(this.faults.delayMinTicks, exponential(this.#prng, this.faults.delayMeanTicks));
  }

  #enqueue(p: Packet, key: number): void {
    const link = this.#links[key] as Packet[];
    if (this.faults.fifoLinks === true) {
      const last = this.#lastDue[key] as number;
      if (p.due < last) p.due = last;
      this.#lastDue[key] = p.due;
    }
    if (link.length >= this.faults.linkCapacity) {
      const victim = this.#prng.below(link.length);
      link[victim] = link[link.length - 1] as Packet;
      link.length -= 1;
      this.#pending -= 1;
      this.stats.evicted++;
    }
    link.push(p);
    this.#pending += 1;
  }
}
