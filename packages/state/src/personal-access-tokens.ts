import {
  ErrorCode, PAT_EXPIRY_NEVER, PAT_EXPIRY_SERVER_DEFAULT, blake3, createPersonalAccessTokenCommand,
  deletePersonalAccessTokenCommand, utf8Encoder,
} from '@shoal/protocol';
import { U64_MAX, toHex } from '@shoal/stdx';
import { decodeCreatePat } from './internal-bodies.js';
import type { ApplyContext } from './lookup.js';
import type { MetadataModel, PersonalAccessToken, User } from './model.js';
import { isValidPatName } from './names.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';

/**
 * Personal access tokens. The HOST generates the raw token and places it in the admitted body;
 * apply stores only its hash — BLAKE3-256 of the token's UTF-8 bytes, lowercase hex (the
 * reference's `calculate_256`) — and returns the raw token once, in the CreatePersonalAccessToken
 * reply `[token: Name]` (a replayed reply of that op is refused by the client table, §7.3).
 *
 * Expiry is a duration in µs: 0 (server default = never) and u64::MAX (never) store no expiry;
 * any other value expires at prepare timestamp + expiry (an overflow is
 * InvalidPersonalAccessTokenExpiry). Expiry is evaluated against prepare timestamps on apply and
 * against the caller-supplied `now` on login. An expired token neither blocks its name nor counts
 * against the per-user limit; the host's cleaner removes it with a DeletePersonalAccessToken.
 * PAT ops are self-scoped: no permission is needed (reference parity).
 */
export const PERSONAL_ACCESS_TOKENS_PER_USER_MAX = 100;

export function hashToken(token: string): string {
  return toHex(blake3(utf8Encoder.encode(token)));
}

export function isExpired(token: PersonalAccessToken, now: bigint): boolean {
  return token.expiryAt !== null && token.expiryAt <= now;
}

export function applyCreatePersonalAccessToken(model: MetadataModel, body: Uint8Array, ctx: ApplyContext, perUserMax = PERSONAL_ACCESS_TOKENS_PER_USER_MAX): Outcome {
  const req = decodeCreatePat(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const user = model.users.get(ctx.userId);
  if (user === undefined) return rejected(NotFound.user);
  const { name, expiry, token } = req.value;
  if (!isValidPatName(name)) return rejected(ErrorCode.InvalidPersonalAccessTokenName);
  let expiryAt: bigint | null = null;
  if (expiry !== PAT_EXPIRY_SERVER_DEFAULT && expiry !== PAT_EXPIRY_NEVER) {
    expiryAt = ctx.timestamp + expiry;
    if (expiryAt >= U64_MAX) return rejected(ErrorCode.InvalidPersonalAccessTokenExpiry);
  }
  const existing = user.tokens.get(name);
  if (existing !== undefined && !isExpired(existing, ctx.timestamp)) return rejected(ErrorCode.PersonalAccessTokenAlreadyExists);
  const live = [...user.tokens.values()].filter((t) => !isExpired(t, ctx.timestamp) && t.name !== name).length;
  if (live >= perUserMax) return rejected(ErrorCode.PersonalAccessTokensLimitReached);
  const tokenHash = hashToken(token);
  if (model.tokenIndex.has(tokenHash) && model.tokenIndex.get(tokenHash)?.name !== name) {
    return rejected(ErrorCode.PersonalAccessTokenAlreadyExists);
  }
  if (existing !== undefined) removeToken(model, user, existing);
  const record: PersonalAccessToken = { userId: user.id, name, tokenHash, expiryAt };
  user.tokens.set(name, record);
  model.tokenIndex.set(tokenHash, { userId: user.id, name });
  return accepted(createPersonalAccessTokenCommand.encodeResponse({ token }));
}

export function applyDeletePersonalAccessToken(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deletePersonalAccessTokenCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const user = model.users.get(ctx.userId);
  const token = user?.tokens.get(req.value.name);
  if (user === undefined || token === undefined) return rejected(NotFound.user);
  removeToken(model, user, token);
  return accepted();
}

function removeToken(model: MetadataModel, user: User, token: PersonalAccessToken): void {
  user.tokens.delete(token.name);
  model.tokenIndex.delete(token.tokenHash);
}

/** The user's tokens in name order (GetPersonalAccessTokens; expiry_at 0 = never). */
export function tokensOf(user: User): { name: string; expiryAt: bigint }[] {
  return [...user.tokens.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) => ({ name: t.name, expiryAt: t.expiryAt ?? 0n }));
}
