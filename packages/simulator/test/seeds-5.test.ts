/**
 * The simulator suite, 5-replica clusters (runs in parallel with seeds-3.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { failures, seedList } from './seeds.js';

describe('simulator seeds', () => {
  it('seeds 1..30 of 5 replicas pass (open-bug seeds aside)', () => {
    expect(failures(5, seedList(5, 1, 30))).toEqual([]);
  }, 170_000);
});
