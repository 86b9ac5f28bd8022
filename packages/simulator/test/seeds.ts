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

interface Variant {
  readonly groupWaitDepth: number | null;
  readonly inlineFrontier: boolean;
}

/**
 * Each seed as drawn, and, where a dimension drawn since it was pinned changed its schedule, also
 * as it ran before: with the frontier inline (`asyncFrontier` false, drawn since issue 13 item 6),
 * and with neither that nor the drawn wait depth (`HISTORIC_GROUP_WAIT_DEPTH`). A regression seed
 * keeps replaying the interleaving that once failed, and the new dimensions are covered too.
 */
export function failures(replicas: number, seeds: readonly number[]): string[] {
  const out: string[] = [];
  for (const seed of seeds) {
    const drawn = optionsForSeed(seed, replicas);
    const depthDrawn = drawn.partitionGroupWaitDepth < Math.min(HISTORIC_GROUP_WAIT_DEPTH, drawn.partitionPipelineDepth);
    const variants: Variant[] = [{ groupWaitDepth: null, inlineFrontier: false }];
    if (drawn.asyncFrontier) variants.push({ groupWaitDepth: null, inlineFrontier: true });
    if (depthDrawn) variants.push({ groupWaitDepth: HISTORIC_GROUP_WAIT_DEPTH, inlineFrontier: true });
    for (const v of variants) {
      const r = new Simulation({
        ...drawn,
        ...(v.groupWaitDepth === null ? {} : { partitionGroupWaitDepth: v.groupWaitDepth }),
        ...(v.inlineFrontier ? { asyncFrontier: false } : {}),
      }).run();
      const flag = `${v.groupWaitDepth === null ? '' : ` --group-wait-depth ${v.groupWaitDepth}`}${v.inlineFrontier ? ' --inline-frontier' : ''}`;
      if (!r.ok) out.push(`seed ${seed} (replicas ${replicas}${flag}): ${r.failure ?? ''}\n  replay: npm run vopr -- --seed ${seed} --replicas ${replicas}${flag}`);
    }
  }
  return out;
}
