import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf, stripComments, walk } from '../support/import-graph.js';
import { ALLOWED_IMPORTS, BANNED_ASYNC, BANNED_IN_PURE, EXCEPTIONS, NO_ASYNC_PACKAGES, PURE_PACKAGES } from './rules.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function workspaces(): string[] {
  const result: string[] = [];
  for (const group of ['packages', 'apps', 'bench']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (existsSync(join(dir, name, 'package.json'))) result.push(`${group}/${name}`);
    }
  }
  return result;
}

describe('tidy: import direction', () => {
  const all = workspaces();
  it('every workspace is covered by the rules', () => {
    const unknown = all.filter((w) => !(w in ALLOWED_IMPORTS));
    expect(unknown).toEqual([]);
  });
  for (const ws of all) {
    it(`${ws} imports only what ARCHITECTURE.md allows`, () => {
      const allowed = new Set((ALLOWED_IMPORTS[ws] ?? []).map((p) => `@shoal/${p}`));
      const violations: string[] = [];
      for (const file of walk(join(root, ws, 'src'), '.ts')) {
        for (const spec of importsOf(readFileSync(file, 'utf8'))) {
          if (spec.startsWith('@shoal/')) {
            const pkg = spec.split('/').slice(0, 2).join('/');
            if (!allowed.has(pkg)) violations.push(`${relative(root, file)} imports ${spec}`);
          } else if (spec.startsWith('.')) {
            // Relative imports must stay inside the workspace's own src.
            const target = join(file, '..', spec);
            if (!target.startsWith(join(root, ws, 'src'))) violations.push(`${relative(root, file)} reaches outside src: ${spec}`);
          }
        }
      }
      expect(violations).toEqual([]);
    });
  }
  it('nothing in production imports the simulator', () => {
    const offenders: string[] = [];
    for (const ws of all.filter((w) => w.startsWith('packages/') && w !== 'packages/simulator' || w === 'apps/server' || w === 'apps/cli')) {
      for (const file of walk(join(root, ws, 'src'), '.ts')) {
        if (importsOf(readFileSync(file, 'utf8')).some((s) => s.startsWith('@shoal/simulator'))) offenders.push(relative(root, file));
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('tidy: pure packages', () => {
  for (const ws of PURE_PACKAGES) {
    it(`${ws}/src uses no clocks, randomness, timers or node: modules`, () => {
      const violations: string[] = [];
      for (const file of walk(join(root, ws, 'src'), '.ts')) {
        const rel = relative(root, file);
        if (rel in EXCEPTIONS) continue;
        const source = stripComments(readFileSync(file, 'utf8'));
        for (const { pattern, why } of BANNED_IN_PURE) if (pattern.test(source)) violations.push(`${rel}: ${why}`);
      }
      expect(violations).toEqual([]);
    });
  }
  for (const ws of NO_ASYNC_PACKAGES) {
    it(`${ws}/src is synchronous`, () => {
      const violations: string[] = [];
      for (const file of walk(join(root, ws, 'src'), '.ts')) {
        const source = stripComments(readFileSync(file, 'utf8'));
        for (const { pattern, why } of BANNED_ASYNC) if (pattern.test(source)) violations.push(`${relative(root, file)}: ${why}`);
      }
      expect(violations).toEqual([]);
    });
  }
  it('the rules themselves catch a violation (self-test)', () => {
    const sample = "import { readFileSync } from 'node:fs';\nconst t = Date.now();\n";
    expect(BANNED_IN_PURE.filter(({ pattern }) => pattern.test(sample)).length).toBe(2);
    expect(BANNED_ASYNC.some(({ pattern }) => pattern.test('async function f() {}'))).toBe(true);
    expect(importsOf("import type { X } from '@shoal/state';\nexport { y } from './y.js';")).toEqual(['@shoal/state', './y.js']);
  });
});

describe('tidy: no `any` in exported signatures', () => {
  it('the emitted declarations of every package contain no `any`', () => {
    const offenders: string[] = [];
    let declarations = 0;
    for (const ws of workspaces().filter((w) => w.startsWith('packages/'))) {
      const dist = join(root, ws, 'dist');
      expect(existsSync(dist), `${ws}/dist is missing: run \`npm run build\` first (npm test does)`).toBe(true);
      for (const file of walk(dist, '.d.ts')) {
        declarations++;
        const lines = stripComments(readFileSync(file, 'utf8')).split('\n');
        lines.forEach((line, i) => {
          if (/(:|<|,|\||\(|=>)\s*any\b|\bany\[\]|<any>/.test(line)) offenders.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(declarations).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });
});
