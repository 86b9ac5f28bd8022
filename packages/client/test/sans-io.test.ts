import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The SDK's own import rule (ARCHITECTURE.md): only `src/transport/**` touches sockets, timers,
 * clocks and OS randomness; the session core is sans-IO and synchronous. Everything else gets
 * time and randomness through the Scheduler and RandomSource it is handed.
 */
const src = fileURLToPath(new URL('../src/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.ts') ? [path] : [];
  });
}

const strip = (source: string): string => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const IO: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  { pattern: /from\s+['"]node:/, why: 'node: module' },
  { pattern: /\bset(Timeout|Interval|Immediate)\s*\(/, why: 'timer' },
  { pattern: /\bDate\.now\s*\(|\bnew\s+Date\s*\(|\bperformance\.now\s*\(/, why: 'clock' },
  { pattern: /\bMath\.random\s*\(|\brandomBytes\s*\(|\bgetRandomValues\b/, why: 'randomness' },
];

const ASYNC: readonly RegExp[] = [/\basync\b/, /\bawait\b/, /\bnew\s+Promise\b/, /\bPromise\.(resolve|all|race|any)\b/];

describe('sans-IO boundaries of @shoal/client', () => {
  it('only src/transport touches sockets, timers, clocks and OS randomness', () => {
    const offenders: string[] = [];
    for (const file of files(src)) {
      const rel = relative(src, file);
      if (rel.startsWith('transport')) continue;
      const source = strip(readFileSync(file, 'utf8'));
      for (const { pattern, why } of IO) if (pattern.test(source)) offenders.push(`${rel}: ${why}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the session core is synchronous and imports nothing but the protocol, stdx and errors', () => {
    const source = strip(readFileSync(join(src, 'session.ts'), 'utf8'));
    expect(ASYNC.filter((p) => p.test(source)).map(String)).toEqual([]);
    const imports = [...source.matchAll(/from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(new Set(imports)).toEqual(new Set(['@shoal/protocol', '@shoal/stdx', './errors.js']));
  });
});
