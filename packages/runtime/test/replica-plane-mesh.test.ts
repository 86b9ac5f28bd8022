/**
 * Several planes together: directional dialing gives exactly one connection per pair (also when
 * everyone starts at once, and against a peer that races a second handshake), reconnection after
 * restarts and cuts, and a partition through the in-test proxy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MacDirection, checkChallenge, deriveMacKey, encodeReplicaFinish, encodeReplicaHello, handshakeMac } from '@shoal/protocol';
import { TcpProxy } from '../../../test/support/tcp-proxy.js';
import {
  CLUSTER,
  RawPeer,
  SECRET,
  commitFrame,
  commitOf,
  freePorts,
  nonce,
  settingsFor,
  sleep,
  startNode,
  stopAll,
  waitFor,
  type TestNode,
} from './replica-plane-support.js';

const proxies: TcpProxy[] = [];
afterEach(async () => {
  await stopAll();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
});

describe('one connection per pair', () => {
  it('five replicas started at once form a full mesh: each pair once, dialed by the lower id', async () => {
    const ports = await freePorts(5);
    const nodes = await Promise.all(ports.map((_, selfId) => startNode(settingsFor({ selfId, ports, auth: { secret: SECRET } }))));
    await waitFor(() => nodes.every((node) => node.plane.connectedPeers().length === 4), 5000, 'full mesh');
    await sleep(300); // a few more sweeps: nothing may change
    nodes.forEach((node, selfId) => {
      expect(node.plane.connectedPeers()).toEqual([0, 1, 2, 3, 4].filter((id) => id !== selfId));
      for (const up of node.ups) expect(up.info.direction).toBe(up.peer > selfId ? 'outbound' : 'inbound');
      expect(node.ups).toHaveLength(4);
      expect(node.downs).toEqual([]);
      expect(node.plane.stats().duplicatesClosed).toBe(0);
    });
    // Every pair carries frames both ways.
    nodes.forEach((node, from) => nodes.forEach((_, to) => {
      if (to !== from) expect(node.plane.send(to, commitFrame(from, BigInt(10 * from + to)))).toBe('queued');
    }));
    await waitFor(() => nodes.every((node) => [...node.frames.values()].reduce((sum, list) => sum + list.length, 0) === 4), 3000, 'frames');
    nodes.forEach((node, to) => {
      for (const [from, frames] of node.frames) expect(frames.map(commitOf)).toEqual([BigInt(10 * from + to)]);
    });
  });

  it('a second handshake for an installed peer is closed; the first link keeps working', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports }), { dial: false });
    const first = await RawPeer.connect(ports[1] as number);
    first.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }));
    await waitFor(() => one.plane.isConnected(0), 3000, 'first install');
    const second = await RawPeer.connect(ports[1] as number);
    second.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }));
    await second.waitClosed();
    expect(one.plane.stats().duplicatesClosed).toBe(1);
    first.write(commitFrame(0, 5n));
    await waitFor(() => (one.frames.get(0)?.length ?? 0) === 1, 3000, 'frame on the first link');
    expect(one.ups).toHaveLength(1);
  });

  it('two authenticated handshakes racing for the same pair: exactly one installs', async () => {
    const ports = await freePorts(2);
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }), { dial: false });
    const key = deriveMacKey(SECRET);
    const dialers = await Promise.all([0, 1, 2, 3].map(() => RawPeer.connect(ports[1] as number)));
    const nonces = dialers.map(() => nonce());
    dialers.forEach((raw, i) => raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0, nonce: nonces[i] as Uint8Array })));
    const challenges = await Promise.all(dialers.map((raw) => raw.bytes(256)));
    // All four Finish frames leave in the same turn.
    challenges.forEach((challenge, i) => {
      const nonceD = nonces[i] as Uint8Array;
      expect(checkChallenge(challenge, 0, { keys: { current: key }, cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD, tlsExporter: null }).ok).toBe(true);
      const mac = handshakeMac(key, { cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD, nonceA: challenge.slice(128, 160), tlsExporter: null, direction: MacDirection.Dialer });
      dialers[i]?.write(encodeReplicaFinish({ cluster: CLUSTER, replica: 0, mac }));
    });
    await waitFor(() => dialers.filter((raw) => raw.closed).length === 3, 3000, 'three closed');
    expect(one.plane.connectedPeers()).toEqual([0]);
    expect(one.plane.stats().duplicatesClosed).toBe(3);
    expect(one.ups).toHaveLength(1);
  });
});

describe('reconnection', () => {
  async function linkedPair(ports: number[], auth = true): Promise<[TestNode, TestNode]> {
    const settings = (selfId: number) => settingsFor({ selfId, ports, auth: auth ? { secret: SECRET } : null });
    const zero = await startNode(settings(0));
    const one = await startNode(settings(1));
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'link');
    return [zero, one];
  }

  it('the dialer re-dials after the acceptor restarts', async () => {
    const ports = await freePorts(2);
    const [zero, one] = await linkedPair(ports);
    await one.plane.stop();
    await waitFor(() => !zero.plane.isConnected(1), 3000, 'dialer sees the link drop');
    expect(zero.downs[0]?.peer).toBe(1);
    const restarted = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }));
    await waitFor(() => zero.plane.isConnected(1) && restarted.plane.isConnected(0), 5000, 're-link');
    expect(zero.plane.send(1, commitFrame(0, 77n))).toBe('queued');
    await waitFor(() => restarted.frames.get(0)?.[0] !== undefined, 3000, 'frame after the restart');
    expect(commitOf(restarted.frames.get(0)?.[0] as Uint8Array)).toBe(77n);
  });

  it('the acceptor takes the restarted dialer back', async () => {
    const ports = await freePorts(2);
    const [zero, one] = await linkedPair(ports);
    await zero.plane.stop();
    await waitFor(() => !one.plane.isConnected(0), 3000, 'acceptor sees the link drop');
    const restarted = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET } }));
    await waitFor(() => one.plane.isConnected(0) && restarted.plane.isConnected(1), 5000, 're-link');
    expect(one.ups).toHaveLength(2);
  });

  it('a refused peer is retried with backoff, then links once it is reachable', async () => {
    const ports = await freePorts(2);
    // Re-dial waits double from 100 ms (100, 200, 400, 800, then the 1 s period): the 4th
    // attempt is 700 ms in, the 5th 1.5 s in.
    const zero = await startNode(settingsFor({ selfId: 0, ports, bus: { reconnectPeriodMs: 1000 } }));
    await waitFor(() => (zero.plane.stats().dials[0]?.failures ?? 0) >= 3, 3000, 'three failures');
    const attempts = zero.plane.stats().dials[0]?.attempts ?? 0;
    await sleep(200);
    // Backing off: no attempt every few milliseconds, as a retry loop without a wait would make.
    expect((zero.plane.stats().dials[0]?.attempts ?? 0) - attempts).toBeLessThanOrEqual(2);
    expect(zero.refusals.every((r) => r.reason === 'connect_failed')).toBe(true);
    const one = await startNode(settingsFor({ selfId: 1, ports, bus: { reconnectPeriodMs: 1000 } }));
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 3000, 'link');
    expect(zero.plane.stats().dials[0]?.failures).toBe(0);
  });
});

describe('through the fault proxy', () => {
  it('a cut link reconnects; a held partition stalls frames and heal delivers them in order', async () => {
    const ports = await freePorts(2);
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: ports[1] as number });
    proxies.push(proxy);
    const dialPorts = [undefined, proxy.port];
    const one = await startNode(settingsFor({ selfId: 1, ports, auth: { secret: SECRET } }));
    const zero = await startNode(settingsFor({ selfId: 0, ports, auth: { secret: SECRET }, dialPorts }));
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'link via proxy');

    proxy.cut();
    await waitFor(() => zero.downs.length === 1 && one.downs.length === 1, 3000, 'both see the cut');
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 're-link via proxy');
    expect(proxy.stats.accepted).toBe(2);

    proxy.partition('upstream', 'hold');
    for (let i = 1n; i <= 5n; i++) zero.plane.send(1, commitFrame(0, i));
    await sleep(150);
    expect(one.frames.get(0) ?? []).toEqual([]);
    // One-way: the other direction still flows.
    one.plane.send(0, commitFrame(1, 42n));
    await waitFor(() => (zero.frames.get(1)?.length ?? 0) === 1, 3000, 'downstream frame during the partition');
    proxy.heal();
    await waitFor(() => (one.frames.get(0)?.length ?? 0) === 5, 3000, 'held frames after heal');
    expect(one.frames.get(0)?.map(commitOf)).toEqual([1n, 2n, 3n, 4n, 5n]);
  });

  it('a corrupted byte on the link becomes a dropped frame or a closed stream, never a crash', async () => {
    const ports = await freePorts(2);
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: ports[1] as number });
    proxies.push(proxy);
    const one = await startNode(settingsFor({ selfId: 1, ports }));
    const zero = await startNode(settingsFor({ selfId: 0, ports, dialPorts: [undefined, proxy.port] }));
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'link via proxy');
    proxy.corrupt({ directions: 'upstream', probability: 1, seed: 7 });
    for (let i = 1n; i <= 20n; i++) {
      zero.plane.send(1, commitFrame(0, i));
      await sleep(2);
    }
    await sleep(100);
    proxy.corrupt({ directions: 'upstream', probability: 0 });
    expect(proxy.stats.corrupted.upstream).toBeGreaterThan(0);
    const judged = (one.frames.get(0)?.length ?? 0) + one.drops.length;
    // Every corrupted frame was dropped with a reason, or a corrupted size/command closed the stream.
    expect(one.drops.length > 0 || one.downs.length > 0).toBe(true);
    expect(judged).toBeLessThanOrEqual(20);
    await waitFor(() => zero.plane.isConnected(1) && one.plane.isConnected(0), 5000, 'link (again) after corruption');
  });
});
