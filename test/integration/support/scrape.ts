/**
 * Scraping a node's metrics endpoint as a Prometheus server would: with a personal access token
 * as the bearer (the endpoint refuses anything else, like the reference's: docs/operations.md
 * "HTTP endpoints"). The token is made once per client (root credentials) and never expires.
 */
import type { ShoalClient } from '@shoal/client';

/** u64::MAX: CreatePersonalAccessToken's "never expires". */
const NEVER_EXPIRES = 0xFFFF_FFFF_FFFF_FFFFn;
let tokenNumber = 0;

/** A non-expiring personal access token of the client's user, for scraping. */
export function scrapeToken(client: ShoalClient): Promise<string> {
  tokenNumber += 1;
  return client.token.create({ name: `metrics-scrape-${process.pid}-${tokenNumber}`, expiry: NEVER_EXPIRES });
}

/** GET `url` with the bearer; the response as is. */
export function scrapeWith(url: string, token: string): Promise<Response> {
  return fetch(url, { headers: { authorization: `Bearer ${token}` } });
}

/** How long a node may take to accept a new token and to answer with every worker's figures. */
const SCRAPE_DEADLINE_MS = 15_000;
const RETRY_MS = 100;

/** `shoal_scrape_threads_missing`: workers whose figures missed the scrape (absent: not a Shoal scrape). */
const MISSING = /^shoal_scrape_threads_missing (\d+)$/m;

/**
 * A complete scrape's text. A token is checked against a shard's copy of the metadata, which
 * applies a commit shortly after the client had its reply (and a cluster node after its primary),
 * so a fresh token may be refused for a moment; and on a loaded machine a worker may miss a
 * scrape's 2 s wait (`shoal_scrape_threads_missing`, its series absent). Either way this asks
 * again; past the deadline it throws (a token never accepted, a worker that never answers).
 */
export async function scrape(url: string, token: string): Promise<string> {
  const deadline = Date.now() + SCRAPE_DEADLINE_MS;
  for (;;) {
    const response = await scrapeWith(url, token);
    const body = await response.text();
    const missing = Number(MISSING.exec(body)?.[1] ?? 0);
    if (response.status === 200 && missing === 0) return body;
    if (Date.now() > deadline) throw new Error(`${url}: HTTP ${response.status}, ${missing} thread(s) missing: ${body.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
