/**
 * Every random choice of a run comes from ONE seed through separately salted streams, so adding a
 * draw to one component (say, the workload) never shifts another's (the network's) schedule.
 */
import { Prng } from '@shoal/stdx';

const MASK64 = (1n << 64n) - 1n;

/** splitmix64 finaliser: a well-mixed 64-bit value from (seed, salt). */
export function mix64(seed: bigint, salt: bigint): bigint {
  let z = (seed + (salt + 1n) * 0x9e37_79b9_7f4a_7c15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xbf58_476d_1ce4_e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d0_49bb_1331_11ebn) & MASK64;
  return z ^ (z >> 31n);
}

export const Salt = {
  network: 1n,
  faults: 2n,
  workload: 3n,
  options: 4n,
  disk: 100n,
  replica: 200n,
  client: 300n,
  clock: 400n,
} as const;

/** A fresh stream for `salt` (plus an index for per-replica / per-client streams). */
export function stream(seed: number | bigint, salt: bigint, index = 0): Prng {
  const m = mix64(BigInt(seed), salt * 1_000_003n + BigInt(index));
  // Prng folds 64 bits into its 32-bit seed; fold the halves so both count.
  return new Prng((m >> 32n) ^ (m & 0xffff_ffffn) ^ ((m >> 17n) << 32n));
}

/** Exponentially distributed integer with the given mean (>= 0). */
export function exponential(prng: Prng, mean: number): number {
  if (mean <= 0) return 0;
  const u = prng.float();
  return Math.floor(-Math.log(1 - u) * mean);
}
