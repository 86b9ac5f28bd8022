/**
 * Checks vector files and folders (format of shared/vectors/README.md): every file is matched to
 * its checker by name or shape; an `index.json` is checked against the files it lists.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { VectorOutcome } from './outcome.js';
import { checkIndex, checkerFor } from './registry.js';

export function checkPaths(paths: readonly string[]): VectorOutcome[] {
  const outcomes: VectorOutcome[] = [];
  for (const path of paths) {
    const files = statSync(path).isDirectory()
      ? readdirSync(path).filter((n) => n.endsWith('.json')).sort().map((n) => join(path, n))
      : [path];
    const docs = new Map<string, unknown>();
    for (const file of files) {
      try {
        docs.set(basename(file), JSON.parse(readFileSync(file, 'utf8')) as unknown);
      } catch (error) {
        outcomes.push({ id: basename(file), ok: false, detail: `unreadable JSON: ${(error as Error).message}` });
      }
    }
    for (const [name, doc] of docs) {
      if (name === 'index.json') {
        const folder = statSync(path).isDirectory() ? docs : loadSiblings(path, doc);
        outcomes.push(...checkIndex(doc, name, folder));
        continue;
      }
      const checker = checkerFor(name, doc);
      if (checker === null) {
        outcomes.push({ id: name, ok: false, detail: 'not a vector file of a known format' });
        continue;
      }
      const results = checker(doc, name);
      if (results.length === 0) outcomes.push({ id: name, ok: false, detail: 'no vectors found in file' });
      outcomes.push(...results);
    }
  }
  return outcomes;
}

/** For an index.json given alone: the files it lists, read from its folder. */
function loadSiblings(indexPath: string, doc: unknown): Map<string, unknown> {
  const folder = new Map<string, unknown>();
  const files = (doc as { files?: Record<string, unknown> } | null)?.files ?? {};
  for (const name of Object.keys(files)) {
    try {
      folder.set(name, JSON.parse(readFileSync(join(indexPath, '..', name), 'utf8')) as unknown);
    } catch {
      // Missing or unreadable: checkIndex reports it.
    }
  }
  return folder;
}
