/**
 * Metrics worth scraping and the readiness probe, on real processes: a single node and a 3-node
 * cluster scraped over HTTP after real produce / consume traffic. Latency histograms (request per
 * command, commit per plane, fsync, replication round trip) must be well-formed Prometheus
 * histograms that counted the traffic; per-partition and consumer-group series carry names;
 * the standard process / nodejs metrics are there; every exported family is documented in
 * docs/operations.md; /ready is 503 while a node has no metadata primary (one node of three
 * alone) and 200 once the cluster formed.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { TestCluster, waitFor } from './support/cluster.js';
import { scrape, scrapeToken, scrapeWith } from './support/scrape.js';
import { type ServerHandle, metricSum, metricValue, removeDataDir, startServer } from './support/server.js';

const OPERATIONS_DOC = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8');

interface HistogramSeries {
  readonly buckets: readonly (readonly [string, number])[];
  readonly count: number;
  readonly sum: number;
}

/** The buckets, count and sum of one histogram series whose labels contain `labels`, summed over matching series. */
function histogram(text: string, name: string, labels: Readonly<Record<string, string>>): HistogramSeries {
  const matches = (line: string): boolean => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
  const byLe = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !matches(line)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1] ?? '';
    byLe.set(le, (byLe.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return { buckets: [...byLe], count: metricSum(text, `${name}_count`, labels), sum: metricSum(text, `${name}_sum`, labels) };
}

/** Cumulative, ending in +Inf = count. */
function expectWellFormed(series: HistogramSeries): void {
  expect(series.buckets.length).toBeGreaterThan(2);
  const last = series.buckets[series.buckets.length - 1] as readonly [string, number];
  expect(last[0]).toBe('+Inf');
  expect(last[1]).toBe(series.count);
  for (let i = 1; i < series.buckets.length; i++) {
    expect((series.buckets[i] as readonly [string, number])[1]).toBeGreaterThanOrEqual((series.buckets[i - 1] as readonly [string, number])[1]);
  }
  expect(series.sum).toBeGreaterThan(0);
}

/** Every `# TYPE` family of a scrape is named in docs/operations.md. */
function expectDocumented(text: string): void {
  const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);
  expect(families.length).toBeGreaterThan(40);
  const missing = families.filter((name) => !OPERATIONS_DOC.includes(`\`${name}\``));
  expect(missing).toEqual([]);
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe('metrics and /ready on a single node', () => {
  let server: ServerHandle;
  let client: ShoalClient;

  beforeAll(async () => {
    server = await startServer({ shards: 2 });
    client = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
    await client.stream.create({ name: 'orders' });
    await client.topic.create({ streamId: 'orders', name: 'created', partitionsCount: 2 });
    await client.group.create({ streamId: 'orders', topicId: 'created', name: 'billing' });
    await client.group.join({ streamId: 'orders', topicId: 'created', groupId: 'billing' });
    for (let i = 0; i < 20; i++) {
      await client.sendMessages({ streamId: 'orders', topicId: 'created', partitioning: { partitionId: i % 2 }, messages: [{ payload: `m${i}` }, { payload: `n${i}` }] });
    }
    await client.pollMessages({ streamId: 'orders', topicId: 'created', partitionId: 0, consumer: 1, strategy: { offset: 0n }, count: 100 });
    await client.offset.store({ consumer: { kind: 'consumer_group', id: 'billing' }, streamId: 'orders', topicId: 'created', partitionId: 0, offset: 4 });
  });

  afterAll(async () => {
    await client?.destroy();
    await server?.stop();
    if (server !== undefined) removeDataDir(server.dataDir);
  });

  it('answers /ready 200 with no failed check, and /live like /ping', async () => {
    const ready = await get(`http://${server.http.host}:${server.http.port}/ready`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ ready: true, failed: [], primary: 0 });
    for (const path of ['/live', '/ping']) expect(await get(`http://${server.http.host}:${server.http.port}${path}`)).toEqual({ status: 200, body: 'pong\n' });
  });

  it('serves only what it names on the HTTP port, and survives garbage', async () => {
    const base = `http://${server.http.host}:${server.http.port}`;
    const page = await fetch(`${base}/ui`);
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${base}/ui/`);
    expect(await page.text()).toContain('<script src="uPlot.iife.min.js"');
    for (const asset of ['app.js', 'view.js', 'app.css', 'uPlot.iife.min.js', 'uPlot.min.css']) expect((await get(`${base}/ui/${asset}`)).status).toBe(200);
    for (const path of ['/ui/..%2f..%2fpackage.json', '/ui/../../package.json', '/ui/api.js', '/ui/dist/app.js', '/nope']) {
      expect((await get(`${base}${path}`)).status).toBe(404);
    }
    // Under /api/v1/ the bearer comes first: no path is revealed without one.
    expect((await get(`${base}/api/v1/nope`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405);
    // A request line no HTTP parser accepts: the connection is answered 400 and closed.
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(server.http.port, server.http.host, () => socket.write('\u0000\u0001 GARBAGE\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => { text += chunk.toString('latin1'); });
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
    });
    expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
    expect((await get(`${base}/ready`)).status).toBe(200);
  });

  it('exports latency histograms that counted the traffic', async () => {
    const text = await server.metrics();
    const send = histogram(text, 'shoal_request_duration_seconds', { command: 'send_messages' });
    expectWellFormed(send);
    expect(send.count).toBe(20);
    expect(histogram(text, 'shoal_request_duration_seconds', { command: 'poll_messages' }).count).toBe(1);
    expect(histogram(text, 'shoal_request_duration_seconds', { command: 'create_topic' }).count).toBe(1);
    const commitPartition = histogram(text, 'shoal_commit_duration_seconds', { plane: 'partition' });
    expectWellFormed(commitPartition);
    // 20 batches and one Quorum offset store.
    expect(commitPartition.count).toBe(21);
    // CreateStream, CreateTopic, CreateConsumerGroup, JoinConsumerGroup, and the scrape's own
    // CreatePersonalAccessToken (logins are sessions, not requests of the ledger).
    expect(histogram(text, 'shoal_commit_duration_seconds', { plane: 'metadata' }).count).toBe(5);
    expectWellFormed(histogram(text, 'shoal_fsync_duration_seconds', { plane: 'metadata' }));
    expect(histogram(text, 'shoal_fsync_duration_seconds', { plane: 'partition' }).count).toBeGreaterThan(0);
  });

  it('labels partition and consumer-group series by name, with the lag', async () => {
    const text = await server.metrics();
    const p0 = { stream: 'orders', topic: 'created', partition: '0' };
    expect(metricValue(text, 'shoal_partition_messages', p0)).toBe(20);
    expect(metricValue(text, 'shoal_partition_messages_appended_total', { ...p0, partition: '1' })).toBe(20);
    expect(metricValue(text, 'shoal_partition_current_offset', p0)).toBe(19);
    expect(metricValue(text, 'shoal_partition_primary', p0)).toBe(1);
    expect(metricValue(text, 'shoal_partition_bytes', p0)).toBeGreaterThan(0);
    const billing = { stream: 'orders', topic: 'created', group: 'billing' };
    expect(metricValue(text, 'shoal_consumer_group_offset', { ...billing, partition: '0' })).toBe(4);
    expect(metricValue(text, 'shoal_consumer_group_lag', { ...billing, partition: '0' })).toBe(15);
    // No stored offset on partition 1: every retained message is lag.
    expect(metricValue(text, 'shoal_consumer_group_lag', { ...billing, partition: '1' })).toBe(20);
    expect(metricValue(text, 'shoal_consumer_group_members', billing)).toBe(1);
    expect(metricValue(text, 'shoal_streams')).toBe(1);
  });

  it('exports the standard process and nodejs metrics, per thread where they are per isolate', async () => {
    const text = await server.metrics();
    expect(metricValue(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(metricValue(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(metricValue(text, 'process_open_fds')).toBeGreaterThan(0);
    expect(metricValue(text, 'nodejs_version_info')).toBe(1);
    expect(metricValue(text, 'process_start_time_seconds')).toBeGreaterThan(1_600_000_000);
    for (const thread of ['main', 'metadata', 'shard-0', 'shard-1']) {
      expect(metricValue(text, 'nodejs_heap_size_used_bytes', { thread })).toBeGreaterThan(0);
      expect(metricValue(text, 'nodejs_eventloop_lag_seconds', { thread })).not.toBeNull();
    }
    expect(metricValue(text, 'shoal_ready')).toBe(1);
    // Every worker (metadata + 2 shards) answered this scrape, besides the main thread's own figures.
    expect(metricValue(text, 'shoal_scrape_threads_missing')).toBe(0);
    expect(new Set(text.split('\n').filter((l) => l.startsWith('shoal_thread_heap_used_bytes{')).map((l) => /thread="([^"]+)"/.exec(l)?.[1]))).toEqual(new Set(['main', 'metadata', 'shard-0', 'shard-1']));
    expectDocumented(text);
  });

  it('wants a personal access token as the bearer on the metrics endpoint, as the reference does', async () => {
    const url = `http://${server.http.host}:${server.http.port}/metrics`;
    const refused = async (headers: Record<string, string>): Promise<void> => {
      const response = await fetch(url, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="shoal"');
      expect(await response.text()).not.toContain('shoal_');
    };
    await refused({});
    await refused({ authorization: 'Basic aWdneTppZ2d5' }); // iggy:iggy: a password is not a bearer
    await refused({ authorization: 'Bearer not-a-token' });
    await refused({ authorization: `Bearer ${'x'.repeat(10_000)}` });
    // Any user's token scrapes (no permission guards the endpoint); it stops working when the
    // user is deactivated or deleted, or the token deleted.
    await client.user.create({ username: 'scraper', password: 'scraper-secret' });
    // A new connection, maybe on the other shard: that shard holds its frames until its metadata
    // copy has the user (docs/runtime.md "The published metadata op"), so the first login works.
    const scraper = new ShoalClient({ address: server.address, credentials: { username: 'scraper', password: 'scraper-secret' }, heartbeatIntervalMs: 0, reconnect: { enabled: false } });
    await scraper.getMe();
    try {
      const token = await scrapeToken(scraper);
      expect(metricValue(await scrape(url, token), 'shoal_ready')).toBe(1);
      await client.user.update({ userId: 'scraper', status: 'inactive' });
      await waitFor('the inactive user\'s token refused', async () => (await scrapeWith(url, token)).status === 401, 15_000, 100);
      await client.user.update({ userId: 'scraper', status: 'active' });
      await scrape(url, token);
      await client.user.delete({ userId: 'scraper' });
      await waitFor('the deleted user\'s token refused', async () => (await scrapeWith(url, token)).status === 401, 15_000, 100);
    } finally {
      await scraper.destroy();
    }
    const doomed = await client.token.create({ name: 'doomed', expiry: 0xFFFF_FFFF_FFFF_FFFFn });
    await scrape(url, doomed);
    await client.token.delete({ name: 'doomed' });
    await waitFor('the deleted token refused', async () => (await scrapeWith(url, doomed)).status === 401, 15_000, 100);
    // The probes and the dashboard's page stay open (a load balancer has no token).
    expect((await get(`http://${server.http.host}:${server.http.port}/ready`)).status).toBe(200);
  });

  it('wants the same bearer on the dashboard JSON (/api/v1/*), and refuses a deleted token', async () => {
    const base = `http://${server.http.host}:${server.http.port}`;
    const paths = ['/api/v1/node', '/api/v1/cluster'];
    for (const path of paths) {
      for (const headers of [{}, { authorization: 'Bearer not-a-token' }, { authorization: 'Basic aWdneTppZ2d5' }]) {
        const response = await fetch(`${base}${path}`, { headers });
        expect(response.status, path).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="shoal"');
        expect(await response.text()).not.toContain('orders');
      }
    }
    // A token is accepted as soon as its creation is acknowledged: a shard whose metadata copy
    // has not applied it yet waits for the published op before it answers (bearer-waits.ts).
    const statusOf = async (url: string, bearer: string): Promise<number> => {
      const response = await scrapeWith(url, bearer);
      await response.arrayBuffer();
      return response.status;
    };
    for (let i = 0; i < 10; i++) {
      const fresh = await client.token.create({ name: `fresh-${i}`, expiry: 0xFFFF_FFFF_FFFF_FFFFn });
      expect(await statusOf(`${base}/api/v1/node`, fresh), `token ${i}`).toBe(200);
      expect(await statusOf(`${base}/metrics`, fresh), `token ${i}`).toBe(200);
      await client.token.delete({ name: `fresh-${i}` });
    }
    const token = await client.token.create({ name: 'dashboard-api', expiry: 0xFFFF_FFFF_FFFF_FFFFn });
    const first = await scrapeWith(`${base}/api/v1/node`, token);
    expect(first.status).toBe(200);
    const node = (await first.json()) as { node: { replicaId: number }; streams: { name: string }[] };
    expect(node.streams.map((s) => s.name)).toContain('orders');
    const cluster = await scrapeWith(`${base}/api/v1/cluster`, token);
    expect(cluster.status).toBe(200);
    const body = (await cluster.json()) as { nodes: { self: boolean; reachable: boolean; refused: boolean; summary: unknown }[] };
    expect(body.nodes).toHaveLength(1);
    expect(body.nodes[0]).toMatchObject({ self: true, reachable: true, refused: false });
    expect((await scrapeWith(`${base}/api/v1/nope`, token)).status).toBe(404);
    await client.token.delete({ name: 'dashboard-api' });
    for (const path of paths) {
      await waitFor(`the deleted token refused on ${path}`, async () => (await scrapeWith(`${base}${path}`, token)).status === 401, 15_000, 100);
    }
  });
});

describe('metrics and /ready on a 3-node cluster', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    // One node of three alone first: it serves nothing (no metadata primary it can reach).
    cluster = await TestCluster.start({ nodes: 3, start: [0] });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  const ready = (id: number): Promise<{ status: number; body: string }> => get(`http://127.0.0.1:${cluster.http[id]}/ready`);
  const metricsUrl = (id: number): string => `http://127.0.0.1:${cluster.http[id]}/metrics`;
  let patToken = '';

  it('answers /ready 503 while a node is alone, 200 on every node once the cluster formed', async () => {
    const alone = await ready(0);
    expect(alone.status).toBe(503);
    const body = JSON.parse(alone.body) as { ready: boolean; failed: string[] };
    expect(body.ready).toBe(false);
    expect(body.failed).toContain('primary');
    // A lone node cannot make a personal access token; the harness's static token scrapes it.
    expect(metricValue(await cluster.metrics(0), 'shoal_ready')).toBe(0);
    expect((await fetch(metricsUrl(0))).status).toBe(401);
    await Promise.all([cluster.startNode(1), cluster.startNode(2)]);
    await cluster.leader();
    for (const id of [0, 1, 2]) await waitFor(`node ${id} ready`, async () => (await ready(id)).status === 200);
    // A personal access token made through the primary scrapes every node once it applied it.
    patToken = await scrapeToken(cluster.client());
    for (const id of [0, 1, 2]) expect(metricValue(await scrape(metricsUrl(id), patToken), 'shoal_ready')).toBe(1);
    // The dashboard's cluster JSON: node 0 forwards the caller's bearer to its peers, which know
    // the token (every node accepted it above), so all three answer.
    const answer = await scrapeWith(`http://127.0.0.1:${cluster.http[0]}/api/v1/cluster`, patToken);
    expect(answer.status).toBe(200);
    const nodes = ((await answer.json()) as { nodes: { name: string; reachable: boolean; refused: boolean; summary: unknown }[] }).nodes;
    expect(nodes.map((n) => [n.name, n.reachable, n.refused, n.summary !== null])).toEqual([
      ['node-0', true, false, true], ['node-1', true, false, true], ['node-2', true, false, true],
    ]);
    expect((await fetch(`http://127.0.0.1:${cluster.http[1]}/api/v1/cluster`)).status).toBe(401);
  }, 120_000);

  it('measures commit and replication round trips on both planes', async () => {
    const client = cluster.client();
    await client.stream.create({ name: 'c' });
    await client.topic.create({ streamId: 'c', name: 't', partitionsCount: 1 });
    for (let i = 0; i < 10; i++) await client.sendMessages({ streamId: 'c', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: `x${i}` }] });
    const scrape = (): Promise<string[]> => Promise.all([0, 1, 2].map((id) => cluster.metrics(id)));
    const total = (texts: readonly string[], name: string, labels: Readonly<Record<string, string>>): number =>
      texts.reduce((n, t) => n + histogram(t, name, labels).count, 0);
    // Every batch committed on the partition's primary, acked by at least one backup (the quorum);
    // the other backup's PrepareOk may still be on its way when the client has its reply.
    const scrapes = await waitFor('round trips of every op', async () => {
      const texts = await scrape();
      return total(texts, 'shoal_replication_round_trip_seconds', { plane: 'partition' }) >= 10 ? texts : null;
    });
    expect(total(scrapes, 'shoal_commit_duration_seconds', { plane: 'partition' })).toBe(10);
    expect(total(scrapes, 'shoal_replication_round_trip_seconds', { plane: 'metadata' })).toBeGreaterThan(0);
    const primary = scrapes.find((t) => metricValue(t, 'shoal_partition_primary', { stream: 'c', topic: 't', partition: '0' }) === 1);
    expect(primary).toBeDefined();
    expectWellFormed(histogram(primary as string, 'shoal_replication_round_trip_seconds', { plane: 'partition' }));
    // Every node reports its replica of the partition, by name.
    for (const text of scrapes) expect(metricValue(text, 'shoal_partition_messages', { stream: 'c', topic: 't', partition: '0' })).not.toBeNull();
    for (const text of scrapes) expectDocumented(text);
  });

  it('reports a node whose peers are gone as not ready, on /ready and in its metrics', async () => {
    await Promise.all([cluster.node(1).stop(), cluster.node(2).stop()]);
    await waitFor('node 0 not ready', async () => (await ready(0)).status === 503, 30_000, 250);
    // It checks the personal access token against its own metadata copy: no peer needed.
    expect(metricValue(await scrape(metricsUrl(0), patToken), 'shoal_ready')).toBe(0);
  }, 60_000);
});
