/**
 * Hostile or broken replica peers against live nodes (real processes), and the replica-frame
 * vectors against a live replica listener:
 * - a wrong shared secret, a wrong cluster name, a peer dialing the wrong way (a higher id
 *   dialing a lower one), garbage bytes: refused as replication-semantics.md §3.7 says (reject
 *   Challenge with status 2 / 3 when the Hello is nackable, else a silent close), counted by reason;
 * - a valid link whose bytes get corrupted in flight (a proxy flips bits): frames dropped with a
 *   reason or the stream closed and re-dialed;
 * and the cluster keeps serving throughout;
 * - every frame of the golden replica_frames.json accepted or refused by node 2's listener
 *   exactly as the vectors say (and `command_30` closes the stream).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Command, MacDirection, clusterIdFromName, deriveMacKey, encodeReplicaFinish, encodeReplicaHello, handshakeMac, validateHeader,
} from '@shoal/protocol';
import { loadVectorFile } from '../support/fixtures.js';
import { RawClient, hexBytes } from './support/raw-client.js';
import { metricSum } from './support/server.js';
import { TEST_SECRET, TestCluster, sleep, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendTagged, sendAcked } from './support/produce.js';

function refused(metrics: string, reason: string): number {
  return metricSum(metrics, 'shoal_replica_handshakes_refused_total', { reason });
}

/** Hello as `replica` of cluster `name`, with a nonce (nackable: auth-on acceptors answer a reject Challenge). */
function hello(name: string, replica: number, nonce = new Uint8Array(randomBytes(32))): { frame: Uint8Array; nonce: Uint8Array } {
  return { frame: encodeReplicaHello({ cluster: clusterIdFromName(name), replica, nonce }), nonce };
}

describe('cluster: hostile replica peers', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, proxies: true });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('refuses bad handshakes and survives corrupted links, and keeps serving', async () => {
    const client = cluster.client({ requestTimeoutMs: 5_000 });
    await client.stream.create({ name: 'h' });
    await client.topic.create({ streamId: 'h', name: 't', partitionsCount: 1 });
    const log = newLog();
    await sendAcked(client, log, 'h', 't', 0, 'start', 10);
    const node2 = { host: '127.0.0.1', port: cluster.replicaPorts[2] as number };
    const node0 = { host: '127.0.0.1', port: cluster.replicaPorts[0] as number };

    // Wrong shared secret: node 2 answers a Challenge (its MAC does not verify under our key),
    // our Finish carries a MAC under the wrong key: node 2 closes without a word.
    {
      const raw = await RawClient.connect(node2);
      const h = hello(cluster.name, 0);
      const challenge = await raw.request(h.frame);
      expect(challenge?.[60]).toBe(Command.ReplicaChallenge);
      expect(challenge?.[192]).toBe(0);
      const nonceA = (challenge as Uint8Array).slice(128, 160);
      const transcript = { cluster: clusterIdFromName(cluster.name), dialerId: 0, acceptorId: 2, nonceD: h.nonce, nonceA, tlsExporter: null };
      const theirs = Buffer.from((challenge as Uint8Array).subarray(160, 192)).toString('hex');
      expect(theirs).toBe(Buffer.from(handshakeMac(deriveMacKey(TEST_SECRET), { ...transcript, direction: MacDirection.Acceptor })).toString('hex'));
      const wrongKey = deriveMacKey('not-the-cluster-secret-0123456789abcdef');
      raw.write(encodeReplicaFinish({ cluster: clusterIdFromName(cluster.name), replica: 0, mac: handshakeMac(wrongKey, { ...transcript, direction: MacDirection.Dialer }) }));
      expect(await raw.closedWithin(5_000)).toBe(true);
      expect(await raw.next(100)).toBeNull();
    }
    // Wrong cluster name: reject Challenge with status 2 (ClusterMismatch), then close.
    {
      const raw = await RawClient.connect(node2);
      const reject = await raw.request(hello('some-other-cluster', 0).frame);
      expect(reject?.[60]).toBe(Command.ReplicaChallenge);
      expect(reject?.[192]).toBe(2);
      expect(await raw.closedWithin(5_000)).toBe(true);
    }
    // Dialing the wrong way: "replica 1" dialing replica 0 (only lower ids dial higher ones):
    // status 3 (DirectionalRule). An id past the roster is refused the same way.
    for (const claimed of [1, 7]) {
      const raw = await RawClient.connect(node0);
      const reject = await raw.request(hello(cluster.name, claimed).frame);
      expect(reject?.[192]).toBe(3);
      expect(await raw.closedWithin(5_000)).toBe(true);
    }
    // Garbage bytes: not a frame the handshake accepts; closed, nothing answered.
    {
      const raw = await RawClient.connect(node2);
      raw.write(new Uint8Array(randomBytes(4096)));
      expect(await raw.closedWithin(12_000)).toBe(true);
    }
    // A Hello with auth required but no nonce (auth off dialer): silent close.
    {
      const raw = await RawClient.connect(node2);
      raw.write(encodeReplicaHello({ cluster: clusterIdFromName(cluster.name), replica: 0 }));
      expect(await raw.closedWithin(5_000)).toBe(true);
      expect(await raw.next(100)).toBeNull();
    }
    const m2 = await cluster.metrics(2);
    expect(refused(m2, 'mac_mismatch')).toBeGreaterThanOrEqual(1);
    expect(refused(m2, 'cluster_mismatch')).toBeGreaterThanOrEqual(1);
    expect(refused(m2, 'auth_required')).toBeGreaterThanOrEqual(1);
    expect(refused(await cluster.metrics(0), 'directional_rule')).toBeGreaterThanOrEqual(2);

    // A valid link, corrupted in flight (node 0 → node 2, and back): bit flips hit seals (frames
    // dropped with a reason) or sizes (the stream is closed and re-dialed).
    const proxy = cluster.proxy(0, 2);
    const handshakesBefore = metricSum(m2, 'shoal_replica_handshakes_total');
    proxy.corrupt({ directions: 'both', probability: 0.3, seed: 7 });
    const writes = (async () => {
      for (let i = 0; i < 30; i++) await sendTagged(client, log, 'h', 't', 0, `during-${i}`, 10);
    })();
    await waitFor('corruption noticed by node 2', async () => {
      const m = await cluster.metrics(2);
      return metricSum(m, 'shoal_replica_frames_dropped_total') > 0 || metricSum(m, 'shoal_replica_handshakes_total') > handshakesBefore;
    }, 30_000, 250);
    await writes;
    proxy.reset();

    // Still serving, every node linked to both peers again, and nothing acknowledged lost.
    for (let i = 0; i < 5; i++) await sendAcked(client, log, 'h', 't', 0, `after-${i}`, 10);
    await waitFor('every link back up', async () => {
      const counts = await Promise.all([0, 1, 2].map(async (id) => metricSum(await cluster.metrics(id), 'shoal_replica_link_up')));
      return counts.every((c) => c === 2);
    }, 30_000, 250);
    const reference = await readPartition(cluster.nodeClient(await cluster.leader()), 'h', 't', 0);
    for (const id of [0, 1, 2]) {
      const reader = cluster.nodeClient(id);
      await waitFor(`node ${id} converged`, async () => (await readPartition(reader, 'h', 't', 0)).size === reference.size, 30_000, 250);
      expect(checkPartition(await readPartition(reader, 'h', 't', 0), 0, log)).toEqual([]);
    }
  }, 180_000);
});

interface VectorDoc {
  readonly frames: readonly { readonly name: string; readonly command: number; readonly hex: string }[];
  readonly negative: readonly { readonly name: string; readonly hex: string }[];
}

describe('cluster: replica frame vectors on a live listener', () => {
  // The vectors are frames of a 3-replica cluster named iggy-cluster, auth off, sent by replica
  // 0: only node 2 runs, and the test is its replica 0.
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, name: 'iggy-cluster', secret: null, start: [2] });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('accepts and refuses every frame exactly as replica_frames.json says', async () => {
    const doc = loadVectorFile('replica_frames.json') as VectorDoc;
    const clientBound = new Set<number>([Command.Reply, Command.Eviction]);
    const handshake = new Set<number>([Command.ReplicaHello, Command.ReplicaChallenge, Command.ReplicaFinish]);
    const accepted = doc.frames.filter((f) => !clientBound.has(f.command) && !handshake.has(f.command));
    const streamError = doc.negative.filter((n) => n.name === 'command_30');
    const negatives = doc.negative.filter((n) => n.name !== 'command_30');
    expect(streamError).toHaveLength(1);
    const expectedDrops = new Map<string, number>();
    const reasons = [
      ...doc.frames.filter((f) => clientBound.has(f.command)).map(() => 'client_bound_command'),
      ...doc.frames.filter((f) => handshake.has(f.command)).map(() => 'handshake_command'),
      ...negatives.map((n) => validateHeader(hexBytes(n.hex), 0, { replicaCount: 3 }) ?? 'accepted?'),
    ];
    for (const reason of reasons) expectedDrops.set(reason, (expectedDrops.get(reason) ?? 0) + 1);
    expect(expectedDrops.has('accepted?')).toBe(false);

    const raw = await RawClient.connect({ host: '127.0.0.1', port: cluster.replicaPorts[2] as number });
    raw.write(encodeReplicaHello({ cluster: clusterIdFromName('iggy-cluster'), replica: 0 }));
    const stream = Buffer.concat([...doc.frames, ...negatives].map((f) => Buffer.from(f.hex, 'hex')));
    for (let at = 0; at < stream.length; at += 1000) raw.write(stream.subarray(at, at + 1000));

    const peer = { peer: '0' };
    const judged = await waitFor('every frame judged', async () => {
      const m = await cluster.metrics(2);
      const received = metricSum(m, 'shoal_replica_frames_received_total', peer);
      const dropped = metricSum(m, 'shoal_replica_frames_dropped_total', peer);
      return received + dropped === doc.frames.length + negatives.length ? m : null;
    }, 20_000, 200);
    expect(metricSum(judged, 'shoal_replica_frames_received_total', peer)).toBe(accepted.length);
    for (const [reason, count] of expectedDrops) {
      expect(metricSum(judged, 'shoal_replica_frames_dropped_total', { ...peer, reason }), reason).toBe(count);
    }
    expect(raw.closed).toBe(false);

    // A command byte above 29 is a stream error: the connection is closed.
    const releasedBefore = cluster.node(2).records('replica peer down').length;
    raw.write(hexBytes((streamError[0] as { hex: string }).hex));
    expect(await raw.closedWithin(5_000)).toBe(true);
    // The shard holding the handed-off link reports its end to the supervisor, which only then
    // frees the pair slot ("replica peer down"): a Hello before that is closed as a duplicate.
    await waitFor('node 2 freed the link of peer 0', () => cluster.node(2).records('replica peer down').length > releasedBefore, 10_000, 20);

    // After all of that the node still serves: a fresh link is installed and kept.
    const again = await RawClient.connect({ host: '127.0.0.1', port: cluster.replicaPorts[2] as number });
    again.write(encodeReplicaHello({ cluster: clusterIdFromName('iggy-cluster'), replica: 0 }));
    await sleep(200);
    expect(again.closed).toBe(false);
    again.destroy();
    expect(cluster.node(2).alive).toBe(true);
  }, 120_000);
});
