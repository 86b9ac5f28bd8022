/**
 * One vector file checker per file kind of shared/vectors/README.md. The `npm run vectors` runner
 * and the test suite both call these, so a vector is checked the same way everywhere.
 */
export interface VectorOutcome {
  /** `<file>#<list>/<name or index>` */
  readonly id: string;
  readonly ok: boolean;
  /** Why it failed (expected vs actual), empty when ok. */
  readonly detail: string;
}

/** Checks every entry of one parsed vector document. Must never throw for a malformed entry:
 *  a malformed entry is a failed outcome naming what was wrong. */
export type VectorChecker = (doc: unknown, fileName: string) => VectorOutcome[];

/** Runs one entry's check, converting an exception (a malformed vector or our bug) into a failure. */
export function checkEntry(id: string, body: () => string | null): VectorOutcome {
  try {
    const problem = body();
    return { id, ok: problem === null, detail: problem ?? '' };
  } catch (error) {
    return { id, ok: false, detail: `threw: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Helper: compare and describe. */
export function expectEqual(what: string, actual: unknown, expected: unknown): string | null {
  const a = typeof actual === 'bigint' ? actual.toString() : actual;
  const e = typeof expected === 'bigint' ? expected.toString() : expected;
  return a === e ? null : `${what}: expected ${String(e)}, got ${String(a)}`;
}
