/**
 * The simulator suite, 5-replica clusters (runs in parallel with seeds-3.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { failures, seedRange } from './seeds.js';

describe('simulator seeds', () => {
  it('seeds 1..30 of 5 replicas pass', () => {
    expect(failures(5, seedRange(1, 30))).toEqual([]);
  }, 170_000);
});
