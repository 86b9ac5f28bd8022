/**
 * Session forwarding (§8): a client logs in on a backup; only (client, user) travels to the
 * primary, which proposes the Register in-process and answers with the bound epoch.
 */
import { describe, expect, it } from 'vitest';
import { Cluster, text } from './support/cluster.js';

describe('session forwarding', () => {
  it('register on a backup: ForwardRegister → primary commits → ForwardRegisterResult Ok(epoch)', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(3);
    const token = cluster.session(2, 'register', 77n, 9);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === token), 200);
    const result = cluster.sessionResults.find((r) => r.token === token)!;
    expect(result).toMatchObject({ node: 2, outcome: 'ok', epoch: 1n });
    // The epoch works on the primary.
    const { token: t } = cluster.request(0, { client: 77n, request: 1n, session: result.epoch, body: text.encode('x=1') });
    cluster.runUntil(() => cluster.answersFor(t).length > 0, 200);
  });

  it('logout on a backup is forwarded and removes the session everywhere', () => {
    const cluster = new Cluster({ replicas: 3 });
    const t1 = cluster.session(1, 'register', 5n);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === t1), 200);
    const epoch = cluster.sessionResults.find((r) => r.token === t1)!.epoch;
    const t2 = cluster.session(1, 'logout', 5n, 7, epoch, 1n);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === t2), 200);
    expect(cluster.sessionResults.find((r) => r.token === t2)?.outcome).toBe('ok');
    cluster.runUntil(() => cluster.converged(2), 200);
    for (const node of cluster.nodes) expect(node.r.clientSession(5n)).toBeNull();
    expect((cluster.nodes[2]!.sm as { loggedOut: bigint[] }).loggedOut).toEqual([5n]);
  });

  it('no answer within 5 s: the origin reports ForwardTimedOut', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(3);
    cluster.filters.push((m) => m.command === 26);
    const token = cluster.session(1, 'register', 8n);
    cluster.run(499);
    expect(cluster.sessionResults.some((r) => r.token === token)).toBe(false);
    cluster.run(2);
    expect(cluster.sessionResults.find((r) => r.token === token)?.outcome).toBe('forward_timed_out');
  });

  // The primary dies with a forwarded Register unanswered: the origin does not wait out its 5 s
  // deadline and fail the login; the forward follows the view change to the new primary.
  it('the primary dies before answering: the forward follows the view change and the login binds', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(3);
    cluster.crash(0);
    const token = cluster.session(2, 'register', 9n, 4);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.status === 'normal' && cluster.nodes[1]?.r.status.view === 1, 3000);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === token), 200);
    const result = cluster.sessionResults.find((r) => r.token === token);
    expect(result).toMatchObject({ node: 2, outcome: 'ok' });
    expect(cluster.nodes[1]?.r.clientSession(9n)?.epoch).toBe(result?.epoch);
  });

  it('the origin itself becomes the new primary: it proposes the pending login in-process', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(3);
    cluster.crash(0);
    const token = cluster.session(1, 'register', 10n, 4);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === token), 3000);
    expect(cluster.nodes[1]?.r.status.view).toBe(1);
    expect(cluster.sessionResults.find((r) => r.token === token)).toMatchObject({ node: 1, outcome: 'ok' });
  });

  it('a client id owned by another user is refused (outcome 6)', () => {
    const cluster = new Cluster({ replicas: 3 });
    const t1 = cluster.session(0, 'register', 5n, 1);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === t1), 200);
    const t2 = cluster.session(2, 'register', 5n, 2);
    cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === t2), 200);
    expect(cluster.sessionResults.find((r) => r.token === t2)?.outcome).toBe('client_id_owned_by_another_user');
  });

  it('mid view change the origin answers NotPrimary at once', () => {
    const cluster = new Cluster({ replicas: 3 });
    cluster.run(3);
    cluster.crash(0);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.status === 'view_change', 2000);
    const token = cluster.session(1, 'register', 6n);
    expect(cluster.sessionResults.find((r) => r.token === token)?.outcome).toBe('not_primary');
  });
});
