/**
 * `vopr --seeds`: the real CLI on worker threads, its results file, and --resume (an interrupted
 * range continues without running a seed twice); the summary names every coverage mark.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECTED_MARKS } from '@shoal/simulator';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'vopr-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function vopr(...args: string[]): string {
  return execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/vopr/src/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });
}

describe('vopr --seeds', () => {
  it('runs a range on two workers, records each seed, and resumes without running a seed twice', () => {
    const out = join(dir, 'results.jsonl');
    // Seeds 2..5 of 3 replicas pass today (seeds.ts); 3 of them first, then the range extended.
    const first = vopr('--seeds', '3', '--seed-start', '2', '--replicas', '3', '--workers', '2', '--out', out);
    expect(first).toMatch(/3 passed, 0 failed/);
    for (const m of EXPECTED_MARKS) expect(first).toContain(m.name);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seed: number; ok: boolean; marks: object });
    expect(lines.map((l) => l.seed).sort()).toEqual([2, 3, 4]);
    expect(lines.every((l) => l.ok && typeof l.marks === 'object')).toBe(true);

    const resumed = vopr('--seeds', '4', '--seed-start', '2', '--replicas', '3', '--workers', '2', '--out', out, '--resume');
    expect(resumed).toMatch(/4 passed, 0 failed .*for 1 seeds run, 3 from the results file/);
    const after = readFileSync(out, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { seed: number }).seed);
    expect(after.sort()).toEqual([2, 3, 4, 5]);
  }, 120_000);
});
