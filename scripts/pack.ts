/**
 * `npm run pack [-- <dir>]`: `npm pack` of every publishable workspace (each package.json without
 * `"private": true`: the SDK `@shoal/client` with `@shoal/protocol` and `@shoal/stdx`, the server
 * `@shoal/server` (`shoal-server`) with the libraries it runs on, the CLI `@shoal/cli` (`shoal`))
 * into `<dir>` (default `packages-out/`). Build first (`npm run build`; `npm install` does).
 * Install them in any project with `npm install <dir>/*.tgz`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface PackedFile {
  readonly path: string;
}

export interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly files: readonly PackedFile[];
}

/** Workspace folders whose package.json is not private, in dependency-agnostic order. */
export function publishableWorkspaces(root = REPO_ROOT): string[] {
  const found: string[] = [];
  for (const group of ['packages', 'apps', 'bench']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const manifest = join(dir, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { private?: boolean };
      if (pkg.private !== true) found.push(`${group}/${name}`);
    }
  }
  return found;
}

/** Packs every publishable workspace into `destination`; returns npm's report. */
export function packAll(destination: string, root = REPO_ROOT): Packed[] {
  mkdirSync(destination, { recursive: true });
  const workspaces = publishableWorkspaces(root).flatMap((ws) => ['--workspace', ws]);
  const result = spawnSync('npm', ['pack', '--json', '--pack-destination', destination, ...workspaces], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm pack failed (${result.status}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as Packed[];
}

if (process.argv[1]?.endsWith('scripts/pack.ts')) {
  const destination = resolve(process.argv[2] ?? join(REPO_ROOT, 'packages-out'));
  for (const packed of packAll(destination)) console.log(`${packed.name}@${packed.version}  ${join(destination, packed.filename)}  (${packed.files.length} files)`);
}
