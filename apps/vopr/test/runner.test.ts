/**
 * `vopr --seeds`: the real CLI on worker threads, its results file, and --resume (an interrupted
 * range continues without running a seed twice); the summary names every coverage mark.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECTED_MARKS } from '@shoal/simulator';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'vopr-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI; exit 0 when every seed passed, 1 when some failed (the summary says which). */
function vopr(...args: string[]): { out: string; passed: number; failed: number } {
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/vopr/src/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });
  const m = /(\d+) passed, (\d+) failed/.exec(r.stdout);
  if (m === null) throw new Error(`no summary (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  const passed = Number(m[1]);
  const failed = Number(m[2]);
  expect(r.status).toBe(failed > 0 ? 1 : 0);
  return { out: r.stdout, passed, failed };
}

interface Line { seed: number; replicas: number; ok: boolean; marks: object }

function lines(path: string): Line[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
}

describe('vopr --seeds', () => {
  it('runs a range on two workers, records each seed, and resumes without running a seed twice', () => {
    const out = join(dir, 'results.jsonl');
    const first = vopr('--seeds', '3', '--seed-start', '2', '--replicas', '3', '--workers', '2', '--out', out);
    expect(first.passed + first.failed).toBe(3);
    for (const m of EXPECTED_MARKS) expect(first.out).toContain(m.name);
    const recorded = lines(out);
    expect(recorded.map((l) => l.seed).sort()).toEqual([2, 3, 4]);
    expect(recorded.every((l) => l.replicas === 3 && typeof l.marks === 'object')).toBe(true);
    expect(recorded.filter((l) => !l.ok).length).toBe(first.failed);
    for (const l of recorded.filter((x) => !x.ok)) expect(first.out).toContain(`npm run vopr -- --seed ${l.seed} --replicas 3`);

    // The range extended by one seed: only seed 5 runs; the summary counts all four.
    const resumed = vopr('--seeds', '4', '--seed-start', '2', '--replicas', '3', '--workers', '2', '--out', out, '--resume');
    expect(resumed.out).toMatch(/for 1 seeds run, 3 from the results file/);
    const after = lines(out);
    expect(after.map((l) => l.seed).sort()).toEqual([2, 3, 4, 5]);
    expect(resumed.passed + resumed.failed).toBe(4);
    expect(resumed.failed).toBe(after.filter((l) => !l.ok).length);
  }, 120_000);
});
