/**
 * `npm run vectors -- <file-or-folder>...`: checks every vector file (format of
 * shared/vectors/README.md), prints one line per failing vector and a last line
 * `N passed, M failed`; exits 1 on any failure. With no argument it checks ../shared/vectors.
 */
import { resolve } from 'node:path';
import { xxh3Backend } from '../src/hash/xxh3.js';
import { checkPaths } from './vectors/check-paths.js';
import { vectorsDir } from './vectors/locate.js';

/** Runs the check and prints the report; returns the exit code. */
export function main(argv: readonly string[]): number {
  const paths = argv.length > 0 ? argv.map((p) => resolve(p)) : [vectorsDir()];
  const outcomes = checkPaths(paths);
  let passed = 0;
  let failed = 0;
  for (const outcome of outcomes) {
    if (outcome.ok) passed++;
    else {
      failed++;
      console.log(`FAIL ${outcome.id}: ${outcome.detail}`);
    }
  }
  console.error(`(xxh3 backend: ${xxh3Backend()})`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('scripts/vectors.ts')) {
  process.exitCode = main(process.argv.slice(2));
}
