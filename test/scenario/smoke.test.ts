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

  // A backup serves reads locally: right after an acknowledged write it must know the commit,
  // not learn it at the next heartbeat (50 ticks). The primary announces a commit when its
  // pipeline drains, so the backups apply within a few ticks of the reply.
  it('an idle primary announces its commit at once: backups apply well before the heartbeat', () => {
    const cluster = new Cluster({ replicas: 3 });
    const login = cluster.session(0, 'register', 11n);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === login));
    const epoch = cluster.sessionResults.find((r) => r.token === login)?.epoch ?? 0n;
    cluster.run(60); // past any heartbeat the register triggered
    const { token } = cluster.request(0, { client: 11n, request: 1n, session: epoch, body: text.encode('k=v') });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 40);
    const op = cluster.commitMins()[0] ?? 0;
    cluster.run(5);
    expect(cluster.commitMins()).toEqual([op, op, op]);
  });
});
