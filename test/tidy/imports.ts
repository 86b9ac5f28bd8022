/** Relative-import graph helpers for the tidy rules (one package's flat src folder). */

export interface RelativeImport {
  /** The imported file's name inside the same folder (`./x.js` → `x.ts`). */
  readonly target: string;
  /** `import type` / `export type`: erased at compile time. */
  readonly typeOnly: boolean;
}

const STATEMENT_RE = /\b(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.\/[^'"]+)['"]/g;

/** The relative imports and re-exports of a (comment-stripped) source file. */
export function relativeImports(source: string): RelativeImport[] {
  const out: RelativeImport[] = [];
  for (const m of source.matchAll(STATEMENT_RE)) {
    const spec = m[3] as string;
    out.push({ target: spec.slice(2).replace(/\.js$/, '.ts'), typeOnly: m[2] !== undefined });
  }
  return out;
}

/** A cycle in the graph as a closed path (first node repeated at the end), or null. */
export function findCycle(edges: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    const s = state.get(node);
    if (s === 'done') return null;
    if (s === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of [...edges.keys()].sort()) {
    const cycle = visit(node);
    if (cycle !== null) return cycle;
  }
  return null;
}
