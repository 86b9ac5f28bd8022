import { TestCluster } from '../integration/support/cluster.js';
const cluster = await TestCluster.start({ nodes: 3 });
const client = cluster.client({ requestTimeoutMs: 30000, cluster: { retry: { budgetMs: 60_000, attemptsMax: 10000, backoffMaxMs: 100 } } });
await client.stream.create({ name: 's' });
await client.topic.create({ streamId: 's', name: 't', partitionsCount: 1 });
const payload = new Uint8Array(1024).fill(7);
const batch = Array.from({ length: 1000 }, () => ({ payload }));
const view = await client.getClusterMetadata();
const victim = view.groups?.topics[0]?.partitions[0]?.primary ?? 0;
let t0 = 0; let stop = false; let firstAfter = -1;
const lane = async (): Promise<void> => {
  while (!stop) {
    const at = Date.now();
    try {
      await client.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: batch });
      if (t0 > 0 && at > t0 && firstAfter < 0) { firstAfter = Date.now() - t0; console.log('first ack of a request sent after the kill', firstAfter); }
    } catch (e) { console.log('err', Date.now() - t0, String(e).slice(0, 150)); }
  }
};
const lanes = Array.from({ length: 8 }, lane);
await new Promise((r) => setTimeout(r, 3000));
t0 = Date.now();
await cluster.node(victim).stop('SIGKILL');
console.log('killed', victim);
while (firstAfter < 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
stop = true;
await Promise.allSettled(lanes);
for (const id of [0, 1, 2]) {
  if (id === victim) continue;
  const lines = cluster.node(id).lines.filter((l) => /partition event|metadata group|consensus event/.test(l)).filter((l) => Date.parse(JSON.parse(l).time) >= t0);
  console.log(`--- node ${id}`);
  for (const l of lines.slice(0, 30)) { const j = JSON.parse(l); console.log(Date.parse(j.time) - t0, j.thread, j.name ?? j.event, j.detail); }
}
await cluster.stop();
process.exit(0);
