import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkPaths } from '../scripts/vectors/check-paths.js';
import { vectorsDir } from '../../../test/support/fixtures.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('npm run vectors', () => {
  it('passes every shared vector, and counts at least what index.json lists', () => {
    const outcomes = checkPaths([vectorsDir()]);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    const index = JSON.parse(readFileSync(join(vectorsDir(), 'index.json'), 'utf8')) as { files: Record<string, Record<string, number>> };
    const listed = Object.values(index.files).flatMap((c) => Object.values(c)).reduce((a, b) => a + b, 0);
    expect(outcomes.length).toBeGreaterThanOrEqual(listed);
  });

  it('reports a tampered vector, an unknown JSON file and a wrong index count', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vectors-'));
    const xxh3 = JSON.parse(readFileSync(join(vectorsDir(), 'xxh3.json'), 'utf8')) as { vectors: { xxh3_64_dec: string }[] };
    const first = xxh3.vectors[0]!;
    first.xxh3_64_dec = (BigInt(first.xxh3_64_dec) + 1n).toString();
    writeFileSync(join(dir, 'renamed-hashes.json'), JSON.stringify(xxh3)); // found by shape, not name
    writeFileSync(join(dir, 'mystery.json'), JSON.stringify({ hello: 1 }));
    writeFileSync(join(dir, 'index.json'), JSON.stringify({ files: { 'renamed-hashes.json': { vectors: 59 } } }));
    const failures = checkPaths([dir]).filter((o) => !o.ok).map((o) => o.id);
    expect(failures.some((id) => id.startsWith('renamed-hashes.json#vectors/'))).toBe(true);
    expect(failures).toContain('mystery.json');
    expect(failures).toContain('index.json#files/renamed-hashes.json');
  });

  it('the CLI prints `N passed, M failed` last and exits 1 on failure', () => {
    const ok = spawnSync('npm', ['run', '--silent', 'vectors', '--', join(vectorsDir(), 'cluster_id.json')], { cwd: root, encoding: 'utf8' });
    expect(ok.status).toBe(0);
    expect(ok.stdout.trim().split('\n').pop()).toBe('5 passed, 0 failed');
    const dir = mkdtempSync(join(tmpdir(), 'vectors-bad-'));
    writeFileSync(join(dir, 'x.json'), '{not json');
    const bad = spawnSync('npm', ['run', '--silent', 'vectors', '--', dir], { cwd: root, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stdout.trim().split('\n').pop()).toBe('0 passed, 1 failed');
  });
});
