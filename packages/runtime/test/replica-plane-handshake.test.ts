/**
 * The three-frame handshake on real sockets (replication-semantics.md §3.7): auth off and on,
 * rotation, refusals with and without a reject Challenge, unknown status bytes, garbage and slow
 * peers against the grace deadline.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Command,
  HandshakeStatus,
  MacDirection,
  checkChallenge,
  clusterIdFromName,
  deriveMacKey,
  encodeReplicaChallenge,
  encodeReplicaFinish,
  encodeReplicaHello,
  handshakeMac,
} from '@shoal/protocol';
import {
  CLUSTER,
  OTHER_SECRET,
  RawPeer,
  SECRET,
  commitFrame,
  commitOf,
  concatBytes,
  freePorts,
  nonce,
  settingsFor,
  sleep,
  startNode,
  stopAll,
  waitFor,
  type TestNode,
} from './replica-plane-support.js';

const servers: Server[] = [];
afterEach(async () => {
  await stopAll();
  for (const server of servers.splice(0)) server.close();
});

async function pair(options: { auth0?: { secret: string; previous?: string } | null; auth1?: { secret: string; previous?: string } | null; name0?: string; name1?: string } = {}): Promise<[TestNode, TestNode]> {
  const ports = await freePorts(2);
  const one = await startNode(settingsFor({ selfId: 1, ports, auth: options.auth1 ?? null, clusterName: options.name1 ?? 'iggy-cluster' }));
  const zero = await startNode(settingsFor({ selfId: 0, ports, auth: options.auth0 ?? null, clusterName: options.name0 ?? 'iggy-cluster' }));
  return [zero, one];
}

/** Both sides installed, and a frame crosses each way. */
async function expectLinked(zero: TestNode, one: TestNode): Promise<void> {
  await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'both ends installed');
  expect(zero.plane.send(1, commitFrame(0, 11n))).toBe('queued');
  expect(one.plane.send(0, commitFrame(1, 22n))).toBe('queued');
  await waitFor(() => (one.frames.get(0)?.length ?? 0) >= 1 && (zero.frames.get(1)?.length ?? 0) >= 1, 3000, 'frames both ways');
  expect(commitOf(one.frames.get(0)?.[0] as Uint8Array)).toBe(11n);
  expect(commitOf(zero.frames.get(1)?.[0] as Uint8Array)).toBe(22n);
}

describe('replica handshake: success', () => {
  it('auth off: the dialer sends a zero-nonce Hello and both ends install', async () => {
    const [zero, one] = await pair();
    await expectLinked(zero, one);
    expect(zero.ups[0]?.info).toEqual({ direction: 'outbound', tls: false, handedOff: false });
    expect(one.ups[0]?.info).toEqual({ direction: 'inbound', tls: false, handedOff: false });
  });

  it('auth on: Hello / Challenge / Finish with BLAKE3 MACs', async () => {
    const [zero, one] = await pair({ auth0: { secret: SECRET }, auth1: { secret: SECRET } });
    await expectLinked(zero, one);
    expect(zero.plane.stats().handshakesEstablished).toBe(1);
    expect(one.plane.stats().handshakesEstablished).toBe(1);
  });

  it('rotation: MACs made with the other side\'s previous secret are accepted', async () => {
    // Roll 2 of security.mdx half-way: one node already on the new secret, the other not yet.
    const [zero, one] = await pair({ auth0: { secret: OTHER_SECRET, previous: SECRET }, auth1: { secret: SECRET, previous: OTHER_SECRET } });
    await expectLinked(zero, one);
  });

  it('rotation: without the previous secret configured the MAC is refused', async () => {
    const [zero, one] = await pair({ auth0: { secret: OTHER_SECRET, previous: SECRET }, auth1: { secret: SECRET } });
    // The dialer accepts mac_a (its previous key), the acceptor refuses mac_d (current key only).
    await waitFor(() => one.refusals.some((r) => r.reason === 'mac_mismatch'), 3000, 'acceptor refusal');
    await sleep(100);
    expect(one.plane.isConnected(0)).toBe(false);
  });
});

describe('replica handshake: refusals', () => {
  it('a wrong shared secret is refused by the dialer (mac_a does not verify) and nothing installs', async () => {
    const [zero, one] = await pair({ auth0: { secret: OTHER_SECRET }, auth1: { secret: SECRET } });
    await waitFor(() => zero.refusals.some((r) => r.reason === 'mac_mismatch'), 3000, 'dialer refusal');
    await sleep(150);
    expect(zero.plane.isConnected(1)).toBe(false);
    expect(one.plane.isConnected(0)).toBe(false);
    expect(one.ups).toEqual([]);
  });

  it('a wrong cluster name is refused even with auth disabled (silent close)', async () => {
    const [zero, one] = await pair({ name0: 'other-cluster' });
    await waitFor(() => one.refusals.some((r) => r.reason === 'cluster_mismatch'), 3000, 'acceptor refusal');
    // The auth-off dialer counts the link as up at once and sees it closed.
    await waitFor(() => zero.downs.length > 0, 3000, 'dialer sees the close');
    expect(one.ups).toEqual([]);
    expect(one.plane.isConnected(0)).toBe(false);
  });

  it('a wrong cluster name with auth on gets a reject Challenge with status 2', async () => {
    const [zero, one] = await pair({ auth0: { secret: SECRET }, auth1: { secret: SECRET }, name0: 'other-cluster' });
    await waitFor(() => zero.refusals.some((r) => r.reason === 'cluster_mismatch'), 3000, 'dialer refusal');
    expect(zero.refusals.find((r) => r.reason === 'cluster_mismatch')?.statusByte).toBe(HandshakeStatus.ClusterMismatch);
    expect(one.ups).toEqual([]);
  });

  it('DirectionalRule: a higher id (or one past the roster) dialing down is refused', async () => {
    const ports = await freePorts(3);
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }), { dial: false });
    for (const claimed of [2, 1, 9]) {
      const raw = await RawPeer.connect(ports[1] as number);
      raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: claimed, nonce: nonce() }));
      const reject = await raw.bytes(256);
      expect(reject[60]).toBe(Command.ReplicaChallenge);
      expect(reject[192]).toBe(HandshakeStatus.DirectionalRule);
      expect(reject.subarray(128, 192).every((b) => b === 0)).toBe(true);
      await raw.waitClosed();
    }
    expect(one.refusals.filter((r) => r.reason === 'directional_rule')).toHaveLength(3);
    expect(one.plane.connectedPeers()).toEqual([]);
  });

  it('DirectionalRule with auth off: closed without a frame', async () => {
    const ports = await freePorts(3);
    const one = await startNode(settingsFor({ selfId: 1, ports }), { dial: false });
    const raw = await RawPeer.connect(ports[1] as number);
    raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: 2 }));
    await raw.waitClosed();
    expect(raw.received.length).toBe(0);
    expect(one.refusals[0]?.reason).toBe('directional_rule');
  });

  it('auth on: a zero-nonce Hello (auth-off dialer) is refused silently; other failures only nack with a nonce', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }), { dial: false });
    const legacy = await RawPeer.connect(ports[1] as number);
    legacy.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }));
    await legacy.waitClosed();
    expect(legacy.received.length).toBe(0);
    const wrongCluster = await RawPeer.connect(ports[1] as number);
    wrongCluster.write(encodeReplicaHello({ cluster: clusterIdFromName('x'), replica: 0 }));
    await wrongCluster.waitClosed();
    expect(wrongCluster.received.length).toBe(0);
    expect(one.refusals.map((r) => r.reason)).toEqual(['auth_required', 'cluster_mismatch']);
  });

  it('the dialer treats any non-zero status byte, unknown values included, as a reject', async () => {
    for (const status of [1, 2, 3, 4, 5, 7, 200, 255]) {
      const { port } = await fakeAcceptor((hello, raw) => {
        const frame = encodeReplicaChallenge({ cluster: CLUSTER, replica: 1, nonce: new Uint8Array(32), mac: new Uint8Array(32) });
        frame[192] = status;
        void hello;
        raw.write(frame);
      });
      const zero = await startNode(settingsFor({ selfId: 0, ports: [1, port], auth: { secret: SECRET }, listen: false }));
      await waitFor(() => zero.refusals.length > 0, 3000, `refusal for status ${status}`);
      const refusal = zero.refusals[0];
      expect(refusal?.statusByte).toBe(status);
      const expected = { 1: 'unknown_command', 2: 'cluster_mismatch', 3: 'directional_rule', 4: 'auth_required', 5: 'mac_mismatch' }[status] ?? 'unknown_command';
      expect(refusal?.reason, `status ${status}`).toBe(expected);
      expect(zero.plane.isConnected(1)).toBe(false);
      await zero.plane.stop();
    }
  });

  it('a Challenge with status 0 and a MAC over the wrong transcript is refused (mac_mismatch)', async () => {
    const key = deriveMacKey(SECRET);
    const { port } = await fakeAcceptor((hello, raw) => {
      const nonceA = nonce();
      // MAC computed as if the exporter were bound (mode 1) while the link is plaintext.
      const mac = handshakeMac(key, { cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD: hello.slice(128, 160), nonceA, tlsExporter: new Uint8Array(32), direction: MacDirection.Acceptor });
      raw.write(encodeReplicaChallenge({ cluster: CLUSTER, replica: 1, nonce: nonceA, mac }));
    });
    const zero = await startNode(settingsFor({ selfId: 0, ports: [1, port], auth: { secret: SECRET }, listen: false }));
    await waitFor(() => zero.refusals.length > 0, 3000, 'refusal');
    expect(zero.refusals[0]?.reason).toBe('mac_mismatch');
  });
});

describe('replica handshake: hostile bytes and the grace deadline', () => {
  it('garbage bytes close the socket without crashing, and the listener keeps serving', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, bus: { handshakeGraceMs: 500 } }), { dial: false });
    const garbage = await RawPeer.connect(ports[1] as number);
    garbage.write(new Uint8Array(Array.from({ length: 600 }, (_, i) => (i * 131 + 7) & 0xff)));
    await garbage.waitClosed();
    // A frame-shaped first frame that is not a Hello.
    const wrong = await RawPeer.connect(ports[1] as number);
    wrong.write(commitFrame(0, 1n));
    await wrong.waitClosed();
    expect(one.refusals.map((r) => r.reason)).toEqual(['frame_size_above_max', 'unknown_command']);
    const zero = await startNode(settingsFor({ selfId: 0, ports }));
    await expectLinked(zero, one);
  });

  it('handshake frames are framed: a body is skipped, and more than 4 KiB before auth is a stream error', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports }), { dial: false });
    const huge = encodeReplicaHello({ cluster: CLUSTER, replica: 0 });
    new DataView(huge.buffer).setUint32(48, 4097, true);
    const oversized = await RawPeer.connect(ports[1] as number);
    oversized.write(huge);
    await oversized.waitClosed();
    expect(one.refusals[0]?.reason).toBe('frame_size_above_max');
    // A 300-byte Hello (44 body bytes) still installs; its body is not consensus data.
    const withBody = new Uint8Array(300);
    withBody.set(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }));
    new DataView(withBody.buffer).setUint32(48, 300, true);
    withBody.fill(0xee, 256);
    const raw = await RawPeer.connect(ports[1] as number);
    raw.write(concatBytes(withBody, commitFrame(0, 8n)));
    await waitFor(() => (one.frames.get(0)?.length ?? 0) === 1, 3000, 'the frame after the Hello');
    expect(commitOf(one.frames.get(0)?.[0] as Uint8Array)).toBe(8n);
    expect(one.drops).toEqual([]);
  });

  it('a truncated Hello is closed when handshake_grace expires', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, bus: { handshakeGraceMs: 300 } }), { dial: false });
    const raw = await RawPeer.connect(ports[1] as number);
    raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }).subarray(0, 100));
    const started = Date.now();
    await raw.waitClosed(3000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(one.refusals[0]?.reason).toBe('deadline');
  });

  it('a slow-drip Hello that would finish after the deadline is closed at the deadline', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, bus: { handshakeGraceMs: 400 } }), { dial: false });
    const raw = await RawPeer.connect(ports[1] as number);
    const hello = encodeReplicaHello({ cluster: CLUSTER, replica: 0 });
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < hello.length && !raw.closed) raw.write(hello.subarray(sent, (sent += 8)));
    }, 20);
    try {
      await raw.waitClosed(3000);
    } finally {
      clearInterval(drip);
    }
    expect(sent).toBeLessThan(hello.length);
    expect(one.refusals[0]?.reason).toBe('deadline');
    expect(one.ups).toEqual([]);
  });

  it('a Hello split at every byte boundary still completes (framing, not chunking, decides)', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports }), { dial: false });
    const raw = await RawPeer.connect(ports[1] as number);
    const hello = encodeReplicaHello({ cluster: CLUSTER, replica: 0 });
    for (let at = 0; at < hello.length; at += 37) {
      raw.write(hello.subarray(at, Math.min(at + 37, hello.length)));
      await sleep(1);
    }
    await waitFor(() => one.plane.isConnected(0), 3000, 'install');
  });

  it('frames pipelined behind the handshake in the same write reach the consensus stream intact', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }), { dial: false });
    const raw = await RawPeer.connect(ports[1] as number);
    const nonceD = nonce();
    raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0, nonce: nonceD }));
    const challenge = await raw.bytes(256);
    const keys = { current: deriveMacKey(SECRET) };
    expect(checkChallenge(challenge, 0, { keys, cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD, tlsExporter: null }).ok).toBe(true);
    const macD = handshakeMac(keys.current, { cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD, nonceA: challenge.slice(128, 160), tlsExporter: null, direction: MacDirection.Dialer });
    raw.write(concatBytes(encodeReplicaFinish({ cluster: CLUSTER, replica: 0, mac: macD }), commitFrame(0, 1n), commitFrame(0, 2n), commitFrame(0, 3n).subarray(0, 100)));
    await sleep(20);
    raw.write(commitFrame(0, 3n).subarray(100));
    await waitFor(() => (one.frames.get(0)?.length ?? 0) === 3, 3000, 'three frames');
    expect(one.frames.get(0)?.map(commitOf)).toEqual([1n, 2n, 3n]);
  });

  it('too many inbound handshakes in progress: the excess is closed at accept', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, bus: { handshakeGraceMs: 2000 } }), { dial: false });
    const idle = await Promise.all(Array.from({ length: 70 }, () => RawPeer.connect(ports[1] as number)));
    await waitFor(() => (one.plane.stats().handshakesRefused['busy'] ?? 0) === 6, 3000, 'busy refusals');
    await waitFor(() => idle.filter((peer) => peer.closed).length === 6, 3000, 'six closed');
    for (const peer of idle) peer.destroy();
  });
});

/** A raw acceptor that answers the first Hello with whatever `answer` writes. */
async function fakeAcceptor(answer: (hello: Uint8Array, raw: RawPeer) => void): Promise<{ port: number }> {
  const server = createServer((socket) => {
    const raw = RawPeer.of(socket);
    void raw.bytes(256).then((hello) => answer(hello, raw), () => undefined);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen({ host: '127.0.0.1', port: 0 }, () => done()));
  return { port: (server.address() as AddressInfo).port };
}
