/**
 * RequestStartView probing (§5.9) and the DoViewChange suffix a replica builds (§5.3).
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '@shoal/consensus/testing';
import { decodeSuffix, DoViewChangeHeaderView } from '@shoal/protocol';
import { Cluster, text } from './support/cluster.js';
import { login, puts } from './support/script.js';

describe('probing', () => {
  it('with view_probe_attempts_max = 5, four probes go out and the fifth fire elects', () => {
    const cluster = new Cluster({ replicas: 3 });
    login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    cluster.crash(2);
    cluster.restart(2);
    // Nobody answers replica 2 (its probes are counted, then dropped).
    const probes: number[] = [];
    const votes: number[] = [];
    cluster.filters.push((m) => {
      if (m.from !== 2) return false;
      if (m.command === 17) probes.push(cluster.now);
      if (m.command === 10) votes.push(cluster.now);
      return true;
    });
    cluster.run(100 * 5 + 5);
    expect(probes.length).toBe(4 * 2); // four broadcasts to two peers
    expect(votes.length).toBeGreaterThan(0); // then StartViewChange(view + 1)
    expect(Math.min(...votes)).toBeGreaterThan(Math.max(...probes));
    expect(cluster.nodes[2]?.r.status.status).toBe('view_change');
  });

  it('a probe is answered only by the current primary, with a unicast StartView echoing the incarnation', () => {
    const cluster = new Cluster({ replicas: 3 });
    login(cluster, 0, 1n);
    cluster.runUntil(() => cluster.converged(1), 200);
    cluster.crash(1);
    const answers: { from: number; to: number; incarnation: bigint }[] = [];
    cluster.filters.push((m) => {
      if (m.command === 12) answers.push({ from: m.from, to: m.to, incarnation: new DataView(m.frame.buffer).getBigUint64(240, true) });
      return false;
    });
    cluster.restart(1);
    cluster.runUntil(() => cluster.nodes[1]?.r.status.status === 'normal', 500);
    expect(answers.every((a) => a.from === 0 && a.to === 1)).toBe(true);
    expect(answers[0]?.incarnation).not.toBe(0n);
  });
});

describe('DoViewChange suffix', () => {
  it('entry 0 is the head op; journaled entries are present; blanks above the commit point carry nack bits', () => {
    // Backup 2 journals ops 1..3; ops 4..5 never reach it.
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 200);
    cluster.filters.push((m) => m.command === 6 && m.to === 2);
    // The primary announces a commit as soon as its pipeline drains: keep replica 1 from hearing
    // it, so op 4 stays prepared-not-committed there.
    cluster.filters.push((m) => m.command === 9 && m.to === 1);
    cluster.request(0, { client: 1n, request: 3n, session: epoch, body: text.encode('x=1') });
    cluster.run(3);
    const dvcs: Uint8Array[] = [];
    cluster.filters.push((m) => {
      if (m.command === 11 && m.from === 1) dvcs.push(m.frame.slice());
      return false;
    });
    cluster.crash(0);
    cluster.runUntil(() => dvcs.length > 0, 2000);
    const frame = dvcs[0] as Uint8Array;
    const h = new DoViewChangeHeaderView(frame);
    // Replica 1 holds ops 1..4 (op 4 prepared, not committed); its commit point is 3.
    expect(h.opNumber).toBe(4);
    expect(h.commitNumber).toBe(3);
    const entries = decodeSuffix(frame);
    expect(entries.ok).toBe(true);
    if (!entries.ok) return;
    expect(entries.value.map((e) => Number(e.op))).toEqual([4, 3]);
    expect(entries.value.map((e) => e.present)).toEqual([true, true]);
    expect(entries.value.map((e) => e.nack)).toEqual([false, false]);
  });

  it('a blank above the commit point is nacked; one the replica lost to an integrity truncation is not', () => {
    // Replica 2 adopts view 1 whose head (op 4) it never received: the adoption sets its sequencer
    // to 4 and its journal has a hole at 4.
    const cluster = new Cluster({ replicas: 3 });
    const epoch = login(cluster, 0, 1n);
    puts(cluster, 0, 1n, epoch, 1n, 2);
    cluster.runUntil(() => cluster.converged(3), 200);
    cluster.filters.push((m) => (m.command === 6 || m.command === 19) && m.to === 2);
    cluster.request(0, { client: 1n, request: 3n, session: epoch, body: text.encode('x=1') });
    cluster.run(3);
    cluster.crash(0);
    cluster.runUntil(() => cluster.nodes[2]?.r.status.view === 1 && cluster.nodes[2]?.r.status.status === 'normal', 2000);
    expect(cluster.nodes[2]?.r.status.op).toBe(4);
    expect(cluster.nodes[2]?.r.journalFrame(4)).toBeNull();
    const dvcs: Uint8Array[] = [];
    cluster.filters.push((m) => {
      if (m.command === 11 && m.from === 2) dvcs.push(m.frame.slice());
      return false;
    });
    cluster.restart(0);
    cluster.crash(1);
    cluster.runUntil(() => dvcs.length > 0, 3000);
    const entries = decodeSuffix(dvcs[0] as Uint8Array);
    expect(entries.ok).toBe(true);
    if (!entries.ok) return;
    const commit = new DoViewChangeHeaderView(dvcs[0] as Uint8Array).commitNumber;
    const head = entries.value[0];
    expect(Number(head?.op)).toBe(4);
    // It knows op 4's header from the StartView body but cannot serve the body: header, no bits.
    expect(head?.blank).toBe(false);
    expect(head?.present).toBe(false);
    expect(head?.nack).toBe(false);
    // Without that header the entry is a blank, nacked exactly when above the commit point...
    const core = coreOf(cluster.nodes[2]!.r);
    core.canon.delete(4);
    const blank = decodeSuffix(buildFor(core));
    expect(blank.ok && blank.value[0]?.blank).toBe(true);
    expect(blank.ok && blank.value[0]?.nack).toBe(4 > commit);
    // ...and a hole marked faulty (lost, not "never prepared") is never nacked.
    core.journal.faulty.add(4);
    const again = decodeSuffix(buildFor(core));
    expect(again.ok && again.value[0]?.nack).toBe(false);
    // At exactly the commit point no bit is set either (the sender proves nothing there).
    core.journal.faulty.delete(4);
    if (core.commitMax < 4) core.commitMax = 4;
    const atCommit = decodeSuffix(buildFor(core));
    expect(atCommit.ok && atCommit.value[0]?.blank).toBe(true);
    expect(atCommit.ok && atCommit.value[0]?.nack).toBe(false);
  });
});

import { buildOwnDvc } from '../../packages/consensus/src/dvc-suffix.js';
function buildFor(core: Parameters<typeof buildOwnDvc>[0]): Uint8Array {
  return buildOwnDvc(core).frame;
}
