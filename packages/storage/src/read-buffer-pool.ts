/**
 * Read buffers for polls whose views go to a socket (`lendViews`), reused once the socket has
 * written them. Before, every poll read into a fresh buffer and left it as garbage: 1 MiB per
 * poll of external memory, whose collection was about a quarter of the primary shard's time
 * while consuming; reusing them measured ~35 % more consume throughput (2026-12-02).
 *
 * One pool per thread (module state: each shard worker has its own), shared by the thread's
 * partition readers, holding at most `POOL_BUFFERS_MAX` free buffers of `bufferBytes` each (2 MiB
 * by default: 8 MiB per shard at most, whatever its partition count). A buffer taken by a poll comes back only
 * through that poll's `release` (poll.ts PollReply.release), called when nothing references its
 * bytes any more (the socket's write callback, or after a copy); a poll never released leaves its
 * buffer to the garbage collector, which is always safe. A release is idempotent.
 */
const POOL_BUFFERS_MAX = 4;

export class ReadBufferPool {
  readonly bufferBytes: number;
  readonly #free: Uint8Array[] = [];

  constructor(bufferBytes: number) {
    this.bufferBytes = bufferBytes;
  }

  /** Free buffers held (tests). */
  get free(): number {
    return this.#free.length;
  }

  /** A buffer of `bufferBytes`, not zero-filled (the read fills what it uses). */
  take(): Uint8Array {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.bufferBytes);
  }

  /** A release that gives `buffers` back once, however often it is called. */
  releaser(buffers: readonly Uint8Array[]): () => void {
    if (buffers.length === 0) return noop;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const b of buffers) if (this.#free.length < POOL_BUFFERS_MAX && b.length === this.bufferBytes) this.#free.push(b);
    };
  }
}

const pools = new Map<number, ReadBufferPool>();

/** This thread's pool for buffers of `bytes` (one per read-ahead size in use; one in practice). */
export function readBufferPool(bytes: number): ReadBufferPool {
  let pool = pools.get(bytes);
  if (pool === undefined) {
    pool = new ReadBufferPool(bytes);
    pools.set(bytes, pool);
  }
  return pool;
}

function noop(): void {}
