/**
 * A 3-node cluster whose client ports serve TLS (`[tcp.tls]`, each node's self-signed pair): the
 * SDK over TLS on every node, and a partition request sent to a node that does not lead the
 * partition, which that node carries to the primary over its TLS forwarding link (docs/cluster.md
 * "Forwarded partition requests"; the forward link dials TLS when the client port serves it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, waitFor } from './support/cluster.js';

describe('a cluster with client-plane TLS', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({
      nodes: 3, shards: 1, extraToml: '[tcp.tls]\nenabled = true\nself_signed = true\n',
      // Each node presents its own self-signed certificate: the test trusts them blindly.
      clientTls: { rejectUnauthorized: false },
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('serves the SDK over TLS on every node and forwards a partition request from a backup over TLS', async () => {
    const admin = cluster.client();
    await admin.stream.create({ name: 'tls-fw' });
    await admin.topic.create({ streamId: 'tls-fw', name: 't', partitionsCount: 1 });
    const primary = await waitFor('a partition primary', async () => {
      const view = await cluster.view(0);
      const p = view.groups?.topics.find((t) => t.streamName === 'tls-fw')?.partitions[0];
      return p !== undefined && p.primary !== 255 ? p.primary : null;
    });
    const backup = [0, 1, 2].find((id) => id !== primary) as number;
    const direct = cluster.nodeClient(backup);
    const sent = await direct.message.send({ streamId: 'tls-fw', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'over tls' }] });
    expect(sent.confirmations?.[0]?.baseOffset).toBe(0n);
    for (const id of [0, 1, 2]) {
      const polled = await cluster.nodeClient(id).message.poll({ streamId: 'tls-fw', topicId: 't', partitionId: 0, consumer: 1, strategy: 'first', count: 10 });
      expect(polled.messages.map((m) => new TextDecoder().decode(m.payload))).toEqual(['over tls']);
    }
  });
});
