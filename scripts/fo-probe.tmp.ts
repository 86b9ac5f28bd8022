import { TestCluster, sleep } from '../test/integration/support/cluster.js';
process.env['IGGY_SYSTEM_LOGGING_LEVEL'] = 'debug';
const cluster = await TestCluster.start({ nodes: 3 });
try {
  const admin = cluster.client({ requestTimeoutMs: 5000 });
  await admin.stream.create({ name: 's' });
  await admin.topic.create({ streamId: 's', name: 't', partitionsCount: 1 });
  const acks: { at: number }[] = [];
  let running = true;
  const producer = async (): Promise<void> => {
    const client = cluster.client({ requestTimeoutMs: 5000, cluster: { retry: { retryUncertainWrites: true, budgetMs: 20000, attemptsMax: 100, backoffBaseMs: 10, backoffMaxMs: 50 } } });
    while (running) {
      try {
        await client.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: Array.from({ length: 100 }, () => ({ payload: 'x'.repeat(1000) })) });
        acks.push({ at: Date.now() });
      } catch { /* retry */ }
    }
  };
  const ps = [producer(), producer(), producer(), producer()];
  await sleep(3000);
  const killedAt = Date.now();
  await cluster.node(0).stop('SIGKILL');
  await sleep(4000);
  running = false;
  await Promise.all(ps);
  const first = acks.find((a) => a.at > killedAt);
  console.log(`first ack ${first === undefined ? 'none' : first.at - killedAt} ms after kill at ${new Date(killedAt).toISOString()}`);
  for (const id of [1, 2]) {
    for (const line of cluster.node(id).lines) {
      if (!/view|primary_unreachable|peer down|start_view|metadata group|normal/.test(line)) continue;
      try { const r = JSON.parse(line) as Record<string, unknown>; const t = Date.parse(String(r['time'])); if (t > killedAt - 100 && t < killedAt + 3000) console.log(`n${id} +${t - killedAt} ${line.slice(0, 300)}`); } catch { /* */ }
    }
  }
} finally {
  await cluster.stop();
}
