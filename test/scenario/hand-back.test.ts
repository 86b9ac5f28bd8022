/**
 * Leadership hand-back (consensus hand-back.ts, issue 13 item 2): after a failover the survivors
 * lead; once the preferred replica is back and caught up, the acting primary drains its pipeline
 * and starts a view change to the first view that replica leads. Standard messages only
 * (StartViewChange of a higher view), so the log survives as in any view change.
 */
import { describe, expect, it } from 'vitest';
import { classifyServerFrame } from '@shoal/protocol';
import { HAND_BACK_ACK_FRESH_TICKS } from '../../packages/consensus/src/hand-back.js';
import { HandBackPolicy } from '../../packages/replica/src/leadership.js';
import { Cluster, text } from './support/cluster.js';
import { login, puts } from './support/script.js';

function outcomeOf(cluster: Cluster, token: number): ReturnType<typeof classifyServerFrame> | null {
  const answer = cluster.answersFor(token)[0];
  return answer === undefined ? null : classifyServerFrame(answer.frame);
}

describe('leadership hand-back', () => {
  it('the primary hands the group to a caught-up replica: the first view it leads, the log intact', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 5n);
    puts(cluster, 0, 5n, epoch, 1n, 3);
    cluster.runUntil(() => cluster.converged(4), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    // Only the acting primary may, only towards another replica, and only one that acked in this view.
    expect(primary.canHandBack(0)).toBe(false);
    expect(primary.canHandBack(3)).toBe(false);
    expect(cluster.nodes[1]?.r.canHandBack(2)).toBe(false);
    expect(primary.canHandBack(2)).toBe(true);
    expect(primary.handBack(2)).toBe(true);
    cluster.process(cluster.nodes[0] as (typeof cluster.nodes)[number]);
    // A hand-back is under way: no second one.
    expect(primary.canHandBack(1)).toBe(false);
    cluster.runUntil(() => cluster.primary() === 2 && cluster.live().every((n) => n.r.status.status === 'normal'), 2000);
    // View 2 is the first view above 0 that replica 2 leads (2 % 3).
    expect(cluster.nodes[2]?.r.status.view).toBe(2);
    expect(primary.marks().hand_back_started).toBe(1);
    // The new primary serves the same session on the same log.
    puts(cluster, 2, 5n, epoch, 4n, 1);
    cluster.runUntil(() => cluster.converged(5), 500);
    expect(cluster.commitMins()).toEqual([5, 5, 5]);
  });

  it('a write in flight when the hand-back starts commits first (the pipeline drains), one queued after it waits', () => {
    // As the runtime configures it: requests a view change drops are answered (57).
    const cluster = new Cluster({ replicas: 3, latency: 3, config: { answerDroppedRequests: true } });
    const epoch = login(cluster, 0, 6n);
    const other = login(cluster, 0, 7n);
    puts(cluster, 0, 6n, epoch, 1n, 1);
    cluster.runUntil(() => cluster.converged(3), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    // Op 4 is prepared, not yet committed, when the hand-back starts.
    const inFlight = cluster.request(0, { client: 6n, request: 2n, session: epoch, body: text.encode('a=2') });
    expect(inFlight.outcome).toBe('proposed');
    expect(primary.handBack(1)).toBe(true);
    cluster.process(cluster.nodes[0] as (typeof cluster.nodes)[number]);
    expect(primary.status.status).toBe('normal');
    // A request arriving during the drain is parked, not proposed.
    const parked = cluster.request(0, { client: 7n, request: 1n, session: other, body: text.encode('b=1') });
    expect(parked.outcome).toBe('queued');
    cluster.runUntil(() => cluster.primary() === 1 && cluster.live().every((n) => n.r.status.status === 'normal'), 2000);
    // The in-flight write committed in view 0 and was answered with its reply, not a 57.
    expect(outcomeOf(cluster, inFlight.token)?.outcome).toBe('ok');
    expect(primary.marks().hand_back_drain_bounded).toBe(0);
    // The parked one never entered a pipeline; the view change answered it as retriable.
    expect(outcomeOf(cluster, parked.token)).toMatchObject({ outcome: 'error', errorCode: 57 });
    expect(cluster.nodes[1]?.r.status.commitMin).toBe(4);
  });

  it('the driver policy hands back only after the preferred replica stayed caught up for the hold', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 8n);
    puts(cluster, 0, 8n, epoch, 1n, 1);
    cluster.runUntil(() => cluster.converged(2), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    const policy = new HandBackPolicy(1, 5);
    const started = Array.from({ length: 6 }, () => policy.tick(primary));
    expect(started).toEqual([false, false, false, false, true, false]);
    cluster.runUntil(() => cluster.primary() === 1, 2000);
    // The preferred replica leads now: the policy of the old primary has nothing left to do.
    expect(Array.from({ length: 10 }, () => policy.tick(primary)).some(Boolean)).toBe(false);
  });
  it('a replica that stopped acking is not caught up, however close its last ack is to a quiet commit point', () => {
    // The nemesis's restart-then-kill episodes: the preferred replica was killed while its groups
    // were quiet, its last ack stayed within a pipeline of commit_max, and the policy handed the
    // group to the dead replica (a whole view-change timeout without writes).
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 9n);
    puts(cluster, 0, 9n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    expect(primary.canHandBack(2)).toBe(true);
    // The host still sees a link (a paused process, a dropped link not noticed yet): only the
    // age of the last ack can tell. A hold longer than the freshness window never completes.
    cluster.crash(2);
    const policy = new HandBackPolicy(2, HAND_BACK_ACK_FRESH_TICKS + 10);
    let started = false;
    for (let t = 0; t < HAND_BACK_ACK_FRESH_TICKS + 40; t++) {
      cluster.step();
      started ||= policy.tick(primary);
    }
    expect(primary.canHandBack(2)).toBe(false);
    expect(started).toBe(false);
    expect(primary.status).toMatchObject({ status: 'normal', view: 0 });
    // Replica 1 keeps acking writes: it stays a valid target.
    puts(cluster, 0, 9n, epoch, 3n, 1);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.commitMin === 4, 500);
    expect(primary.canHandBack(1)).toBe(true);
  });

  it('the driver policy waits while the host has no link to the preferred replica', () => {
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 12n);
    puts(cluster, 0, 12n, epoch, 1n, 1);
    cluster.runUntil(() => cluster.converged(2), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    const policy = new HandBackPolicy(1, 5);
    let linked = false;
    const link = (replica: number): boolean => replica !== 1 || linked;
    expect(Array.from({ length: 8 }, () => policy.tick(primary, link)).some(Boolean)).toBe(false);
    linked = true;
    expect(Array.from({ length: 5 }, () => policy.tick(primary, link))).toEqual([false, false, false, false, true]);
  });

  it('a hand-back whose target goes silent while the pipeline drains is called off, and the parked writes go on here', () => {
    const cluster = new Cluster({ replicas: 3, latency: 3, config: { answerDroppedRequests: true } });
    const epoch = login(cluster, 0, 10n);
    const other = login(cluster, 0, 11n);
    puts(cluster, 0, 10n, epoch, 1n, 1);
    cluster.runUntil(() => cluster.converged(3), 500);
    const primary = cluster.nodes[0]?.r;
    if (primary === undefined) throw new Error('no primary');
    const inFlight = cluster.request(0, { client: 10n, request: 2n, session: epoch, body: text.encode('a=2') });
    expect(inFlight.outcome).toBe('proposed');
    expect(primary.handBack(2)).toBe(true);
    // Both backups die before acking: the drain runs to its bound with the target silent.
    cluster.crash(1);
    cluster.crash(2);
    const parked = cluster.request(0, { client: 11n, request: 1n, session: other, body: text.encode('b=1') });
    expect(parked.outcome).toBe('queued');
    cluster.run(HAND_BACK_ACK_FRESH_TICKS + 20);
    // No view change towards the dead replica: the primary still leads view 0.
    expect(primary.status).toMatchObject({ status: 'normal', view: 0 });
    expect(primary.marks().hand_back_drain_bounded ?? 0).toBe(0);
    // The backups return; both writes commit in view 0.
    cluster.restart(1);
    cluster.restart(2);
    cluster.runUntil(() => outcomeOf(cluster, parked.token) !== null, 3000);
    expect(outcomeOf(cluster, inFlight.token)?.outcome).toBe('ok');
    expect(outcomeOf(cluster, parked.token)?.outcome).toBe('ok');
    expect(primary.status.view).toBe(0);
  });
});
