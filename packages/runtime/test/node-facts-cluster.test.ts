/**
 * GetClusterMetadata's node list as the reference builds it (server cluster_meta.rs, configs
 * cluster.rs `advertised_for`): the single-node names, the address each node is advertised under
 * for the caller's network (longest-prefix `advertised_addresses` selector, else
 * `advertised_address`, else `ip`; hostnames lower-cased, IPv6 canonical), and port 0 for the
 * transports Shoal does not serve, whatever the roster says.
 */
import { describe, expect, it } from 'vitest';
import { NodeFacts } from '../src/client-plane/node-facts.js';
import { StatusTable } from '../src/status/status-table.js';
import { load, node, rosterFile } from './config-fixtures.js';

function facts(file: string, replicaId: number | null): NodeFacts {
  const loaded = load({ file, env: { IGGY_CLUSTER_AUTH_SHARED_SECRET: 'x'.repeat(40) }, flags: replicaId === null ? {} : { replicaId } });
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => e.message).join('\n'));
  const status = StatusTable.attach(StatusTable.create({ shardCount: 1, threadCount: 2, sessionSlotsPerShard: 8, partitionSlots: 16, startTimeMicros: 0n }));
  return new NodeFacts(loaded.config, status);
}

describe('GetClusterMetadata nodes', () => {
  it('a single node: the reference names, the served ports, 0 for QUIC and WebSocket', () => {
    const meta = facts('[tcp]\naddress = "127.0.0.1:8090"\n', null).cluster('127.0.0.1:50000');
    expect(meta).toEqual({ name: 'single-node', nodes: [{ name: 'iggy-node', ip: '127.0.0.1', tcpPort: 8090, quicPort: 0, httpPort: 3000, websocketPort: 0, role: 0, status: 0 }] });
  });

  it('a cluster: per-network advertised addresses, longest prefix first, canonical forms; no QUIC / WebSocket port', () => {
    const selectors = [
      '[[cluster.nodes.advertised_addresses]]\nclient_cidr = "10.0.0.0/8"\naddress = "Broker.Internal.Test"',
      '[[cluster.nodes.advertised_addresses]]\nclient_cidr = "10.1.0.0/16"\naddress = "10.1.0.5"',
    ].join('\n');
    const file = rosterFile([
      node(0, `advertised_address = "2001:DB8:0:0::1"\n${selectors}`, '{ tcp = 8090, quic = 8080, http = 3000, websocket = 8099, tcp_replica = 9090 }'),
      node(1, 'advertised_address = "Public.Example.COM"'),
      node(2),
    ]);
    const f = facts(file, 0);
    const ips = (client: string | undefined): string[] => f.cluster(client).nodes.map((n) => n.ip);
    expect(ips('10.1.2.3:4000')).toEqual(['10.1.0.5', 'public.example.com', '127.0.0.1']);
    expect(ips('10.9.9.9:4000')).toEqual(['broker.internal.test', 'public.example.com', '127.0.0.1']);
    expect(ips('::ffff:10.1.2.3:4000')).toEqual(['10.1.0.5', 'public.example.com', '127.0.0.1']);
    expect(ips('192.168.1.1:4000')).toEqual(['2001:db8::1', 'public.example.com', '127.0.0.1']);
    expect(ips(undefined)).toEqual(['2001:db8::1', 'public.example.com', '127.0.0.1']);
    const first = f.cluster('10.1.2.3:1').nodes[0];
    expect({ tcp: first?.tcpPort, quic: first?.quicPort, http: first?.httpPort, websocket: first?.websocketPort }).toEqual({ tcp: 8090, quic: 0, http: 3000, websocket: 0 });
  });
});
