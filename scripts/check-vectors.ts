/**
 * `npm run vectors`: the checks against the live reference set beside the checkout (CI runs it
 * after `npm test`; `npm test` itself reads only test/fixtures/).
 *
 *   npm run vectors                      the reference set: ../shared/vectors (or SHOAL_VECTORS)
 *                                        and ../shared/spec (or SHOAL_SPEC):
 *                                        1. every vector file through the checker;
 *                                        2. fixture drift: which copies in test/fixtures/ differ
 *                                           from the live set, and which live files have none;
 *                                        3. every test that reads fixtures, run again against the
 *                                           live set (vitest with SHOAL_VECTORS / SHOAL_SPEC).
 *   npm run vectors -- <file-or-folder>  only the checker, over the given files
 *
 * Exits non-zero when a check or a test fails (drift alone is reported, not failed: the live
 * set may hold vectors the fixtures do not, and the tests of step 3 judge them).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { main as checkVectorFiles } from '../packages/protocol/scripts/vectors.js';
import { FIXTURES_DIR, REPO_ROOT } from '../test/support/fixtures.js';
import { reachable, testFiles } from '../test/support/import-graph.js';

const FIXTURES_MODULE = join(REPO_ROOT, 'test', 'support', 'fixtures.ts');

function liveDir(env: string, fallback: string): string {
  const value = process.env[env];
  return value !== undefined && value !== '' ? resolve(value) : resolve(REPO_ROOT, '..', 'shared', fallback);
}

/** Fixture files that differ from (or are missing in) the live folder; with `uncopied`, also live files without a fixture. */
function drift(fixtures: string, live: string, uncopied: boolean): string[] {
  const report: string[] = [];
  const ours = readdirSync(fixtures);
  for (const name of ours) {
    const original = join(live, name);
    if (!existsSync(original)) report.push(`${name}: not in the live set`);
    else if (!readFileSync(join(fixtures, name)).equals(readFileSync(original))) report.push(`${name}: the fixture differs from the live copy (refresh it verbatim)`);
  }
  if (uncopied) for (const name of readdirSync(live)) if (!ours.includes(name)) report.push(`${name}: no fixture copy`);
  return report;
}

function run(): number {
  const vectors = liveDir('SHOAL_VECTORS', 'vectors');
  const spec = liveDir('SHOAL_SPEC', 'spec');
  for (const dir of [vectors, spec]) {
    if (!existsSync(dir)) {
      console.error(`vectors: the reference set is not at ${dir} (set SHOAL_VECTORS / SHOAL_SPEC); npm test needs none of it`);
      return 1;
    }
  }

  console.log(`== 1. vector files of ${vectors}`);
  const checked = checkVectorFiles([vectors]);

  console.log('== 2. fixture drift');
  const drifted = [
    ...drift(join(FIXTURES_DIR, 'vectors'), vectors, true).map((line) => `vectors/${line}`),
    ...drift(join(FIXTURES_DIR, 'spec'), spec, false).map((line) => `spec/${line}`),
  ];
  for (const line of drifted) console.log(`drift: ${line}`);
  console.log(drifted.length === 0 ? 'fixtures identical to the live set' : `${drifted.length} drifted (reported, not failed)`);

  console.log('== 3. the fixture-reading tests against the live set');
  const tests = testFiles(REPO_ROOT).filter((file) => reachable(file).has(FIXTURES_MODULE) && !file.includes('/test/tidy/'));
  console.log(tests.map((file) => `  ${relative(REPO_ROOT, file)}`).join('\n'));
  const vitest = spawnSync('npx', ['vitest', 'run', ...tests.map((file) => relative(REPO_ROOT, file))], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, SHOAL_VECTORS: vectors, SHOAL_SPEC: spec },
  });
  const tested = vitest.status ?? 1;
  return checked !== 0 || tested !== 0 ? 1 : 0;
}

if (process.argv[1]?.endsWith('check-vectors.ts')) {
  const args = process.argv.slice(2);
  process.exitCode = args.length > 0 ? checkVectorFiles(args) : run();
}
