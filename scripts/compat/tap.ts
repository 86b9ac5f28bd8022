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
  /** The output closed with both counts. */
  readonly complete: boolean;
}

export function parseTap(output: string): TapSummary {
  const lines = output.split('\n');
  const pass = /^# pass (\d+)$/m.exec(output);
  const fail = /^# fail (\d+)$/m.exec(output);
  const failures: string[] = [];
  lines.forEach((line, index) => {
    const notOk = /^\s*not ok \d+ - (.*)$/.exec(line);
    if (notOk === null) return;
    // The YAML block after the line says whether it is a suite that failed because of its tests.
    for (let next = index + 1; next < lines.length && next < index + 12; next++) {
      const text = lines[next] ?? '';
      if (/^\s*(not )?ok \d+ - /.test(text)) break;
      if (text.includes("failureType: 'subtestsFailed'")) return;
    }
    failures.push(unescape(notOk[1] ?? ''));
  });
  return { passed: Number(pass?.[1] ?? 0), failed: Number(fail?.[1] ?? 0), failures, complete: pass !== null && fail !== null };
}

/** TAP escapes `#` and `\` in names. */
function unescape(name: string): string {
  return name.replace(/\\#/g, '#').replace(/\\\\/g, '\\').trim();
}
