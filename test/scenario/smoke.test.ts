import { describe, expect, it } from 'vitest';
import { Cluster, text } from './support/cluster.js';

describe('smoke', () => {
  it('metadata: register and commit a few requests on 3 replicas', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(5);
    expect(cluster.primary()).toBe(0);
    const login = cluster.session(0, 'register', 11n);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === login));
    const result = cluster.sessionResults.find((r) => r.token === login);
    expect(result?.outcome).toBe('ok');
    const epoch = result?.epoch ?? 0n;
    for (let i = 1n; i <= 5n; i++) {
      cluster.request(0, { client: 11n, request: i, session: epoch, body: text.encode(`k${i}=v${i}`) });
      cluster.run(3);
    }
    cluster.runUntil(() => cluster.converged(6), 200);
    expect(cluster.commitMins()).toEqual([6, 6, 6]);
  });
});
