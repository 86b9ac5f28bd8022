/**
 * Takes docs/dashboard.png: a local 3-node cluster on ephemeral ports (as `npm start` runs one,
 * through the test cluster helper), a stream with a consumer group and a steady produce for about
 * 20 s, and headless Chromium (Debian's, the page tests' browser) captures node 0's /ui while it runs
 * (opened with a personal access token made by the script, as `/ui/#token=…`).
 *
 *   node --conditions=source --import tsx scripts/dashboard-screenshot.ts [out.png]
 *
 * Needs the build (`npx tsc -b`) and /usr/bin/chromium (scripts/test-deps.sh installs it).
 */
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../test/support/browser.js';
import { TestCluster, sleep } from '../test/integration/support/cluster.js';

const out = process.argv[2] ?? fileURLToPath(new URL('../docs/dashboard.png', import.meta.url));
const PRODUCE_MS = 20_000;

const cluster = await TestCluster.start({ nodes: 3, name: 'shoal-local' });
const browser = await launchChromium();
try {
  const client = cluster.client();
  await client.stream.create({ name: 'orders' });
  await client.topic.create({ streamId: 'orders', name: 'created', partitionsCount: 3 });
  await client.topic.create({ streamId: 'orders', name: 'shipped', partitionsCount: 1 });
  await client.group.create({ streamId: 'orders', topicId: 'created', name: 'billing' });
  await client.group.join({ streamId: 'orders', topicId: 'created', groupId: 'billing' });
  // The page's JSON wants a personal access token: one made here, passed as the page's fragment.
  const token = await client.token.create({ name: 'dashboard-screenshot' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1300 } });
  await page.goto(`http://127.0.0.1:${cluster.http[0]}/ui/#token=${encodeURIComponent(token)}`);
  const payload = new Uint8Array(512);
  const started = Date.now();
  let sent = 0;
  let shot = false;
  while (!shot) {
    // A produce that speeds up then slows down, so the chart shows a shape; the picture is taken
    // while it still runs (live rates), after a consumer-group member read part of it.
    const phase = (Date.now() - started) / PRODUCE_MS;
    const batch = Math.max(1, Math.round(200 * Math.sin(Math.PI * Math.min(phase, 0.9))));
    await client.sendMessages({ streamId: 'orders', topicId: 'created', partitioning: { partitionId: sent % 3 }, messages: Array.from({ length: batch }, () => ({ payload })) });
    if (sent % 7 === 0) await client.sendMessages({ streamId: 'orders', topicId: 'shipped', partitioning: { partitionId: 0 }, messages: [{ payload }] });
    if (sent % 50 === 0) {
      await client.pollMessages({ streamId: 'orders', topicId: 'created', consumer: { kind: 'consumer_group', id: 'billing' }, partitionId: null, count: 1000, autoCommit: true });
    }
    sent += 1;
    if (phase >= 1) {
      await page.screenshot({ path: out, fullPage: true });
      shot = true;
    }
    await sleep(20);
  }
  process.stdout.write(`wrote ${out} (${sent} produce requests)\n`);
} finally {
  await browser.close();
  await cluster.stop();
}
