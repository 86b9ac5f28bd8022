/**
 * A plain clone passes `npm test` with nothing beside it:
 * - no test, nothing a test imports, and no workspace source names a path into `shared/` (the
 *   reference set beside a development checkout); tests read the verbatim copies in
 *   test/fixtures/ through test/support/fixtures.ts, and `npm run vectors` re-runs them against
 *   the live set;
 * - every fixture is byte for byte the copy its README records (SHA-256), so none is edited to
 *   fit the code.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES_DIR, REPO_ROOT } from '../support/fixtures.js';
import { reachable, stripComments, testFiles, walk } from '../support/import-graph.js';

/** A path into the sibling `shared/` folder: `../shared/...`, `shared/vectors`, or `'shared'` as a join() segment. */
const SHARED_PATH = /(?<![\w$.-])shared(?:[/\\]|['"`]\s*[,)+;])/;

function offenders(files: Iterable<string>): string[] {
  const found: string[] = [];
  for (const file of files) {
    const lines = stripComments(readFileSync(file, 'utf8')).split('\n');
    lines.forEach((line, i) => {
      if (SHARED_PATH.test(line)) found.push(`${relative(REPO_ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe('tidy: self-contained tests', () => {
  it('no test, and nothing a test imports, reads the sibling reference folder', () => {
    const files = new Set<string>();
    const tests = testFiles(REPO_ROOT);
    expect(tests.length).toBeGreaterThan(100);
    for (const test of tests) for (const file of reachable(test)) files.add(file);
    expect(offenders(files)).toEqual([]);
  });

  it('no workspace source reads the sibling reference folder', () => {
    const files: string[] = [];
    for (const group of ['packages', 'apps', 'bench']) {
      for (const name of readdirSync(join(REPO_ROOT, group))) walk(join(REPO_ROOT, group, name, 'src'), '.ts', files);
    }
    expect(files.length).toBeGreaterThan(100);
    expect(offenders(files)).toEqual([]);
  });

  it('the rule catches every way a test has spelled it (self-test)', () => {
    // Spelled with a placeholder so this file does not trip its own rule.
    const spell = (line: string): string => line.replaceAll('{S}', 'sh' + 'ared');
    const spelled = [
      "readFileSync(new URL('../../../../{S}/spec/commands.mdx', import.meta.url), 'utf8')",
      "readFileSync(join(root, '..', '{S}', 'vectors', 'replica_frames.json'), 'utf8')",
      "resolve(repoRoot, '../{S}/vectors')",
      'const dir = `${root}/../{S}`;',
    ].map(spell);
    for (const line of spelled) expect(SHARED_PATH.test(line), line).toBe(true);
    const fine = ['new SharedArrayBuffer(64)', "const sharedSecret = 'x';", "it('{S} doorbell', () => {})", "loadVectorFile('xxh3.json')"].map(spell);
    for (const line of fine) expect(SHARED_PATH.test(line), line).toBe(false);
    expect(stripComments(spell('// reads ../{S}/vectors\nconst x = 1;'))).not.toMatch(SHARED_PATH);
  });
});

describe('tidy: fixtures are verbatim copies', () => {
  const readme = readFileSync(join(FIXTURES_DIR, 'README.md'), 'utf8');
  const recorded = new Map([...readme.matchAll(/^\| `([^`]+)` \| `([0-9a-f]{64})` \|$/gm)].map((m) => [m[1]!, m[2]!]));

  it('the README records a checksum for every fixture file, and only for those', () => {
    const files = [...walk(FIXTURES_DIR, '')].map((f) => relative(FIXTURES_DIR, f)).filter((f) => f !== 'README.md').sort();
    expect(files.length).toBeGreaterThanOrEqual(13);
    expect([...recorded.keys()].sort()).toEqual(files);
  });

  it('every fixture hashes to its recorded SHA-256', () => {
    const mismatched: string[] = [];
    for (const [file, sha] of recorded) {
      const actual = createHash('sha256').update(readFileSync(join(FIXTURES_DIR, file))).digest('hex');
      if (actual !== sha) mismatched.push(`${file}: ${actual} (README: ${sha})`);
    }
    expect(mismatched).toEqual([]);
  });
});
