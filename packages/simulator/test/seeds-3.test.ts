/**
 * The simulator suite, 3-replica clusters (with a few 1- and 2-replica ones): every seed runs
 * the production drivers under its own mix of faults and must pass every checker. A failing seed
 * replays with `npm run vopr -- --seed S --replicas N`.
 */
import { describe, expect, it } from 'vitest';
import { Simulation, optionsForSeed } from '../src/index.js';

function runRange(replicas: number, first: number, count: number): string[] {
  const failures: string[] = [];
  for (let seed = first; seed < first + count; seed++) {
    const r = new Simulation(optionsForSeed(seed, replicas)).run();
    if (!r.ok) failures.push(`seed ${seed} (replicas ${replicas}): ${r.failure ?? ''}`);
  }
  return failures;
}

describe('simulator seeds', () => {
  it('250 seeds of 3 replicas pass', () => {
    expect(runRange(3, 1, 250)).toEqual([]);
  }, 170_000);

  it('20 seeds of 1 replica and 20 of 2 replicas pass', () => {
    expect([...runRange(1, 1, 20), ...runRange(2, 1, 20)]).toEqual([]);
  }, 120_000);
});
