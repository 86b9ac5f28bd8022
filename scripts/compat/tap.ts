/**
 * The node test runner's TAP output (what `run-sdk-e2e.sh` prints): the closing `# pass N` and
 * `# fail M`, and the names of the failed tests (not of the suites that hold them: a suite's
 * failure is `failureType: 'subtestsFailed'`, and `# fail` counts tests only).
 */
export interface TapSummary {
  readonly passed: number;
  readonly failed: number;
  /** Failed leaf tests, by name (`e2e -> cluster::getClusterMetadata`). */
  readonly failures: readonly string[];
  /** Each failure's YAML block (the assertion and its diff), by name. */
  readonly details: ReadonlyMap<string, string>;
  /** The output closed with both counts. */
  readonly complete: boolean;
}

export function parseTap(output: string): TapSummary {
  const lines = output.split('\n');
  const pass = /^# pass (\d+)$/m.exec(output);
  const fail = /^# fail (\d+)$/m.exec(output);
  const failures: string[] = [];
  const details = new Map<string, string>();
  lines.forEach((line, index) => {
    const notOk = /^\s*not ok \d+ - (.*)$/.exec(line);
    if (notOk === null) return;
    // The YAML block after the line (up to its `...`) says whether it is a suite that failed
    // because of its tests, and holds the assertion.
    // The block ends with `...` at the indentation of its `---` (a diff's own "..." is deeper).
    const block: string[] = [];
    let end: string | null = null;
    for (let next = index + 1; next < lines.length; next++) {
      const text = lines[next] ?? '';
      if (/^\s*(not )?ok \d+ - /.test(text) || text === end) break;
      if (end === null && /^\s*---$/.test(text)) end = text.replace('---', '...');
      block.push(text);
    }
    if (block.some((text) => text.includes("failureType: 'subtestsFailed'"))) return;
    const name = unescape(notOk[1] ?? '');
    failures.push(name);
    details.set(name, block.join('\n'));
  });
  return { passed: Number(pass?.[1] ?? 0), failed: Number(fail?.[1] ?? 0), failures, details, complete: pass !== null && fail !== null };
}

/** TAP escapes `#` and `\` in names. */
function unescape(name: string): string {
  return name.replace(/\\#/g, '#').replace(/\\\\/g, '\\').trim();
}
