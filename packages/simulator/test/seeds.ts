/**
 * The fixed seed ranges of the simulator suite: every seed in a range must pass every checker.
 * None is left out: a seed that fails names a bug to fix, not a seed to skip.
 */
import { Simulation, optionsForSeed } from '../src/index.js';

/** Seeds first..last. */
export function seedRange(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

export function failures(replicas: number, seeds: readonly number[]): string[] {
  const out: string[] = [];
  for (const seed of seeds) {
    const r = new Simulation(optionsForSeed(seed, replicas)).run();
    if (!r.ok) out.push(`seed ${seed} (replicas ${replicas}): ${r.failure ?? ''}\n  replay: npm run vopr -- --seed ${seed} --replicas ${replicas}`);
  }
  return out;
}
