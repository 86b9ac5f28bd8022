import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ShoalAbortError } from '../errors.js';
import type { Scheduler, TimerHandle } from '../scheduler.js';
import type { RandomSource } from '../session.js';

/**
 * The real clock, timers and randomness (the only place outside the socket code that touches
 * them; see scheduler.ts).
 *
 * `nowMicros` is wall-clock based and strictly increasing within the process, so every request
 * a connection sends carries a distinct `timestamp`: the session uses the echoed value to tell
 * apart replies to requests that share a request number.
 */
let lastMicros = 0n;

export const nodeScheduler: Scheduler = {
  now: () => performance.now(),
  nowMicros: () => {
    const wall = BigInt(Date.now()) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000));
    lastMicros = wall > lastMicros ? wall : lastMicros + 1n;
    return lastMicros;
  },
  setTimer: (ms, fn, options) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    if (options?.unref === true) timer.unref();
    return { id: timer };
  },
  clearTimer: (handle: TimerHandle) => {
    clearTimeout(handle.id as ReturnType<typeof setTimeout>);
  },
  sleep: (ms, signal) => new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new ShoalAbortError(signal.reason));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ShoalAbortError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  }),
};

/** Client ids and message ids from the OS CSPRNG. */
export const nodeRandom: RandomSource & { readonly float: () => number } = {
  u128: () => {
    const bytes = randomBytes(16);
    return bytes.readBigUInt64LE(0) | (bytes.readBigUInt64LE(8) << 64n);
  },
  float: () => randomBytes(4).readUInt32LE(0) / 0x1_0000_0000,
};
