/**
 * The fixed seed ranges of the simulator suite: every seed in a range must pass every checker.
 * None is left out: a seed that fails names a bug to fix, not a seed to skip.
 */
import { Simulation, optionsForSeed } from '../src/index.js';

/** Seeds first..last. */
export function seedRange(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

/**
 * The group-commit wait depth every seed ran with before it was drawn (options.ts: drawn last,
 * so nothing else about a seed moved): at or above every pipeline depth, requests waited only
 * for a full pipeline.
 */
export const HISTORIC_GROUP_WAIT_DEPTH = 32;

/**
 * Each seed as drawn, and, where the drawn wait depth changed its schedule, also as it ran when
 * it was pinned (`HISTORIC_GROUP_WAIT_DEPTH`): a regression seed keeps replaying the interleaving
 * that once failed, and the new dimension is covered too.
 */
export function failures(replicas: number, seeds: readonly number[]): string[] {
  const out: string[] = [];
  for (const seed of seeds) {
    const drawn = optionsForSeed(seed, replicas);
    const variants = drawn.partitionGroupWaitDepth >= Math.min(HISTORIC_GROUP_WAIT_DEPTH, drawn.partitionPipelineDepth)
      ? [null] : [null, HISTORIC_GROUP_WAIT_DEPTH];
    for (const depth of variants) {
      const r = new Simulation(depth === null ? drawn : { ...drawn, partitionGroupWaitDepth: depth }).run();
      const flag = depth === null ? '' : ` --group-wait-depth ${depth}`;
      if (!r.ok) out.push(`seed ${seed} (replicas ${replicas}${flag}): ${r.failure ?? ''}\n  replay: npm run vopr -- --seed ${seed} --replicas ${replicas}${flag}`);
    }
  }
  return out;
}
