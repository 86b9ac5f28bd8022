/**
 * Where tests find golden vectors and spec tables: the verbatim copies in test/fixtures/
 * (provenance in test/fixtures/README.md), so `npm test` needs nothing outside the repository.
 * `npm run vectors` points SHOAL_VECTORS / SHOAL_SPEC at the live reference set and runs the
 * same tests again.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures');

function fromEnv(name: string): string | null {
  const value = process.env[name];
  return value === undefined || value === '' ? null : resolve(value);
}

/** The golden vectors folder: SHOAL_VECTORS, else test/fixtures/vectors. */
export function vectorsDir(): string {
  return fromEnv('SHOAL_VECTORS') ?? join(FIXTURES_DIR, 'vectors');
}

/** The spec tables folder: SHOAL_SPEC, else test/fixtures/spec. */
export function specDir(): string {
  return fromEnv('SHOAL_SPEC') ?? join(FIXTURES_DIR, 'spec');
}

/** One vector file, parsed. */
export function loadVectorFile(file: string): unknown {
  return JSON.parse(readFileSync(join(vectorsDir(), file), 'utf8')) as unknown;
}

/** One spec file's text. */
export function readSpecFile(file: string): string {
  return readFileSync(join(specDir(), file), 'utf8');
}
