/**
 * Publishable packages (every workspace without `"private": true`) carry what a registry user
 * needs, and declare every package their sources import (an undeclared import works inside the
 * workspace, where everything is hoisted, and breaks for whoever installs the tarball alone).
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishableWorkspaces } from '../../scripts/pack.js';
import { REPO_ROOT } from '../support/fixtures.js';
import { importsOf, walk } from '../support/import-graph.js';

interface Manifest {
  name: string;
  license?: string;
  files?: string[];
  engines?: { node?: string };
  exports?: Record<string, { types?: string; default?: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  publishConfig?: { access?: string };
}

const read = (path: string): string => readFileSync(path, 'utf8');
const manifest = (ws: string): Manifest => JSON.parse(read(join(REPO_ROOT, ws, 'package.json'))) as Manifest;
const BUILTINS = new Set(builtinModules);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`; null for node built-ins. */
function packageOf(spec: string): string | null {
  if (spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0] ?? '')) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

describe('tidy: publishable packages', () => {
  const publishable = publishableWorkspaces();
  const root = JSON.parse(read(join(REPO_ROOT, 'package.json'))) as Manifest;
  const license = read(join(REPO_ROOT, 'LICENSE'));

  it('are the SDK, the server and the CLI with the libraries they run on', () => {
    expect(publishable.map((ws) => manifest(ws).name).sort()).toEqual([
      '@shoal/cli', '@shoal/client', '@shoal/consensus', '@shoal/gateway', '@shoal/protocol', '@shoal/replica', '@shoal/ring', '@shoal/runtime',
      '@shoal/server', '@shoal/state', '@shoal/stdx', '@shoal/storage',
    ]);
  });

  for (const ws of publishableWorkspaces()) {
    it(`${ws}: license, README, files, engines, typed exports`, () => {
      const pkg = manifest(ws);
      expect(pkg.license).toBe('Apache-2.0');
      expect(read(join(REPO_ROOT, ws, 'LICENSE'))).toBe(license);
      expect(read(join(REPO_ROOT, ws, 'README.md'))).toContain(`# ${pkg.name}`);
      expect(pkg.files).toContain('dist');
      expect(pkg.engines?.node).toBe(root.engines?.node);
      expect(pkg.publishConfig?.access).toBe('public');
      for (const [entry, target] of Object.entries(pkg.exports ?? {})) {
        expect(target.types, `${ws} exports ${entry}`).toMatch(/^\.\/dist\/.*\.d\.ts$/);
        expect(target.default, `${ws} exports ${entry}`).toMatch(/^\.\/dist\/.*\.js$/);
      }
    });

    it(`${ws}: every package its sources import is a declared dependency`, () => {
      const pkg = manifest(ws);
      const declared = new Set([pkg.name, ...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
      const undeclared = new Set<string>();
      for (const file of walk(join(REPO_ROOT, ws, 'src'), '.ts')) {
        for (const spec of importsOf(read(file))) {
          if (spec.startsWith('.')) continue;
          const name = packageOf(spec);
          if (name !== null && !declared.has(name)) undeclared.add(name);
        }
      }
      expect([...undeclared]).toEqual([]);
    });
  }

  it('workspace dependencies are pinned to the version of the workspace package', () => {
    const versions = new Map(publishable.map((ws) => [manifest(ws).name, (JSON.parse(read(join(REPO_ROOT, ws, 'package.json'))) as { version: string }).version]));
    const wrong: string[] = [];
    for (const ws of publishable) {
      for (const [dep, range] of Object.entries(manifest(ws).dependencies ?? {})) {
        if (dep.startsWith('@shoal/') && versions.get(dep) !== range) wrong.push(`${ws}: ${dep}@${range}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
