import { TestCluster } from '../integration/support/cluster.js';
const cluster = await TestCluster.start({ nodes: 3 });
const client = cluster.client({ requestTimeoutMs: 5000 });
await client.stream.create({ name: 's' });
await client.topic.create({ streamId: 's', name: 't', partitionsCount: 1 });
await client.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'a' }] });
const view = await client.getClusterMetadata();
const victim = view.groups?.topics[0]?.partitions[0]?.primary ?? 0;
const other = [0, 1, 2].find((id) => id !== victim) as number;
const direct = cluster.nodeClient(other, { requestTimeoutMs: 20_000, cluster: { leaderAware: false, retry: { attemptsMax: 1 } } });
await direct.ping();
const t0 = Date.now();
await cluster.node(victim).stop('SIGKILL');
console.log('killed', victim, 'asking', other);
for (let i = 0; i < 30; i++) {
  const a = Date.now() - t0;
  try { await direct.ping(); console.log('ping', a, '->', Date.now() - t0); } catch (e) { console.log('ping err', a, String(e).slice(0, 100)); }
  const b = Date.now() - t0;
  try { const v = await direct.getClusterMetadata(); console.log('meta', b, '->', Date.now() - t0, v.leader?.name); } catch (e) { console.log('meta err', b, String(e).slice(0, 100)); }
  const c = Date.now() - t0;
  try { await direct.sendMessages({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'x' }] }); console.log('send ok', c, '->', Date.now() - t0); } catch (e) { console.log('send err', c, '->', Date.now() - t0, String(e).slice(0, 100)); }
  if (Date.now() - t0 > 12_000) break;
  await new Promise((r) => setTimeout(r, 300));
}
await cluster.stop();
process.exit(0);
