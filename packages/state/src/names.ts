import { utf8Length } from '@shoal/protocol';

/**
 * Name rules (apache/iggy core/common/src/commands/**: `validate()`; core/binary_protocol WireName).
 *
 * Stream, topic and consumer-group names: any UTF-8 string of 1..255 bytes (the wire Name; the
 * codec already refuses empty and invalid UTF-8), unique within their parent, compared exactly
 * (case-sensitive, no normalisation). No further charset rule exists in the reference.
 * Usernames: 3..50 bytes. Passwords: 3..100 bytes. Personal-access-token names: 3..30 bytes.
 * Lengths are UTF-8 byte lengths, as the reference's `str::len`.
 */
export const NAME_BYTES_MAX = 255;
export const USERNAME_BYTES = Object.freeze({ min: 3, max: 50 });
export const PASSWORD_BYTES = Object.freeze({ min: 3, max: 100 });
export const PAT_NAME_BYTES = Object.freeze({ min: 3, max: 30 });

function within(value: string, range: { readonly min: number; readonly max: number }): boolean {
  const length = utf8Length(value);
  return length >= range.min && length <= range.max;
}

export function isValidResourceName(name: string): boolean {
  const length = utf8Length(name);
  return length >= 1 && length <= NAME_BYTES_MAX;
}

export function isValidUsername(username: string): boolean {
  return within(username, USERNAME_BYTES);
}

export function isValidPassword(password: string): boolean {
  return within(password, PASSWORD_BYTES);
}

export function isValidPatName(name: string): boolean {
  return within(name, PAT_NAME_BYTES);
}
