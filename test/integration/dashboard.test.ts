/**
 * The dashboard at /ui in a real headless Chromium (Debian's, test/support/browser.ts) against
 * a real 3-node cluster started as `npm start` starts one (three shoal-server processes, one
 * shard each, replica auth on), on ephemeral ports: the page lists the three nodes with their
 * roles and readiness, then shows a produce (message counts, consumer-group lag, a chart point)
 * without a reload, and loads nothing from anywhere but the node. The JSON wants a personal access
 * token: without one the page shows its token form (the API answered 401), a wrong one is shown
 * refused, and one made through the SDK, given as `#token=…`, opens the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { TestCluster } from './support/cluster.js';

/** The page's `document`, as the callbacks below use it (they run in the browser, typed without the DOM lib). */
declare const document: {
  querySelectorAll(selector: string): { readonly length: number };
  querySelector(selector: string): { readonly textContent: string | null } | null;
  getElementById(id: string): { readonly dataset: Readonly<Record<string, string | undefined>>; readonly hidden: boolean } | null;
};
declare const sessionStorage: { getItem(key: string): string | null };

describe('dashboard (/ui) in headless Chromium', () => {
  let cluster: TestCluster;
  let browser: Browser;
  let page: Page;
  let token = '';
  const requested: string[] = [];

  beforeAll(async () => {
    [cluster, browser] = await Promise.all([TestCluster.start({ nodes: 3 }), launchChromium()]);
    token = await cluster.client().token.create({ name: 'dashboard', expiry: 0xFFFF_FFFF_FFFF_FFFFn });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
  }, 60_000);

  const origin = (): string => `http://127.0.0.1:${cluster.http[0]}`;
  const text = (selector: string): Promise<string> => page.locator(selector).innerText();

  it('without a token shows the token form (the API answered 401), and a wrong token refused', async () => {
    const bare = await browser.newPage();
    const answers: number[] = [];
    bare.on('response', (response) => {
      if (response.url() === `${origin()}/api/v1/cluster`) answers.push(response.status());
    });
    await bare.goto(`${origin()}/ui`);
    await bare.waitForFunction(() => document.getElementById('auth')?.hidden === false, undefined, { timeout: 30_000 });
    expect(answers[0]).toBe(401);
    expect(await bare.locator('#connection').innerText()).toBe('token required');
    expect(await bare.locator('#auth-message').innerText()).toContain('wants a personal access token');
    expect(await bare.locator('#nodes').isVisible()).toBe(false);
    await bare.getByRole('textbox', { name: 'Token' }).fill('not-a-token');
    await bare.getByRole('button', { name: 'Use token' }).click();
    await bare.waitForFunction(() => document.querySelector('#connection')?.textContent === 'token refused', undefined, { timeout: 30_000 });
    expect(await bare.locator('#auth-message').innerText()).toContain('refused the token');
    expect(answers.every((status) => status === 401)).toBe(true);
    // The right token, typed into the form, opens the page.
    await bare.getByRole('textbox', { name: 'Token' }).fill(token);
    await bare.getByRole('button', { name: 'Use token' }).click();
    await bare.waitForFunction(() => document.querySelector('#connection')?.textContent === 'live', undefined, { timeout: 30_000 });
    expect(await bare.locator('#auth').isVisible()).toBe(false);
    expect(answers.at(-1)).toBe(200);
    await bare.close();
  }, 60_000);

  it('lists the three nodes of the cluster, ready, with one metadata primary', async () => {
    page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${origin()}/ui/#token=${encodeURIComponent(token)}`);
    await page.waitForFunction(() => document.querySelectorAll('#nodes tbody tr[data-ready="true"][data-reachable="true"]').length === 3, undefined, { timeout: 30_000 });
    const names = await page.locator('#nodes tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')));
    expect(names).toEqual(['node-0', 'node-1', 'node-2']);
    const roles = await page.locator('#nodes tbody tr td:nth-child(3)').allInnerTexts();
    expect(roles.filter((r) => r === 'primary')).toHaveLength(1);
    expect(roles.filter((r) => r === 'backup')).toHaveLength(2);
    expect(await text('#served-by')).toBe('served by node-0');
    expect(await page.locator('#groups tbody tr[data-label="metadata"]').count()).toBe(1);
    await page.waitForFunction(() => document.querySelector('#connection')?.textContent === 'live', undefined, { timeout: 30_000 });
    // The token left the address bar, and the tab keeps it.
    expect(page.url()).toBe(`${origin()}/ui/`);
    expect(await page.evaluate(() => sessionStorage.getItem('shoal.dashboard.token'))).toBe(token);
    expect(await page.locator('#auth').isVisible()).toBe(false);
  });

  it('shows a produce: partition counts, rates, consumer-group lag, a chart point', async () => {
    const client = cluster.client();
    await client.stream.create({ name: 'dash' });
    await client.topic.create({ streamId: 'dash', name: 'events', partitionsCount: 2 });
    await client.group.create({ streamId: 'dash', topicId: 'events', name: 'audit' });
    const row = '#partitions tbody tr[data-partition="dash/events/1"]';
    await page.waitForSelector(row, { timeout: 30_000 });
    expect(await text(`${row} .messages`)).toBe('0');
    for (let i = 0; i < 5; i++) {
      await client.sendMessages({ streamId: 'dash', topicId: 'events', partitioning: { partitionId: 1 }, messages: Array.from({ length: 5 }, (_, j) => ({ payload: `e${i}-${j}` })) });
    }
    await page.waitForFunction((selector) => document.querySelector(`${selector} .messages`)?.textContent === '25', row, { timeout: 30_000 });
    expect(await text('#partitions tbody tr[data-partition="dash/events/0"] .messages')).toBe('0');
    expect(await text(`${row} td:nth-child(9)`)).toMatch(/^node-\d$/);
    const group = '#consumer-groups tbody tr[data-consumer-group="dash/events/audit"]';
    await page.waitForFunction((selector) => document.querySelector(`${selector} .lag`)?.textContent === '25', group, { timeout: 30_000 });
    expect(await text(`${group} td:nth-child(6)`)).toBe('0: 0, 1: 25');
    expect(await page.locator('#groups tbody tr[data-label="dash/events/1"]').count()).toBe(1);
    // The chart drew with uPlot and got points while the page polled.
    await page.waitForFunction(() => Number(document.getElementById('chart')?.dataset['points'] ?? 0) >= 2, undefined, { timeout: 30_000 });
    expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
    // Everything came from the node: no CDN, no other origin.
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !url.startsWith(`${origin()}/`))).toEqual([]);
  });
});
