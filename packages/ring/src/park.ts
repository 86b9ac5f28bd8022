/**
 * Parking: how one thread sleeps on a shared word without blocking its event loop, and how
 * another wakes it without a notify per frame.
 *
 * A parking spot is two Int32 words: SEQ (bumped by wakers) and PARKED (written only by the one
 * thread that parks there: 0 = running, anything else = parked, the value saying what for).
 *
 * ```
 *   waiter (one thread)                         waker (any thread)
 *   ───────────────────                         ──────────────────
 *   w1  seq = load(SEQ)                         k1  publish the state change (store)
 *   w2  store(PARKED, token)                    k2  if load(PARKED) is interesting:
 *   w3  if condition holds: store(PARKED, 0),   k3      add(SEQ, 1)
 *       return                                  k4      notify(SEQ)
 *   w4  waitAsync(SEQ, seq)  — sleeps only if SEQ is still `seq`
 *   w5  store(PARKED, 0)
 * ```
 *
 * Why no wake-up is lost. Every Atomics operation is sequentially consistent, so all of them sit
 * in one total order. Either k2 comes before w2 in it: then k1 (before k2 in program order) also
 * precedes w3, so w3 sees the state change and the waiter does not sleep. Or k2 comes after w2
 * and reads the token: then k3 comes after w1, so at w4 SEQ is no longer `seq` (waitAsync
 * returns "not-equal" at once), or w4 already queued the waiter, in which case k4 (which takes
 * the same waiter-list lock as w4's compare-and-enqueue) wakes it. A notify with no waiter, or
 * a bump the waiter never needed, costs a spurious wake-up at most: callers re-check and re-park.
 *
 * Only `Atomics.waitAsync` is used: `Atomics.wait` would block the event loop of the thread
 * (sockets, timers), and every thread in a Shoal node runs one.
 *
 * Caveat (measured on Node 20): a pending waitAsync does NOT keep a worker alive. A worker whose
 * only pending work is a parked ring exits; hold a ref'd handle (a socket, a `parentPort`
 * listener) for as long as the thread should live.
 */

import { assert } from '@shoal/stdx';

/** Outcome of a wait: the condition may now hold (re-check it), or the timeout expired. */
export type WaitResult = 'ready' | 'timed-out';

type WaitAsyncResult =
  | { readonly async: false; readonly value: 'not-equal' | 'timed-out' }
  | { readonly async: true; readonly value: Promise<'ok' | 'timed-out'> };

interface AtomicsWaitAsync {
  waitAsync(typedArray: Int32Array, index: number, value: number, timeout?: number): WaitAsyncResult;
}

// ES2024 (Node 16+); not in the es2023 lib this repo compiles against, so typed here.
const atomics = Atomics as unknown as AtomicsWaitAsync;
assert(typeof atomics.waitAsync === 'function', 'Atomics.waitAsync is missing: Node 16 or later is required');

const READY: Promise<WaitResult> = Promise.resolve('ready');
const TIMED_OUT: Promise<WaitResult> = Promise.resolve('timed-out');

export class ParkingSpot {
  readonly #words: Int32Array;
  readonly #seq: number;
  readonly #parked: number;

  constructor(words: Int32Array, seqIndex: number, parkedIndex: number) {
    assert(seqIndex >= 0 && seqIndex < words.length, 'parking spot: SEQ out of range');
    assert(parkedIndex >= 0 && parkedIndex < words.length, 'parking spot: PARKED out of range');
    assert(seqIndex !== parkedIndex, 'parking spot: SEQ and PARKED are one word');
    this.#words = words;
    this.#seq = seqIndex;
    this.#parked = parkedIndex;
  }

  /**
   * Waiter: sleeps until `ready()` holds, a waker rings, or `timeoutMs` passes. `token` (non-zero)
   * is published in PARKED for wakers to inspect. `ready` is called after PARKED is set; it must
   * read the shared state with Atomics (steps w2–w3 above). Resolves 'ready' even on a spurious
   * wake-up: the caller re-checks its condition.
   */
  park(token: number, ready: () => boolean, timeoutMs?: number): Promise<WaitResult> {
    assert(token !== 0, 'parking spot: token 0 means "running"');
    assert(timeoutMs === undefined || timeoutMs >= 0, 'parking spot: negative timeout');
    const words = this.#words;
    // Only this thread writes PARKED, so a non-zero value here is a second concurrent wait on
    // the same spot: two loops consuming one ring, our bug.
    assert(Atomics.load(words, this.#parked) === 0, 'parking spot: already parked (concurrent waits)');
    const seq = Atomics.load(words, this.#seq); // w1: BEFORE publishing PARKED, see above.
    Atomics.store(words, this.#parked, token); // w2
    if (ready()) {
      Atomics.store(words, this.#parked, 0); // w3
      return READY;
    }
    const wait = atomics.waitAsync(words, this.#seq, seq, timeoutMs ?? Infinity); // w4
    if (!wait.async) {
      Atomics.store(words, this.#parked, 0);
      return wait.value === 'timed-out' ? TIMED_OUT : READY;
    }
    return wait.value.then((outcome) => {
      Atomics.store(words, this.#parked, 0); // w5
      return outcome === 'timed-out' ? 'timed-out' : 'ready';
    });
  }

  /** Waker: what the parked thread published in PARKED (0 when it is running). Step k2. */
  parkedToken(): number {
    return Atomics.load(this.#words, this.#parked);
  }

  /** Waker: wakes the parked thread, if any. Steps k3–k4. Call after publishing the change. */
  ring(): void {
    Atomics.add(this.#words, this.#seq, 1);
    Atomics.notify(this.#words, this.#seq, 1);
  }
}
