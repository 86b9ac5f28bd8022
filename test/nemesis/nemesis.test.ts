/**
 * The nemesis in the suite (issue 12 item 7): a short seeded run on a 3-node and on a 5-node
 * cluster of real `shoal-server` processes, with concurrent producers and stream creates and
 * deletes, under kill -9, SIGSTOP/SIGCONT, rolling restarts with overlapping recovery and
 * blackholed or dropped replica links (test/support/nemesis). After the final heal every node is
 * read separately: every acknowledged message at its offset on every node, identical partitions,
 * dense offsets, duplicates only from re-sent unknown outcomes, identical catalogs, no crash.
 *
 * A failure prints the whole report: the seed, the replay command, the episodes and the nodes'
 * key log lines. Long runs: `npm run nemesis -- --minutes N --seed S` (docs/nemesis.md).
 */
import { describe, expect, it } from 'vitest';
import { formatReport, runNemesis } from '../support/nemesis/run.js';

/** Planned fault time per run: a few episodes each; the whole file stays near two minutes. */
const FAULT_MS = 30_000;
const RUN_TIMEOUT_MS = 360_000;

describe('nemesis on real processes', () => {
  for (const { nodes, seed } of [{ nodes: 3, seed: 1 }, { nodes: 5, seed: 2 }]) {
    it(`${nodes} nodes, seed ${seed}: every acknowledged write on every node, the nodes identical`, async () => {
      const report = await runNemesis({ seed, nodes, durationMs: FAULT_MS });
      const text = formatReport(report);
      expect(report.problems, text).toEqual([]);
      // The run did what it claims: faults happened and writes went through them.
      expect(report.episodes.length, text).toBeGreaterThan(0);
      expect(report.ackedBatches, text).toBeGreaterThan(0);
      expect(report.streamsCreated, text).toBeGreaterThan(0);
    }, RUN_TIMEOUT_MS);
  }
});
