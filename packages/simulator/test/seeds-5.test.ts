/**
 * The simulator suite, 5-replica clusters (runs in parallel with seeds-3.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { Simulation, optionsForSeed } from '../src/index.js';

describe('simulator seeds', () => {
  it('180 seeds of 5 replicas pass', () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= 180; seed++) {
      const r = new Simulation(optionsForSeed(seed, 5)).run();
      if (!r.ok) failures.push(`seed ${seed} (replicas 5): ${r.failure ?? ''}`);
    }
    expect(failures).toEqual([]);
  }, 170_000);
});
