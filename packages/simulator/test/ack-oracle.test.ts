/**
 * The ack oracle (ack-oracle.ts) on hand-made votes, and wired into a real run: a DoViewChange
 * that nacks an op its sender acknowledged fails the seed once that copy is the committed one.
 */
import { describe, expect, it } from 'vitest';
import { METADATA_GROUP_ID, type DvcEntry, type DvcRecord } from '@shoal/consensus';
import { AckOracle, Simulation, calmOptions } from '../src/index.js';

const KEY = 7n;
const X = 0xaaaan;
const Y = 0xbbbbn;

function entry(op: number, flags: { blank?: boolean; nack?: boolean; checksum?: bigint } = {}): DvcEntry {
  const blank = flags.blank ?? false;
  return {
    op, blank, checksum: blank ? 0n : (flags.checksum ?? X), parent: 0n, commit: 0, timestamp: 0n, view: 0,
    nack: flags.nack ?? false, present: !blank, header: new Uint8Array(256),
  };
}

/** A vote of replica 1 with its suffix from `op` down (entries head first). */
function vote(op: number, commit: number, entries: DvcEntry[]): DvcRecord {
  return { replica: 1, logView: 1, op, commit, entries };
}

function oracleWithAck(op = 5, checksum = X): AckOracle {
  const oracle = new AckOracle(3);
  oracle.acked(1, KEY, op, checksum);
  return oracle;
}

/** The oracle's verdict once op 5 of KEY was committed with `checksum` by a replica in `view`. */
function verdict(oracle: AckOracle, checksum: bigint, view: number): string | null {
  oracle.committed(KEY, 5, checksum, view);
  return oracle.check();
}

describe('ack oracle', () => {
  it('a log that ends below an acked op nacks it: a violation when that copy was committed in an older view', () => {
    const oracle = oracleWithAck();
    oracle.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(oracle.check()).toBeNull(); // not committed (yet)
    expect(verdict(oracle, X, 1)).toMatch(/replica 1 group 7: its DoViewChange in view 2 nacked op 5 \(log ends below\), which it had acknowledged with the checksum committed there in view 1/);
    expect(oracle.votesWithAcks).toBe(1);
  });

  it('not when another op was committed there, nor when the op is first seen committed in the vote\'s view or later', () => {
    const other = oracleWithAck();
    other.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(verdict(other, Y, 1)).toBeNull(); // the ack was of a dead branch
    const later = oracleWithAck();
    later.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(verdict(later, X, 2)).toBeNull(); // seed 1006789 of 5: a merge proved it uncommitted, view 2 committed it again
    later.committed(KEY, 5, X, null); // a replay's commit says nothing of the view
    expect(later.check()).toBeNull();
    later.committed(KEY, 5, X, 0); // but another replica had committed it in view 0
    expect(later.check()).toMatch(/committed there in view 0/);
  });

  it('an explicit nack bit counts; a blank without one, a log end it does not know and ops at its commit point do not', () => {
    const bit = oracleWithAck();
    bit.voted(1, KEY, 2, vote(6, 3, [entry(6), entry(5, { blank: true, nack: true }), entry(4)]));
    expect(verdict(bit, X, 0)).toMatch(/nacked op 5 \(nack bit\)/);

    const faulty = oracleWithAck();
    faulty.voted(1, KEY, 2, vote(6, 3, [entry(6), entry(5, { blank: true }), entry(4)]));
    expect(verdict(faulty, X, 0)).toBeNull();

    const blind = oracleWithAck();
    blind.voted(1, KEY, 2, vote(4, 3, [entry(4, { blank: true })])); // log end unknown: no nack by omission
    expect(verdict(blind, X, 0)).toBeNull();

    const below = oracleWithAck();
    below.voted(1, KEY, 2, vote(6, 5, [entry(6)])); // op 5 is at its commit point
    expect(verdict(below, X, 0)).toBeNull();
    expect(below.votesWithAcks).toBe(0);
  });

  it('the same nack in a later view is judged by that view', () => {
    const oracle = oracleWithAck();
    oracle.voted(1, KEY, 1, vote(4, 3, [entry(4)]));
    oracle.voted(1, KEY, 3, vote(4, 3, [entry(4)]));
    oracle.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(verdict(oracle, X, 2)).toMatch(/in view 3 nacked op 5 .* committed there in view 2/);
  });

  it('an ack sent after the op was committed somewhere is not counted (it was in no commit quorum)', () => {
    const oracle = new AckOracle(3);
    oracle.committed(KEY, 5, X, 0);
    oracle.acked(1, KEY, 5, X);
    oracle.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(oracle.check()).toBeNull();
    expect(oracle.votesWithAcks).toBe(0);
  });

  it('only the sender\'s own acks and only the same group history count', () => {
    const oracle = oracleWithAck();
    oracle.voted(2, KEY, 2, vote(4, 3, [entry(4)]));
    oracle.voted(1, KEY + 1n, 2, vote(4, 3, [entry(4)]));
    expect(verdict(oracle, X, 0)).toBeNull();
  });

  it('a real run feeds it every PrepareOk and DoViewChange: some vote had acked ops above its commit point', () => {
    const result = new Simulation(calmOptions(45, 3, { safetyTicks: 1500, crashProbability: 0.01, powerShare: 0.5 })).run();
    expect(result.ok, result.failure ?? '').toBe(true);
    expect(result.marks['check.dvc_acks']).toBe(1);
  });

  it('the final checks fail a seed whose vote nacked a committed op its sender acked', () => {
    const sim = new Simulation(calmOptions(45, 3, { safetyTicks: 600 }), {
      beforeFinalChecks: (s: Simulation): void => {
        // A forged history: replica 0 acked op 9,000 (far above anything this run commits), voted
        // in view 9 with its log ending below it, and the op was committed in view 0.
        s.ackOracle.acked(0, METADATA_GROUP_ID, 9_000, X);
        s.ackOracle.voted(0, METADATA_GROUP_ID, 9, vote(8_999, 8_998, [entry(8_999)]));
        s.ackOracle.committed(METADATA_GROUP_ID, 9_000, X, 0);
      },
    });
    const result = sim.run();
    expect(result.ok).toBe(false);
    expect(result.failure).toMatch(/replica 0 metadata: its DoViewChange in view 9 nacked op 9000 \(log ends below\), which it had acknowledged with the checksum committed there in view 0/);
  });
});
