/**
 * Issue 12, the findings about restarted replicas, each as a script: what happened before (the
 * commit that fixed it names the old behaviour), and the outcome that must hold now.
 *
 * - loss path 1 (partition): replicas that lost what they acked must not truncate acknowledged
 *   ops a complete replica holds;
 * - the real-process loss at the top of the issue: a restart, a primary kill right after an
 *   acknowledged burst, then each remaining node restarted once more;
 * - liveness 3: a restarted replica that becomes primary itself clears journalIncomplete, and a
 *   group with no ops clears it at once;
 * - loss path 2: an acknowledged op a truncation dropped stays faulty across a restart (both
 *   planes: the host records it; the metadata WAL in journal.faulty, the partition journal in a
 *   TRUNCATE record).
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '@shoal/consensus/testing';
import { fakeBatch } from '../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './support/cluster.js';
import { viewZeroOrphans } from './support/orphans.js';
import { reconcile } from '../../packages/consensus/src/start-view.js';
import { buildSuffix } from '../../packages/consensus/src/dvc-suffix.js';

const COMMIT = 9;
const PREPARE = 6;
const DVC = 11;
const REPAIR_PREPARE = 19;

function opOf(frame: Uint8Array): number {
  return Number(new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(176, true));
}

/** The base offsets of the batches a partition replica applied. */
function bases(cluster: Cluster, node: number): number[] {
  return (cluster.nodes[node]?.sm as unknown as { log: { base: number }[] }).log.map((b) => b.base);
}

function write(cluster: Cluster, node: number, request: number): { token: number; outcome: string } {
  return cluster.request(node, { client: 1n, request: BigInt(request), body: fakeBatch(`m${request}`) });
}

/** Acknowledged = the client got a reply for it. */
function acked(cluster: Cluster, token: number): boolean {
  return cluster.answersFor(token).length > 0;
}

describe('restarted replicas never lose what was acknowledged', () => {
  // Loss path 1: C (2) restarts and is still catching up; A (0, the primary) acknowledges ops
  // 6..8 with B's (1) acks only, then restarts; B holds 6..8 above its commit_max. A and C lost
  // their journals (before the partition journal: always, on any restart; now: a --fresh rejoin):
  // they abstain, then vote blind. Before, after two more status timeouts they voted with their
  // short logs: two "log ends below" nacks met the nack quorum and 6..8 were truncated, their
  // offsets given to other batches. Now blind is the last stage: the view waits for B's vote.
  it('loss path 1: two replicas without their journals do not truncate ops a complete one acknowledged', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 5; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(5), 300);
    cluster.crash(2);
    cluster.nodes[2]!.journalLost = true;
    cluster.restart(2);
    // C is catching up: it receives nothing from the primary for now. B never learns the commit
    // point of what follows (no Commit heartbeats, and the prepares it gets carry older commits).
    const cut = (m: { from: number; to: number; command: number }): boolean =>
      m.to === 2 || (m.to === 1 && m.command === COMMIT);
    cluster.filters.push(cut);
    const tokens = [6, 7, 8].map((i) => {
      const sent = write(cluster, 0, i);
      cluster.run(3);
      return sent.token;
    });
    cluster.runUntil(() => tokens.every((t) => acked(cluster, t)), 300);
    expect(coreOf(cluster.nodes[1]!.r).commitMax).toBeLessThan(8);
    expect(cluster.nodes[1]?.r.status.op).toBe(8);
    // A restarts without its journal too.
    cluster.crash(0);
    cluster.nodes[0]!.journalLost = true;
    cluster.restart(0);
    cluster.heal();
    // No DoViewChange gets to or from B for a long while (longer than every abstain stage), so the
    // views B would lead cannot finish either.
    const silenceB = (m: { from: number; to: number; command: number }): boolean => (m.from === 1 || m.to === 1) && m.command === DVC;
    cluster.filters.push(silenceB);
    cluster.run(6 * 500);
    cluster.filters.splice(cluster.filters.indexOf(silenceB), 1);
    cluster.runUntil(() => cluster.primary() !== null && cluster.converged(8), 20_000);
    for (const node of [0, 1, 2]) expect(bases(cluster, node).slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The acknowledged batches keep their offsets: op 6..8 are the batches m6..m8.
    const log = (cluster.nodes[1]?.sm as unknown as { log: { payload: string }[] }).log;
    expect(log.slice(5, 8).map((b) => b.payload)).toEqual(['m6', 'm7', 'm8']);
  });

  // The real-process loss, as a script: node 0 restarted; about 2 s later node 1,
  // primary of view 1, acknowledged a burst and was killed; each remaining node was then
  // restarted once more, one at a time, while the partition stalled. Before, every restart
  // emptied that replica's journal; the blind fallback started a view from a replica that lacked
  // the burst and its offsets were given to other batches. Now the journals come back.
  it('a restart, a primary kill after an acknowledged burst, then rolling restarts: the burst survives', () => {
    // The segments' durable frontier lags (a restart comes back at the last multiple of 16 ops).
    const cluster = new Cluster({ replicas: 3, plane: 'partition', flushEvery: 16 });
    for (let i = 1; i <= 4; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(4), 300);
    // Move the group to view 1 (primary 1), as in the trace.
    cluster.crash(0);
    cluster.runUntil(() => cluster.primary() === 1, 3000);
    cluster.restart(0);
    cluster.run(200);
    // Node 1 acknowledges a burst that node 0 (restarted, catching up) never sees.
    cluster.filters.push((m) => m.to === 0);
    const tokens: number[] = [];
    for (let i = 5; i <= 12; i++) {
      tokens.push(write(cluster, 1, i).token);
      cluster.run(2);
    }
    cluster.runUntil(() => tokens.every((t) => acked(cluster, t)), 500);
    cluster.crash(1);
    cluster.heal();
    cluster.run(300);
    cluster.crash(2);
    cluster.run(50);
    cluster.restart(2);
    cluster.run(300);
    cluster.crash(0);
    cluster.run(50);
    cluster.restart(0);
    cluster.restart(1);
    cluster.runUntil(() => cluster.primary() !== null && cluster.converged(12), 30_000);
    for (const node of [0, 1, 2]) {
      const log = (cluster.nodes[node]?.sm as unknown as { log: { base: number; payload: string }[] }).log;
      expect(log.slice(0, 12).map((b) => b.payload)).toEqual(Array.from({ length: 12 }, (_, i) => `m${i + 1}`));
      expect(log.slice(0, 12).map((b) => b.base)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    }
  });

  // Found by the simulator (seed 20 of 3): a backup adopted a StartView whose log ended above its
  // journal (it never got ops 5 and 6), persisted the new log view, and restarted. Its DoViewChange
  // then claimed that log view with the head of its journal (4); merged with the older log view's
  // replica (which held 5 and 6, committed), the newer log view won and 5 and 6 were dropped. Now
  // the installed log head is persisted with the log view: the restarted backup reports its log as
  // ending at 6, and the view waits for a copy of 5 and 6 it can trust.
  it('a backup that adopted a log ending above its journal, then restarted, does not let a view drop that tail', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition', flushEvery: 16 });
    for (let i = 1; i <= 4; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(4), 300);
    // Ops 5 and 6 are acknowledged by 0 and 1 alone.
    const cutOff = (m: { to: number }): boolean => m.to === 2;
    cluster.filters.push(cutOff);
    const tokens = [5, 6].map((i) => write(cluster, 0, i).token);
    cluster.runUntil(() => tokens.every((t) => acked(cluster, t)), 300);
    cluster.crash(0);
    // Replica 2 is back, but no body of 5 or 6 ever reaches it: it adopts view 1's log (op 6) without them.
    cluster.filters.splice(cluster.filters.indexOf(cutOff), 1);
    cluster.filters.push((m) => m.to === 2 && (m.command === PREPARE || m.command === REPAIR_PREPARE));
    cluster.runUntil(() => {
      const s = cluster.nodes[2]?.r.status;
      return s !== undefined && s.status === 'normal' && s.logView >= 1 && s.op === 6;
    }, 3000);
    expect(cluster.nodes[2]?.r.status.journalOps).not.toContain(5);
    cluster.crash(1);
    cluster.crash(2);
    cluster.heal();
    cluster.restart(0);
    cluster.restart(2);
    // 0 (log view 0, holds 5 and 6) and 2 (log view 1, holds neither) alone must not drop them.
    cluster.run(3000);
    expect(cluster.nodes[0]?.r.status.journalOps).toEqual(expect.arrayContaining([5, 6]));
    for (const node of [0, 2]) {
      const s = cluster.nodes[node]?.r.status;
      if (s?.status === 'normal') expect(s.op).toBeGreaterThanOrEqual(6);
    }
    cluster.restart(1);
    cluster.runUntil(() => cluster.primary() !== null && cluster.converged(6), 20_000);
    for (const node of [0, 1, 2]) {
      const log = (cluster.nodes[node]?.sm as unknown as { log: { payload: string }[] }).log;
      expect(log.slice(0, 6).map((b) => b.payload)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    }
  });

  // Liveness 3: after a full-cluster restart without journals every replica is incomplete;
  // the one that becomes primary starts a view with the log it merged, so it holds that view's
  // whole log. Before, journalIncomplete was cleared only on StartView adoption: the primary kept
  // abstaining at the group's next failover (10-20 s more), and the simulator counted the node
  // "recovering" forever.
  it('liveness 3: a restarted replica that starts a view as primary clears journalIncomplete', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 3; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(3), 300);
    for (const node of [0, 1, 2]) {
      cluster.crash(node);
      cluster.nodes[node]!.journalLost = true;
    }
    for (const node of [0, 1, 2]) cluster.restart(node);
    cluster.runUntil(() => cluster.primary() !== null, 20_000);
    const primary = cluster.primary() as number;
    expect(cluster.nodes[primary]?.r.role.journalIncomplete).toBe(false);
    expect(cluster.nodes[primary]?.r.marks()['journal_complete']).toBeGreaterThan(0);
    // A group nobody wrote to adopts a view at op 0: complete at once (it was `max(op, 1)`).
    const empty = new Cluster({ replicas: 3, plane: 'partition', seed: 3 });
    empty.run(10);
    empty.crash(2);
    empty.nodes[2]!.journalLost = true;
    empty.restart(2);
    empty.runUntil(() => empty.nodes[2]?.r.status.status === 'normal' && empty.nodes[2]?.r.role.journalIncomplete === false, 3000);
  });

  // Restarted with its journal, a replica votes at once: a primary kill right after a restart
  // does not wait for the abstain stages (issue 12 item 9, consensus side).
  it('a replica restarted with its journal votes promptly after a primary kill', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 4; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(4), 300);
    cluster.crash(2);
    cluster.restart(2);
    cluster.runUntil(() => cluster.nodes[2]?.r.status.status === 'normal', 2000);
    cluster.crash(0);
    const start = cluster.now;
    cluster.runUntil(() => cluster.primary() !== null, 3000);
    // Heartbeat timeout (500) + one view-change round, never the two abstain status timeouts (1000).
    expect(cluster.now - start).toBeLessThan(1000);
    expect(cluster.nodes[2]?.r.marks()['vote_abstain']).toBe(0);
  });
});

describe('orphans of an older view on a restarted replica of the newest log view', () => {
  // Found by reading, then this script (stop 23): replica 0, view 0's primary, journals orphans
  // 7..9 nobody else receives and crashes; view 1 (replica 1) commits other ops 7..10 (10 carries
  // commit 8); replica 0 installs view 2 from replica 2 at commit 10 (its StartView reconciles op 9
  // only: the orphans 7, 8 below stay, untrusted) and never receives a body. Replica 2 dies for
  // good, replicas 0 and 1 restart (commit_max back to 0: nothing flushed). Before, replica 0's
  // DoViewChange (log view 2, commit 0) showed orphans 7, 8 as its log view's headers; the merge's
  // commit point was 8 (the head commit field of replica 1), it took orphan 8 there, and replaced
  // committed ops 7..10. Now it reports the commit its superblock recorded (10) and nacks the op it
  // never received there; with replica 1's copy that makes A10 the committed op.
  it('a merge never puts an orphan over committed ops, and the survivors go on', () => {
    const cluster = viewZeroOrphans(1000);
    const tokens = [7, 8].map((i) => {
      const { token } = cluster.request(1, { client: 2n, request: BigInt(i), body: fakeBatch(`n${i}`) });
      cluster.runUntil(() => acked(cluster, token), 500);
      return token;
    });
    // 9 and 10 in flight together: 10 carries commit 8.
    for (const i of [9, 10]) tokens.push(cluster.request(1, { client: 2n, request: BigInt(i), body: fakeBatch(`n${i}`) }).token);
    cluster.runUntil(() => tokens.every((t) => acked(cluster, t)), 500);
    cluster.runUntil(() => coreOf(cluster.nodes[2]!.r).commitMax >= 10, 500);
    const committed = [7, 8, 9, 10].map((op) => cluster.committed.get(op));
    expect(committed.every((c) => c !== undefined)).toBe(true);
    cluster.crash(1);
    cluster.restart(0);
    cluster.filters.push((m) => m.from === 2 && m.to === 0 && m.command === REPAIR_PREPARE);
    cluster.runUntil(() => coreOf(cluster.nodes[0]!.r).logView >= 2 && cluster.nodes[0]!.r.status.status === 'normal', 5000);
    const c0 = coreOf(cluster.nodes[0]!.r);
    expect([c0.commitMax, c0.journal.has(7), c0.journal.has(10)]).toEqual([10, true, false]);
    cluster.crash(2);
    cluster.crash(0);
    cluster.filters.length = 0;
    cluster.isolate(2);
    cluster.restart(0);
    cluster.restart(1);
    // (The cluster asserts on every apply that each op has one checksum: SAFETY.)
    cluster.runUntil(() => [0, 1].every((i) => cluster.nodes[i]!.r.status.status === 'normal' && cluster.nodes[i]!.r.status.commitMin >= 10), 20_000);
    expect([7, 8, 9, 10].map((op) => cluster.committed.get(op))).toEqual(committed);
    for (const i of [0, 1]) expect([7, 8, 9, 10].map((op) => cluster.nodes[i]!.applied.get(op))).toEqual(committed);
  });
});

describe('a restarted replica and a dead primary (issue 12 item 9)', () => {
  // Before, a probing replica dropped every StartViewChange until its own probes ran out: with
  // the primary dead nobody answers the probe, and the survivor could not elect without it until
  // then (real defaults: 5 probes of 1 s against a 3 s heartbeat timeout, plus re-dials).
  it('a replica still probing joins the view change the survivor starts', () => {
    const cluster = new Cluster({
      replicas: 3, plane: 'partition', config: { ticks: { normalHeartbeat: 300, requestStartView: 100 }, viewProbeAttemptsMax: 10 },
    });
    for (let i = 1; i <= 3; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(3), 300);
    cluster.crash(0);
    cluster.crash(1);
    cluster.restart(1);
    const start = cluster.now;
    cluster.runUntil(() => cluster.primary() !== null, 3000);
    // Heartbeat timeout (300) and one view-change round; the probes alone would run 1000 ticks.
    expect(cluster.now - start).toBeLessThan(700);
    expect(cluster.nodes[1]?.r.marks()['probe_joins_view_change']).toBeGreaterThan(0);
    write(cluster, cluster.primary() as number, 4);
    cluster.runUntil(() => cluster.live().every((n) => n.r.status.commitMin >= 4), 500);
  });
});

describe('a truncated acknowledged op stays faulty across a restart (loss path 2)', () => {
  // A replica acked ops 5..8; a reconcile (StartView adoption, §5.7 step 1) truncates from a
  // disagreeing op 5 and marks the agreeing 6..8 faulty (it may have acked them). Before, the
  // marks lived in memory only: after a crash the replica's log ended at 4 and its DoViewChange
  // nacked 6..8 by omission (loss path 2: with one more such nack, acknowledged ops are gone).
  // Now the truncation carries the faulty range to the host (journal_truncate.faultyThrough),
  // which records it before the entries go, and the restart marks them faulty again.
  it('ops a reconcile marked faulty are faulty (never nacked) after a restart', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 4; i++) {
      write(cluster, 0, i);
      cluster.run(2);
    }
    cluster.runUntil(() => cluster.converged(4), 300);
    // Replica 1 gets the prepares of 5..8 but never learns they committed.
    cluster.filters.push((m) => m.to === 1 && m.command === COMMIT);
    for (let i = 5; i <= 8; i++) write(cluster, 0, i);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.op === 8, 100);
    const c = coreOf(cluster.nodes[1]!.r);
    expect(c.commitMin).toBeLessThan(6);
    // A canonical log that disagrees at op 5 and agrees at 6..8 (white-box: the shape a StartView
    // brings when this replica held a stale op 5 below acked ones).
    const held = (op: number): { op: number; checksum: bigint; parent: bigint } => ({ op, checksum: c.journal.get(op)!.checksum, parent: c.journal.get(op)!.parent });
    const headers = [{ op: 5, checksum: 0xdeadn, parent: c.journal.get(4)!.checksum }, { ...held(6), parent: 0xdeadn }, held(7), held(8)];
    reconcile(c, 8, c.commitMin, headers);
    cluster.process(cluster.nodes[1]!);
    expect([6, 7, 8].every((op) => c.journal.faulty.has(op))).toBe(true);
    cluster.crash(1);
    cluster.restart(1);
    const after = coreOf(cluster.nodes[1]!.r);
    expect([6, 7, 8].every((op) => after.journal.faulty.has(op))).toBe(true);
    // Its DoViewChange says nothing (no nack) about 6..8.
    const suffix = buildSuffix(after);
    for (const e of suffix.entries) if (Number(e.op) >= 6 && Number(e.op) <= 8) expect(e.nack ?? false).toBe(false);
    expect(suffix.op).toBeGreaterThanOrEqual(8);
    void PREPARE;
    void opOf;
  });
});
