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

/** How long a node may take to apply a new token to the metadata copy that checks it. */
const TOKEN_APPLIED_MS = 15_000;
const RETRY_MS = 100;

/**
 * The scrape's text. A token is checked against a shard's copy of the metadata, which applies a
 * commit shortly after the client had its reply (and a cluster node after its primary), so a
 * fresh token may be refused for a moment: until then this retries; after that it throws.
 */
export async function scrape(url: string, token: string): Promise<string> {
  const deadline = Date.now() + TOKEN_APPLIED_MS;
  for (;;) {
    const response = await scrapeWith(url, token);
    const body = await response.text();
    if (response.status === 200) return body;
    if (Date.now() > deadline) throw new Error(`${url}: HTTP ${response.status}: ${body}`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
