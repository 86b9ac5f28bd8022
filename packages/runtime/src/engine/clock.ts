/**
 * Wall-clock microseconds for prepare timestamps (the consensus `TimeSource`), never going
 * backwards within a thread even if the system clock steps back, and a seeded PRNG per thread
 * (nonces, timer jitter) seeded from the OS CSPRNG.
 */
import { randomBytes } from 'node:crypto';
import type { TimeSource } from '@shoal/consensus';
import { Prng } from '@shoal/stdx';

export class WallClock implements TimeSource {
  #last = 0n;

  realtimeMicros(): bigint {
    const now = BigInt(Date.now()) * 1000n;
    this.#last = now > this.#last ? now : this.#last + 1n;
    return this.#last;
  }
}

export function randomPrng(): Prng {
  return new Prng(randomBytes(8).readBigUInt64LE(0));
}

/** A random non-zero u128 (the metadata plane's per-boot incarnation). */
export function randomU128(): bigint {
  for (;;) {
    const bytes = randomBytes(16);
    const value = bytes.readBigUInt64LE(0) | (bytes.readBigUInt64LE(8) << 64n);
    if (value !== 0n) return value;
  }
}
