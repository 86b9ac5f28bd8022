/**
 * `npm run bench:micro -- [suite ...] [--quick] [--rounds N] [--round-ms N]`
 *
 * Runs the named suites (default: all) found in src/suites/*.ts and prints one compact table per
 * suite plus its conclusions (ratios, crossovers). Numbers are medians over interleaved rounds.
 */
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { xxh3Backend } from '@shoal/protocol';
import { formatTable } from './table.js';
import type { BenchSettings, Suite } from './suite.js';

const SUITES_DIR = fileURLToPath(new URL('./suites/', import.meta.url));

async function loadSuites(): Promise<Suite[]> {
  const files = readdirSync(SUITES_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
  const suites: Suite[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(SUITES_DIR, file)).href)) as { default?: Partial<Suite> };
    const suite = module.default;
    if (suite === undefined || typeof suite.name !== 'string' || typeof suite.run !== 'function') {
      throw new Error(`src/suites/${file}: default export is not a Suite { name, description, run }`);
    }
    suites.push(suite as Suite);
  }
  return suites;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'round-ms': { type: 'string' },
    },
  });
  const settings: BenchSettings = {
    rounds: Number(values.rounds ?? (values.quick === true ? 3 : 7)),
    roundMillis: Number(values['round-ms'] ?? (values.quick === true ? 15 : 40)),
    warmupRounds: values.quick === true ? 1 : 2,
  };
  const suites = await loadSuites();
  const unknown = positionals.filter((name) => !suites.some((s) => s.name === name));
  if (unknown.length > 0) {
    console.error(`unknown suite(s) ${unknown.join(', ')}; available: ${suites.map((s) => s.name).join(', ')}`);
    return 1;
  }
  const selected = positionals.length === 0 ? suites : suites.filter((s) => positionals.includes(s.name));
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  console.log(
    `node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} × ${cpu}; xxh3 backend ${xxh3Backend()}; ` +
      `${settings.rounds} rounds × ~${settings.roundMillis} ms, median`,
  );
  for (const suite of selected) {
    console.log(`\n== ${suite.name}: ${suite.description}`);
    const result = await suite.run(settings);
    console.log(formatTable(result.rows));
    for (const note of result.notes) console.log(`  ${note}`);
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
