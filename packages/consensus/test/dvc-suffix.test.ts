/**
 * The DoViewChange suffix a replica builds (§5.3): entry 0 is the head op; journaled entries are
 * present; a hole above the commit point is a blank with a nack bit; at the commit point, or for a
 * faulty (lost) op, a blank without bits.
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '../src/testing.js';
import { Prng } from '@shoal/stdx';
import { decodeSuffix } from '@shoal/protocol';
import { Replica, metadataPlane } from '../src/index.js';
import { buildOwnDvc, buildSuffix } from '../src/dvc-suffix.js';
import { entryHeader } from '../src/journal.js';
import { KvStateMachine } from './support/state-machines.js';

function soloWithOps(count: number): Replica {
  const prng = new Prng(3);
  const r = new Replica({
    config: { cluster: 1n, replica: 0, replicaCount: 1, deepInvariants: true },
    plane: metadataPlane(5n),
    stateMachine: new KvStateMachine(),
    time: { realtimeMicros: () => 1_000_000n },
    prng,
  });
  const drain = (): void => {
    for (const e of r.takeEffects()) {
      if (e.kind === 'journal_append') r.onStorageDone({ kind: 'journal_written', op: e.op, checksum: e.checksum, ok: true });
      if (e.kind === 'superblock_write') r.onStorageDone({ kind: 'superblock_written', state: e.state, ok: true });
    }
  };
  drain();
  r.submitSession({ session: 'register', client: 1n, userId: 1, epoch: 0n, request: 0n, token: 1 });
  drain();
  for (let i = 1; i < count; i++) {
    r.onRequest({ client: 1n, request: BigInt(i), session: 1n, requestChecksum: 0n, operation: 128, body: new TextEncoder().encode(`k${i}`), userId: 1, timestamp: 0n, token: 2 });
    drain();
  }
  return r;
}

describe('DoViewChange suffix (§5.3)', () => {
  it('runs from the head down to max(commit, 1); entry 0 is the head op; journaled entries are present', () => {
    const r = soloWithOps(5);
    const c = coreOf(r);
    expect(c.op).toBe(5);
    const { op, commit, entries } = buildSuffix(c);
    expect(op).toBe(5);
    expect(commit).toBe(5);
    expect(entries.map((e) => Number(e.op))).toEqual([5]);
    const decoded = decodeSuffix(buildOwnDvc(c).frame);
    expect(decoded.ok && decoded.value[0]?.present).toBe(true);
  });

  it('a hole above the commit point is nacked, at the commit point or when faulty it is not', () => {
    const r = soloWithOps(5);
    const c = coreOf(r);
    // A white-box picture (no entry point runs afterwards): the journal lost ops 4 and 5 while
    // the sequencer stays at 5, and the commit point is 2.
    c.journal.truncateFrom(4);
    c.commitMax = 2;
    c.commitMin = 2;
    const { entries } = buildSuffix(c);
    // op = 5 (sequencer), commit = 2: entries 5, 4 (holes above the commit point: nack), 3, 2 (present).
    expect(entries.map((e) => [Number(e.op), e.header === null, e.nack === true, e.present === true])).toEqual([
      [5, true, true, false],
      [4, true, true, false],
      [3, false, false, true],
      [2, false, false, true],
    ]);
    c.journal.faulty.add(4);
    const again = buildSuffix(c).entries;
    expect(again[1]?.nack === true).toBe(false);
    expect(again[0]?.nack === true).toBe(true);
  });

  it('a header known from the log (not journaled here) is sent with a nack bit above the commit point, unless faulty', () => {
    const r = soloWithOps(5);
    const c = coreOf(r);
    const held = c.journal.get(5);
    expect(held).toBeDefined();
    const header = entryHeader(held as NonNullable<typeof held>).slice();
    c.journal.truncateFrom(4);
    c.commitMax = 2;
    c.commitMin = 2;
    // A StartView told it op 5's header; it never received the prepare, so it never acked it.
    c.canon.set(5, { checksum: (held as NonNullable<typeof held>).checksum, parent: (held as NonNullable<typeof held>).parent, header });
    const entries = buildSuffix(c).entries;
    expect([entries[0]?.header !== null, entries[0]?.nack === true, entries[0]?.present === true]).toEqual([true, true, false]);
    c.journal.faulty.add(5); // lost: it may have acked it
    expect(buildSuffix(c).entries[0]?.nack === true).toBe(false);
  });
});

describe('a blind DoViewChange (an incomplete journal past its abstain bound)', () => {
  it('reports its head as a blank without a nack bit even where it holds that op: its log end is unknown', () => {
    const r = soloWithOps(130);
    const c = coreOf(r);
    // White-box: the replica restarted with a journal it cannot trust (it may have acked ops it
    // lost) and then received ops again (a primary-elect's repair): it holds 1..130, commit 1.
    c.journalIncomplete = true;
    c.votesBlind = true;
    c.commitMax = 1;
    c.commitMin = 1;
    const { op, commit, entries } = buildSuffix(c);
    expect([op, commit]).toEqual([130, 1]);
    expect(c.journal.get(130)).toBeDefined();
    expect([Number(entries[0]?.op), entries[0]?.header === null, entries[0]?.nack === true]).toEqual([130, true, false]);
    // Below the head it says what it holds, and nacks nothing.
    expect([Number(entries[1]?.op), entries[1]?.present === true]).toEqual([129, true]);
    expect(entries.some((e) => e.nack === true)).toBe(false);
    const decoded = decodeSuffix(buildOwnDvc(c).frame);
    expect(decoded.ok && decoded.value[0]?.blank).toBe(true);
  });
});

describe('a lost tail above one suffix window from the commit point', () => {
  it('reports the held head as a blank without a nack bit: its log end is unknown', () => {
    const r = soloWithOps(140);
    const c = coreOf(r);
    // White-box (seed 1026552 of 3): a power loss left ops 1..140 in the journal with commit 0
    // and ops up to 400 faulty (it may have acked them); 400 is above commit + 127, so the lost
    // tail cannot be reported as the log's end.
    c.commitMax = 0;
    c.commitMin = 0;
    for (let op = 141; op <= 400; op++) c.journal.faulty.add(op);
    const { op, entries } = buildSuffix(c);
    expect(op).toBe(140);
    expect([Number(entries[0]?.op), entries[0]?.header === null, entries[0]?.nack === true]).toEqual([140, true, false]);
    expect([Number(entries[1]?.op), entries[1]?.present === true]).toEqual([139, true]);
    // Within the window the lost tail is reported exactly, as before: op = its top, held head.
    for (let op = 129; op <= 400; op++) c.journal.faulty.delete(op);
    c.journal.faulty.add(141);
    c.commitMax = 20;
    c.commitMin = 20;
    const within = buildSuffix(c);
    expect(within.op).toBe(141);
    expect([Number(within.entries[1]?.op), within.entries[1]?.present === true]).toEqual([140, true]);
  });
});
