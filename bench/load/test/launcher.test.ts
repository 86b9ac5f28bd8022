import { describe, expect, it } from 'vitest';
import { formatConfigErrors, loadConfig } from '@shoal/runtime';
import { natsConfig } from '../src/nats/launcher.js';
import { SHOAL_SERVER_MISSING, ShoalLauncher, shoalConfig } from '../src/shoal/launcher.js';
import { TargetUnavailableError } from '../src/target.js';

/** The generated configuration files, checked against the loader the server boots with. */
const SECRET = 'ab'.repeat(32);

describe('Shoal launcher configuration', () => {
  for (const replicas of [1, 3, 5]) {
    it(`${replicas} replica(s): every node's file passes the server's boot validation`, () => {
      const nodes = Array.from({ length: replicas }, (_, i) => ({ tcp: 18_000 + i, tcpReplica: 19_000 + i }));
      for (let id = 0; id < replicas; id++) {
        const file = shoalConfig({ replicaId: id, dataDir: `/tmp/bench/node-${id}`, shards: 2, nodes, clusterName: 'shoal-bench-test' });
        expect(file).not.toContain(SECRET);
        const result = loadConfig({
          file,
          env: replicas > 1 ? { SHOAL_CLUSTER_AUTH_SHARED_SECRET: SECRET } : {},
          flags: replicas > 1 ? { replicaId: id } : {},
          availableParallelism: 2,
        });
        if (!result.ok) throw new Error(formatConfigErrors(result.errors));
        expect(result.config.node.replicaId).toBe(id);
        expect(result.config.node.replicaCount).toBe(replicas);
        expect(result.config.node.listeners.tcp).toEqual({ host: '127.0.0.1', port: 18_000 + id });
        expect(result.config.system.sharding.shardCount).toBe(2);
        expect(result.config.system.path).toBe(`/tmp/bench/node-${id}`);
        expect(result.config.cluster.enabled).toBe(replicas > 1);
        if (replicas > 1) expect(result.config.cluster.auth.enabled).toBe(true);
      }
    });
  }

  it('a missing server build is a TargetUnavailableError naming the entry', () => {
    const launcher = new ShoalLauncher({ entry: '/nonexistent/apps/server/dist/main.js' });
    expect(() => launcher.check()).toThrow(TargetUnavailableError);
    expect(() => launcher.check()).toThrow(SHOAL_SERVER_MISSING);
  });
});

describe('NATS launcher configuration', () => {
  it('routes to the other nodes, JetStream file store, loopback only', () => {
    const text = natsConfig({ name: 'n1', clientPort: 4222, clusterPort: 6222, storeDir: '/tmp/n1', routes: [6221, 6223], clusterName: 'bench' });
    expect(text).toContain('server_name: "n1"');
    expect(text).toContain('listen: "127.0.0.1:4222"');
    expect(text).toContain('store_dir: "/tmp/n1"');
    expect(text).toContain('"nats-route://127.0.0.1:6221"');
    expect(text).toContain('"nats-route://127.0.0.1:6223"');
    expect(text).not.toContain('6222"\n    "');
    expect(text).toMatch(/cluster \{[\s\S]*listen: "127\.0\.0\.1:6222"/);
  });
});
