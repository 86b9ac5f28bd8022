/**
 * Authentication on the HTTP port, as the reference does it for its metrics endpoint
 * (apache/iggy core/server/src/http/metrics.rs, extractor.rs): the scraper presents
 * `Authorization: Bearer <credential>`, any authenticated user may scrape. The dashboard's JSON
 * (`/api/v1/*`) takes the same bearer, as the reference's HTTP API does for all but its probes. The reference accepts a
 * JWT from its REST login or a raw personal access token; Shoal has no REST login, so the
 * credential is a personal access token (made with CreatePersonalAccessToken, `shoal pat create`).
 *
 * The supervisor holds no metadata state, so it asks a shard, whose metadata copy verifies the
 * token exactly as a LoginWithPersonalAccessToken would (hash lookup, expiry, user status):
 *
 * ```
 *  GET /metrics ─▶ bearerToken(header) ─▶ BearerChecks.check ── bearer_request ──▶ shard
 *                                                     ◀──────── bearer (verdict) ──┘
 * ```
 *
 * `http.metrics.token` (Shoal's, empty by default) is a static bearer checked here, for a node
 * that cannot have a personal access token (a lone node of a cluster that never formed).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { METRICS_TOKEN_MAX } from '../config/index.js';
import type { BearerVerdict } from './control.js';

const BEARER_SCHEME = 'bearer';
/**
 * Longest credential worth hashing: a personal access token is 50 base64 characters or so, and
 * `http.metrics.token` at most this; a longer header is neither, and is refused without work.
 */
export const BEARER_TOKEN_MAX = METRICS_TOKEN_MAX;
/** A shard that does not answer in this long (stopping, wedged) counts as unavailable. */
const BEARER_TIMEOUT_MS = 2_000;

/** The token of an `Authorization: Bearer …` header; null when absent, another scheme or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== BEARER_SCHEME) return null;
  const token = header.slice(space + 1).trim();
  return token === '' || token.length > BEARER_TOKEN_MAX ? null : token;
}

/** Does `token` equal the configured static token? (Constant time: both are hashed first.) */
export function isStaticToken(token: string, configured: string): boolean {
  if (configured === '') return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(token), digest(configured));
}

/** Correlates bearer checks with the shard's answers; a check never waits longer than the timeout. */
export class BearerChecks {
  readonly #ask: (id: number, token: string) => boolean;
  readonly #waiting = new Map<number, (verdict: BearerVerdict) => void>();
  #nextId = 0;

  /** `ask` posts the request to a shard; false when no shard can take it. */
  constructor(ask: (id: number, token: string) => boolean) {
    this.#ask = ask;
  }

  check(token: string): Promise<BearerVerdict> {
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(id, 'unavailable'), BEARER_TIMEOUT_MS);
      this.#waiting.set(id, (verdict) => {
        clearTimeout(timer);
        resolve(verdict);
      });
      if (!this.#ask(id, token)) this.settle(id, 'unavailable');
    });
  }

  /** A shard's answer (or the timeout's); a late or unknown id is ignored. */
  settle(id: number, verdict: BearerVerdict): void {
    const done = this.#waiting.get(id);
    this.#waiting.delete(id);
    done?.(verdict);
  }
}
