/**
 * Always-on assertions. An assertion failing means OUR bug (never bad input: untrusted bytes are
 * validated into a reason first). Callers crash rather than continue with a broken invariant.
 */
export class AssertionError extends Error {
  override readonly name = 'AssertionError';
}

export function assert(condition: boolean, message?: string): asserts condition {
  if (!condition) throw new AssertionError(message ?? 'assertion failed');
}

export function unreachable(value: never, message?: string): never {
  throw new AssertionError(message ?? `unreachable: ${String(value)}`);
}
