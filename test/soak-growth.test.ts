/**
 * The soak's memory verdict (test/support/soak/run.ts `growthProblems`): RSS is measured from a
 * process's first warm sample (after three sampled minutes with traffic; stalled minutes do not
 * warm it), so the fill-up of buffers under first load is not a leak, while growth after it is.
 */
import { describe, expect, it } from 'vitest';
import { type Sample, growthProblems } from './support/soak/run.js';

function minute(index: number, produced: number, rss: number, life = 0): Sample {
  return {
    minute: index, produced, consumed: produced, longestGapMs: 0, gapEndedAt: 0,
    nodes: [{ node: 0, life, sinceStartMs: index * 60_000, rssMiB: rss, heapMiB: 50, externalMiB: 10, loopP99Ms: 1, loopMaxMs: 1, viewChanges: 0 }],
  };
}

describe('soak growth verdict', () => {
  it('ignores the fill-up of a fresh process, also one that began in a stall', () => {
    const stalledThenWarm = [
      minute(1, 0, 134), minute(2, 0, 138), minute(3, 0, 140), // a stall: nothing warms
      minute(4, 600, 180), minute(5, 600, 215), minute(6, 600, 221),
      ...Array.from({ length: 20 }, (_, i) => minute(7 + i, 600, 221 + (i % 5))),
    ];
    expect(growthProblems(stalledThenWarm)).toEqual([]);
  });

  it('flags a process that keeps growing after its warm-up', () => {
    const leaking = Array.from({ length: 30 }, (_, i) => minute(1 + i, 600, 200 + 4 * i));
    expect(growthProblems(leaking)).toEqual([expect.stringContaining('node 0 process 0: RSS 212 → 316 MiB')]);
  });

  it('warms each process lifetime on its own', () => {
    const restarted = [
      ...Array.from({ length: 10 }, (_, i) => minute(1 + i, 600, 220)),
      minute(11, 600, 120, 1), minute(12, 600, 180, 1), minute(13, 600, 215, 1),
      ...Array.from({ length: 10 }, (_, i) => minute(14 + i, 600, 222, 1)),
    ];
    expect(growthProblems(restarted)).toEqual([]);
  });
});
