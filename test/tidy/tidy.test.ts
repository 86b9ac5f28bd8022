import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf, stripComments, walk } from '../support/import-graph.js';
import {
  ALLOWED_IMPORTS, BANNED_ASYNC, BANNED_IN_PURE, CONSENSUS_STATE_FILES, EXCEPTIONS, NO_ASYNC_PACKAGES, PURE_PACKAGES, TEST_ONLY_ENTRY_POINTS,
} from './rules.js';
import { findCycle, relativeImports } from './imports.js';

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

describe('tidy: layering inside packages/consensus', () => {
  const src = join(root, 'packages/consensus/src');
  const files = readdirSync(src).filter((name) => name.endsWith('.ts')).sort();
  const graph = new Map<string, ReturnType<typeof relativeImports>>();
  for (const name of files) graph.set(name, relativeImports(stripComments(readFileSync(join(src, name), 'utf8'))));

  it('the value-level import graph has no cycle', () => {
    const edges = new Map<string, string[]>();
    for (const [name, imports] of graph) edges.set(name, imports.filter((i) => !i.typeOnly).map((i) => i.target));
    expect(findCycle(edges)).toEqual(null);
  });
  it('nor does the whole import graph, type-only imports included (stricter than the rule needs)', () => {
    const edges = new Map<string, string[]>();
    for (const [name, imports] of graph) edges.set(name, imports.map((i) => i.target));
    expect(findCycle(edges)).toEqual(null);
  });
  it('state files import only state files (types included)', () => {
    const state = new Set(CONSENSUS_STATE_FILES);
    for (const name of CONSENSUS_STATE_FILES) expect(files, `${name} is listed as state but missing`).toContain(name);
    const violations: string[] = [];
    for (const name of CONSENSUS_STATE_FILES) {
      for (const i of graph.get(name) ?? []) if (!state.has(i.target)) violations.push(`${name} imports ${i.target}`);
    }
    expect(violations).toEqual([]);
  });
  it('production code never imports the test-only entry points', () => {
    const offenders: string[] = [];
    for (const ws of workspaces()) {
      for (const file of walk(join(root, ws, 'src'), '.ts')) {
        const specs = importsOf(readFileSync(file, 'utf8'));
        if (specs.some((spec) => TEST_ONLY_ENTRY_POINTS.includes(spec))) offenders.push(relative(root, file));
      }
    }
    expect(offenders).toEqual([]);
  });
  it('the rule itself sees value cycles and ignores type-only ones (self-test)', () => {
    const a = relativeImports("import type { B } from './b.js';\nimport { c } from './c.js';\nimport { type D } from './d.js';");
    expect(a).toEqual([
      { target: 'b.ts', typeOnly: true },
      { target: 'c.ts', typeOnly: false },
      { target: 'd.ts', typeOnly: false },
    ]);
    expect(findCycle(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']]]))).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    expect(findCycle(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual(null);
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
