/**
 * Untrusted bytes become a value or a reason, never an exception. Every decoder and validator in
 * this package returns `Decoded<T>`; reasons are short snake_case strings that are logged and
 * counted by the host.
 */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export function ok<T>(value: T): Decoded<T> {
  return { ok: true, value };
}

export function fail<T = never>(reason: string): Decoded<T> {
  return { ok: false, reason };
}
