/**
 * `npm run vopr -- --seed S --html FILE`: the page is written by the real CLI (a child process),
 * opened from disk in headless Chromium with every network request recorded, and what it shows
 * is checked against what the run reported.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Simulation, Timeline, calmOptions } from '@shoal/simulator';
import { launchChromium } from '../../../test/support/browser.js';
import { renderTimeline } from '../src/timeline-html.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let browser: Browser;
let dir: string;

beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'vopr-html-'));
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(file: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-rendered="true"]');
  return { page, requests, errors };
}

describe('vopr --html', () => {
  it('renders a seed\'s timeline offline: a lane per replica, its faults, partitions, phases, commits and clients', async () => {
    const file = join(dir, 'seed-21.html');
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/vopr/src/main.ts', '--seed', '21', '--replicas', '3', '--html', file], {
      cwd: ROOT, encoding: 'utf8',
    });
    const crashes = Number(/crashes=(\d+)/.exec(out)?.[1]);
    const partitions = Number(/partitions=(\d+)/.exec(out)?.[1]);
    const trace = /trace hash: ([0-9a-f]+)/.exec(out)?.[1] ?? '';
    expect(crashes).toBeGreaterThan(0);
    expect(partitions).toBeGreaterThan(0);
    expect(readFileSync(file, 'utf8')).not.toMatch(/<(link|img)\b|src="http|href="http/);

    const { page, requests, errors } = await open(file);
    expect(errors).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]); // the page itself, nothing else
    expect(await page.locator('h1').textContent()).toBe('VOPR seed 21 (3 replicas): ok');
    expect(await page.locator('#facts').textContent()).toContain(trace);
    expect(await page.locator('.replica-lane').count()).toBe(3);
    const faults = (await page.locator('.point[data-kind="kill"]').count()) + (await page.locator('.point[data-kind="power loss"]').count());
    expect(faults).toBe(crashes);
    expect(await page.locator('.point[data-kind="restart"]').count()).toBeGreaterThanOrEqual(crashes - 1);
    expect(await page.locator('.status-span[data-status="down"]').count()).toBeGreaterThan(0);
    expect(await page.locator('.status-span[data-status="view_change"]').count()).toBeGreaterThan(0);
    expect(await page.locator('rect.partition').count()).toBe(partitions);
    expect(await page.locator('#phases').textContent()).toMatch(/safety/);
    expect(await page.locator('.bar.metadata-commits').count()).toBeGreaterThan(0);
    expect(await page.locator('.bar.client-requests-in').count()).toBeGreaterThan(0);
    expect(await page.locator('.client-lane').count()).toBeGreaterThan(1);
    expect(await page.locator('.mark-chip').count()).toBeGreaterThan(0);

    // Details on click; zoom re-renders wider.
    await page.locator('.point[data-kind="restart"]').first().dispatchEvent('click'); // points may overlap: no pointer hit-testing
    expect(await page.locator('#details').textContent()).toMatch(/^tick \d+, replica \d: restart/);
    const narrow = Number(await page.locator('#timeline').getAttribute('width'));
    await page.locator('#zoom').fill('4');
    expect(Number(await page.locator('#timeline').getAttribute('width'))).toBeGreaterThan(narrow * 3);
    await page.close();
  }, 120_000);

  it('a failed run shows its violation', async () => {
    const options = calmOptions(31, 3, { safetyTicks: 600 });
    const timeline = new Timeline(31, 3, options.clients);
    const r = new Simulation(options, {
      forgeCommit: (node, group, op, checksum) => (node === 2 && group === 1n << 63n && op === 5 ? checksum ^ 1n : checksum),
    }, timeline).run();
    expect(r.ok).toBe(false);
    timeline.data.summary = { ok: r.ok, failure: r.failure, traceHash: r.traceHash, committedOps: r.committedOps, marks: r.marks, options: {} };
    const file = join(dir, 'failed.html');
    writeFileSync(file, renderTimeline(timeline.data));
    const { page, errors } = await open(file);
    expect(errors).toEqual([]);
    expect(await page.locator('h1').textContent()).toBe('VOPR seed 31 (3 replicas): FAILED');
    expect(await page.locator('#failure').isVisible()).toBe(true);
    expect(await page.locator('#failure').textContent()).toMatch(/committed op 5 with checksum/);
    await page.close();
  }, 60_000);
});
