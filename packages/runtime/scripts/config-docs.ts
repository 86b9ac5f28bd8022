/**
 * Rewrites the generated key reference inside docs/configuration.md from the schema.
 *   npm run docs:config -w @shoal/runtime
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REFERENCE_BEGIN, REFERENCE_END, renderConfigReference } from '../src/config/index.js';

const page = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));
const text = readFileSync(page, 'utf8');
const begin = text.indexOf(REFERENCE_BEGIN);
const end = text.indexOf(REFERENCE_END);
if (begin < 0 || end < begin) throw new Error(`${page}: generated-reference markers not found`);
const updated = `${text.slice(0, begin)}${renderConfigReference()}${text.slice(end + REFERENCE_END.length)}`;
if (updated !== text) writeFileSync(page, updated);
console.log(updated === text ? `${page}: up to date` : `${page}: rewritten`);
