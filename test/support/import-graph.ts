/**
 * The relative-import graph of the repository's TypeScript files, for the tidy rules and for
 * `npm run vectors` (which finds the tests that read golden fixtures by what they import).
 * Coarse by design: `import`/`export ... from` and dynamic `import('...')` with literal
 * specifiers; `.js` specifiers resolve to the `.ts` file beside them.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const IMPORT_RE = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

/** Strips block and line comments (coarse: good enough for import specifiers and path literals). */
export function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

export function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const m of stripComments(source).matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec !== undefined) specs.push(spec);
  }
  return specs;
}

/** Every file under `dir` whose name ends with `suffix`, skipping node_modules, dist and dot folders. */
export function walk(dir: string, suffix: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, suffix, out);
    else if (name.endsWith(suffix)) out.push(path);
  }
  return out;
}

/** The file a relative specifier names, or null when it is not a TypeScript file of ours. */
export function resolveRelative(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const target = resolve(dirname(from), spec);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** `entry` and every file it reaches through relative imports. */
export function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const next = resolveRelative(file, spec);
      if (next !== null && !seen.has(next)) stack.push(next);
    }
  }
  return seen;
}

/** The test files `npm test` runs (vitest.config.ts `include`). */
export function testFiles(root: string): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'apps', 'bench']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) walk(join(dir, name, 'test'), '.test.ts', files);
  }
  walk(join(root, 'test'), '.test.ts', files);
  return files.sort();
}
