import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

/** The shared vectors folder beside the checkout (`../shared/vectors`), or `SHOAL_VECTORS`. */
export function vectorsDir(): string {
  const fromEnv = process.env['SHOAL_VECTORS'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
  const candidate = resolve(repoRoot, '../shared/vectors');
  if (!existsSync(candidate)) throw new Error(`vectors folder not found at ${candidate}; set SHOAL_VECTORS`);
  return candidate;
}
