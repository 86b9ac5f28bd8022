/**
 * Client table and sessions (§7): exactly-once on the metadata plane.
 */
import { describe, expect, it } from 'vitest';
import { classifyServerFrame, EvictionReason } from '@shoal/protocol';
import { Cluster, text } from './support/cluster.js';
import { login, puts } from './support/script.js';

function outcome(cluster: Cluster, token: number): ReturnType<typeof classifyServerFrame> {
  const answer = cluster.answersFor(token)[0];
  if (answer === undefined) throw new Error(`no answer for token ${token}`);
  return classifyServerFrame(answer.frame);
}

describe('client table', () => {
  it('a duplicate request gets the cached reply verbatim and is not applied again', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    const [first] = puts(cluster, 0, 1n, epoch, 1n, 1);
    const original = cluster.answersFor(first as number)[0]!.frame;
    const applied = (cluster.nodes[0]!.sm as { applied: number[] }).applied.length;
    // The client retries request 1 (it never saw the reply): the primary answers from the table.
    const { token, outcome: o } = cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('k1=v1') });
    expect(o).toBe('answered');
    expect(cluster.answersFor(token)[0]!.frame).toEqual(original);
    cluster.run(20);
    expect((cluster.nodes[0]!.sm as { applied: number[] }).applied.length).toBe(applied);
  });

  it('an older request number whose reply left the ring is AlreadyApplied (59)', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 7); // the ring keeps the last 5 replies
    const { token } = cluster.request(0, { client: 1n, request: 1n, session: epoch, body: text.encode('k1=v1') });
    expect(outcome(cluster, token)).toMatchObject({ outcome: 'error', errorCode: 59 });
  });

  it('no session → eviction 1; a fenced (older) session after a rebind → eviction 7', () => {
    const cluster = new Cluster({ replicas: 3 });
    const { token: t1 } = cluster.request(0, { client: 2n, request: 1n, session: 1n, body: text.encode('a=1') });
    expect(outcome(cluster, t1)).toMatchObject({ outcome: 'error', source: 'eviction', evictionReason: EvictionReason.NoSession });
    const first = login(cluster, 0, 2n);
    puts(cluster, 0, 2n, first, 1n, 1);
    // The same client id logs in again (rebind): a new, higher epoch (the register's op).
    const second = login(cluster, 0, 2n);
    expect(second).toBeGreaterThan(first);
    // A zombie still using the old epoch is fenced.
    const { token: t2 } = cluster.request(0, { client: 2n, request: 2n, session: first, body: text.encode('a=2') });
    expect(outcome(cluster, t2)).toMatchObject({ outcome: 'error', source: 'eviction', evictionReason: EvictionReason.SessionTooLow });
    // The rebind kept the watermark: request 1 is still a duplicate under the new epoch.
    const { outcome: o } = cluster.request(0, { client: 2n, request: 1n, session: second, body: text.encode('a=1') });
    expect(o).toBe('answered');
  });

  it('a request while the primary is catching up or busy with the client is NotReady (57)', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 3n);
    cluster.filters.push(() => true); // nothing commits
    cluster.request(0, { client: 3n, request: 1n, session: epoch, body: text.encode('a=1') });
    const { token } = cluster.request(0, { client: 3n, request: 2n, session: epoch, body: text.encode('a=2') });
    expect(outcome(cluster, token)).toMatchObject({ outcome: 'error', errorCode: 57 });
  });

  it('full table: the entry with the smallest latest commit is evicted, and its session is gone', () => {
    const cluster = new Cluster({ replicas: 3, config: { clientsTableMax: 2 } });
    const e1 = login(cluster, 0, 1n);
    const e2 = login(cluster, 0, 2n);
    puts(cluster, 0, 2n, e2, 1n, 1);
    // A third client: client 1 has the smallest latest_commit and is evicted on every replica.
    login(cluster, 0, 3n);
    cluster.runUntil(() => cluster.converged(4), 200);
    for (const node of cluster.nodes) expect(node.r.clientSession(1n)).toBeNull();
    const { token } = cluster.request(0, { client: 1n, request: 1n, session: e1, body: text.encode('a=1') });
    expect(outcome(cluster, token)).toMatchObject({ evictionReason: EvictionReason.NoSession });
  });

  it('a structurally invalid request is evicted (4/5) by the state machine at prepare build', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 4n);
    const { token } = cluster.request(0, { client: 4n, request: 1n, session: epoch, body: new Uint8Array(0) });
    expect(outcome(cluster, token)).toMatchObject({ source: 'eviction', evictionReason: EvictionReason.InvalidRequestBody });
  });

  it('CreateTopic is rewritten by the primary into CreateTopicWithAssignments (64) for every replica', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 5n);
    const { token } = cluster.request(0, { client: 5n, request: 1n, session: epoch, operation: 132, body: text.encode('orders') });
    cluster.runUntil(() => cluster.converged(2), 200);
    for (const node of cluster.nodes) expect(node.r.journalFrame(2)?.[208]).toBe(64);
    expect(cluster.answersFor(token).length).toBe(1);
  });

  it('replies are byte-identical across replicas for the same committed request (view aside)', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 6n);
    puts(cluster, 0, 6n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 200);
    const tables = cluster.nodes.map((n) => n.r.clientTableExport());
    expect(tables[1]).toEqual(tables[0]);
    expect(tables[2]).toEqual(tables[0]);
  });
});
