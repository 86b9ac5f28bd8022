/**
 * Time as the SDK's upper layers see it. Only `src/transport/**` implements this with real timers
 * and clocks (`nodeScheduler`); the producer, consumer and cluster router take it as a
 * dependency, so tests can drive them with a fake.
 */
export interface TimerHandle {
  readonly id: unknown;
}

export interface Scheduler {
  /** Monotonic milliseconds. */
  now(): number;
  /** Wall-clock microseconds since the epoch (message origin timestamps, request timestamps). */
  nowMicros(): bigint;
  /** Runs `fn` after `ms`; an unref'd timer never keeps the process alive. */
  setTimer(ms: number, fn: () => void, options?: { readonly unref?: boolean }): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  /** Resolves after `ms`; rejects with ShoalAbortError when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Exponential back-off with full jitter: a random delay in [base, min(max, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(baseMs + (ceiling - baseMs) * random());
}
