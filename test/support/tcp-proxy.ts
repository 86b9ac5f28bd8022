/**
 * An in-test TCP proxy on 127.0.0.1 for fault tests (replica plane, cluster). Every accepted
 * client connection gets its own connection to the target; bytes are forwarded in both
 * directions through a fault stage the test controls at any time:
 *
 *   client ──▶ [ upstream link ] ──▶ target        upstream   = client → target
 *   client ◀── [downstream link] ◀── target        downstream = target → client
 *
 *   link stage, per chunk:  partition? ─ hold: pause the source (TCP back-pressure; resumes on heal)
 *                                       └ drop: discard the bytes (the stream is broken from there)
 *                           corrupt? (seeded bit flips) ─▶ delay? (order preserved) ─▶ write
 *
 * Controls: `partition(direction, mode)` / `heal()`, `setDelay(ms, direction)`,
 * `corrupt({ direction, probability, seed })` / `corruptNext(direction)`, `cut()` (destroy every
 * connection now, optionally with a TCP RST), `refuse(true)` (new connections are closed at
 * once), `setDropProbability` (whole chunks vanish). Nothing is random unless a seed says so.
 *
 * Only loopback: it listens on 127.0.0.1 and dials the target the test gives (a local server).
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { Prng } from '@shoal/stdx';

export type ProxyDirection = 'upstream' | 'downstream';
export type ProxyDirections = ProxyDirection | 'both';
export type PartitionMode = 'hold' | 'drop';

export interface ProxyTarget {
  readonly host: string;
  readonly port: number;
}

export interface ProxyOptions {
  /** Port to listen on (default 0: ephemeral). */
  readonly port?: number;
}

interface LinkFaults {
  partition: PartitionMode | null;
  delayMs: number;
  corruptProbability: number;
  corruptNext: boolean;
  dropProbability: number;
}

export interface ProxyStats {
  accepted: number;
  refused: number;
  open: number;
  readonly bytes: Record<ProxyDirection, number>;
  readonly dropped: Record<ProxyDirection, number>;
  readonly corrupted: Record<ProxyDirection, number>;
}

function directionsOf(directions: ProxyDirections): ProxyDirection[] {
  return directions === 'both' ? ['upstream', 'downstream'] : [directions];
}

/** One direction of one proxied connection. */
class Link {
  readonly #proxy: TcpProxy;
  readonly #direction: ProxyDirection;
  readonly #source: Socket;
  readonly #sink: Socket;
  /** When the last delayed chunk is released (keeps order across delay changes). */
  #releaseAt = 0;
  readonly #delayed: { readonly at: number; readonly chunk: Uint8Array }[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(proxy: TcpProxy, direction: ProxyDirection, source: Socket, sink: Socket) {
    this.#proxy = proxy;
    this.#direction = direction;
    this.#source = source;
    this.#sink = sink;
    source.on('data', (chunk: Buffer) => this.#onChunk(chunk));
    // A half-close follows the data it comes after (delayed chunks included).
    source.on('end', () => {
      const wait = this.#releaseAt - Date.now();
      if (wait < 0 && this.#delayed.length === 0) sink.end();
      else setTimeout(() => sink.end(), Math.max(wait, 0) + 1).unref();
    });
  }

  /** Re-applies the hold state (called on every fault change). */
  refresh(): void {
    if (this.#proxy.faultsOf(this.#direction).partition === 'hold') this.#source.pause();
    else if (!this.#source.destroyed) this.#source.resume();
  }

  #onChunk(input: Buffer): void {
    const faults = this.#proxy.faultsOf(this.#direction);
    const stats = this.#proxy.stats;
    if (faults.partition === 'hold') {
      // Arrived before the pause took effect: hand it back to the stream, in order.
      this.#source.pause();
      this.#source.unshift(input);
      return;
    }
    if (faults.partition === 'drop' || (faults.dropProbability > 0 && this.#proxy.random() < faults.dropProbability)) {
      stats.dropped[this.#direction] += input.length;
      return;
    }
    let chunk = input;
    if (faults.corruptNext || (faults.corruptProbability > 0 && this.#proxy.random() < faults.corruptProbability)) {
      faults.corruptNext = false;
      chunk = Buffer.from(input);
      const at = Math.floor(this.#proxy.random() * chunk.length);
      chunk[at] = (chunk[at] as number) ^ (1 << Math.floor(this.#proxy.random() * 8));
      stats.corrupted[this.#direction]++;
    }
    stats.bytes[this.#direction] += chunk.length;
    const now = Date.now();
    if (faults.delayMs <= 0 && this.#delayed.length === 0) {
      this.#sink.write(chunk);
      return;
    }
    // One FIFO per link drained by one timer: order holds even when the delay changes.
    this.#releaseAt = Math.max(now + faults.delayMs, this.#releaseAt);
    this.#delayed.push({ at: this.#releaseAt, chunk });
    this.#arm();
  }

  #arm(): void {
    const first = this.#delayed[0];
    if (this.#timer !== null || first === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const now = Date.now();
      while (this.#delayed.length > 0 && (this.#delayed[0]?.at ?? 0) <= now) {
        const entry = this.#delayed.shift();
        if (entry !== undefined && !this.#sink.destroyed) this.#sink.write(entry.chunk);
      }
      this.#arm();
    }, Math.max(0, first.at - Date.now()));
    this.#timer.unref();
  }
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
  readonly links: readonly Link[];
}

export class TcpProxy {
  readonly host = '127.0.0.1';
  readonly stats: ProxyStats = {
    accepted: 0,
    refused: 0,
    open: 0,
    bytes: { upstream: 0, downstream: 0 },
    dropped: { upstream: 0, downstream: 0 },
    corrupted: { upstream: 0, downstream: 0 },
  };
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  readonly #faults: Record<ProxyDirection, LinkFaults> = {
    upstream: { partition: null, delayMs: 0, corruptProbability: 0, corruptNext: false, dropProbability: 0 },
    downstream: { partition: null, delayMs: 0, corruptProbability: 0, corruptNext: false, dropProbability: 0 },
  };
  #target: ProxyTarget;
  #refusing = false;
  #prng = new Prng(1);
  #port = 0;

  private constructor(target: ProxyTarget) {
    this.#target = target;
    this.#server = createServer({ allowHalfOpen: true }, (client) => this.#onClient(client));
  }

  static async start(target: ProxyTarget, options: ProxyOptions = {}): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen({ host: '127.0.0.1', port: options.port ?? 0 }, () => {
        proxy.#server.off('error', reject);
        resolve();
      });
    });
    proxy.#port = (proxy.#server.address() as AddressInfo).port;
    return proxy;
  }

  get port(): number {
    return this.#port;
  }

  /** Connections currently proxied. */
  get connections(): number {
    return this.#pairs.size;
  }

  /** Where new connections go (existing ones keep their target). */
  retarget(target: ProxyTarget): void {
    this.#target = target;
  }

  /** The current faults of one direction (read by the links on every chunk). */
  faultsOf(direction: ProxyDirection): LinkFaults {
    return this.#faults[direction];
  }

  /** Uniform [0, 1) from the proxy's seeded PRNG. */
  random(): number {
    return this.#prng.u32() / 2 ** 32;
  }

  /** Reseeds the PRNG used for corruption and drops. */
  seed(seed: number): void {
    this.#prng = new Prng(seed);
  }

  /**
   * Stops bytes in `directions`: 'hold' pauses them (delivered on heal, like a TCP stall),
   * 'drop' discards them (the byte stream is broken from then on).
   */
  partition(directions: ProxyDirections = 'both', mode: PartitionMode = 'hold'): void {
    for (const direction of directionsOf(directions)) this.#faults[direction].partition = mode;
    this.#refresh();
  }

  /** Ends every partition. */
  heal(directions: ProxyDirections = 'both'): void {
    for (const direction of directionsOf(directions)) this.#faults[direction].partition = null;
    this.#refresh();
  }

  /** Delays every chunk by `ms` (0: none); order is preserved. */
  setDelay(ms: number, directions: ProxyDirections = 'both'): void {
    for (const direction of directionsOf(directions)) this.#faults[direction].delayMs = ms;
  }

  /** Flips one bit in a chunk with this probability (seeded); 0 turns it off. */
  corrupt(options: { readonly directions?: ProxyDirections; readonly probability: number; readonly seed?: number }): void {
    if (options.seed !== undefined) this.seed(options.seed);
    for (const direction of directionsOf(options.directions ?? 'both')) this.#faults[direction].corruptProbability = options.probability;
  }

  /** Flips one bit of the next chunk in `direction`. */
  corruptNext(direction: ProxyDirection): void {
    this.#faults[direction].corruptNext = true;
  }

  /** Discards whole chunks with this probability (seeded); 0 turns it off. */
  setDropProbability(probability: number, directions: ProxyDirections = 'both'): void {
    for (const direction of directionsOf(directions)) this.#faults[direction].dropProbability = probability;
  }

  /** Refuse (accept and close at once) new connections while true. */
  refuse(refusing: boolean): void {
    this.#refusing = refusing;
  }

  /** Destroys every proxied connection now; `reset` sends a TCP RST instead of a FIN. */
  cut(options: { readonly reset?: boolean } = {}): void {
    for (const pair of [...this.#pairs]) {
      for (const socket of [pair.client, pair.server]) {
        if (options.reset === true && !socket.destroyed && socket.readyState === 'open') socket.resetAndDestroy();
        else socket.destroy();
      }
    }
  }

  /** Clears every fault (connections stay). */
  reset(): void {
    for (const direction of ['upstream', 'downstream'] as const) {
      Object.assign(this.#faults[direction], { partition: null, delayMs: 0, corruptProbability: 0, corruptNext: false, dropProbability: 0 });
    }
    this.#refusing = false;
    this.#refresh();
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #refresh(): void {
    for (const pair of this.#pairs) for (const link of pair.links) link.refresh();
  }

  #onClient(client: Socket): void {
    client.on('error', () => undefined);
    if (this.#refusing) {
      this.stats.refused++;
      client.destroy();
      return;
    }
    this.stats.accepted++;
    const server = connect({ host: this.#target.host, port: this.#target.port, noDelay: true, allowHalfOpen: true });
    server.on('error', () => undefined);
    client.setNoDelay(true);
    const pair: Pair = {
      client,
      server,
      links: [new Link(this, 'upstream', client, server), new Link(this, 'downstream', server, client)],
    };
    this.#pairs.add(pair);
    this.stats.open = this.#pairs.size;
    for (const link of pair.links) link.refresh();
    const teardown = (): void => {
      if (!this.#pairs.delete(pair)) return;
      this.stats.open = this.#pairs.size;
      client.destroy();
      server.destroy();
    };
    // Half-closes propagate (in the links); a full close or an error tears the pair down.
    client.on('close', teardown);
    server.on('close', teardown);
  }
}
