import { TestCluster } from '../integration/support/cluster.js';
const cluster = await TestCluster.start({ nodes: 3 });
const client = cluster.client({ requestTimeoutMs: 5000, cluster: { retry: { budgetMs: 60_000, attemptsMax: 1000 } } });
await client.stream.create({ name: 's' });
await client.topic.create({ streamId: 's', name: 't', partitionsCount: 1 });
for (let i = 0; i < 20; i++) await client.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: `a${i}` }] });
const leader = await cluster.leader();
const view = await client.getClusterMetadata();
console.log('leader', leader, 'groups', JSON.stringify(view.groups, (_, v) => typeof v === 'bigint' ? v.toString() : v));
const probe = cluster.client({ requestTimeoutMs: 3000, cluster: { retry: { attemptsMax: 1 } } });
await probe.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'p' }] });
const victim = view.groups?.topics[0]?.partitions[0]?.primary ?? leader;
console.log('victim', victim);
const t0 = Date.now();
await cluster.node(victim).stop('SIGKILL');
console.log('killed at', new Date(t0).toISOString());
let acked = 0;
const watcher = cluster.client({ requestTimeoutMs: 1000, cluster: { retry: { attemptsMax: 1 } } }, [1, 2]);
let watching = true;
void (async () => {
  while (watching) {
    try {
      const v = await watcher.getClusterMetadata();
      console.log('meta', Date.now() - t0, 'leader', v.leader?.name, 'p0', v.groups?.topics[0]?.partitions[0]?.primary, 'view', v.groups?.topics[0]?.partitions[0]?.view, v.nodes.map((n) => `${n.name}:${n.role}/${n.status}`).join(' '));
    } catch (e) { console.log('meta err', Date.now() - t0, String(e).slice(0, 100)); }
    await new Promise((r) => setTimeout(r, 500));
  }
})();
for (let i = 0; i < 2000; i++) {
  try {
    const at = Date.now() - t0;
    await probe.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: `b${i}` }] });
    acked++;
    console.log('ok', at, '->', Date.now() - t0);
    if (acked === 1) console.log('first ack after', Date.now() - t0, 'ms');
    if (acked > 5) break;
  } catch (e) { console.log('err', Date.now() - t0, String(e).slice(0, 160)); await new Promise((r) => setTimeout(r, 200)); }
}
watching = false;
for (const id of [0, 1, 2]) {
  if (id === victim) continue;
  const n = cluster.node(id);
  const lines = n.lines.filter((l) => { try { return Date.parse(JSON.parse(l).time ?? JSON.parse(l).ts ?? '') >= t0 - 100; } catch { return false; } });
  console.log(`--- node ${id}: ${lines.length} lines`);
  for (const l of lines.slice(0, 40)) console.log(l.slice(0, 300));
}
await cluster.stop();
process.exit(0);
