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

const committedAs = (checksum: bigint | null) => (key: bigint, op: number): bigint | null => (key === KEY && op === 5 ? checksum : null);

describe('ack oracle', () => {
  it('a log that ends below an acked op is a nack of it: a violation once that copy is committed', () => {
    const oracle = oracleWithAck();
    oracle.voted(1, KEY, 2, vote(4, 3, [entry(4)]));
    expect(oracle.check(committedAs(X))).toMatch(/replica 1 group 7: its DoViewChange in view 2 nacked op 5 \(log ends below\)/);
    expect(oracle.check(committedAs(Y))).toBeNull(); // another op committed there: the ack was of a dead branch
    expect(oracle.check(committedAs(null))).toBeNull();
    expect(oracle.votesWithAcks).toBe(1);
  });

  it('an explicit nack bit counts; a blank without one, a log end it does not know and ops at its commit point do not', () => {
    const bit = oracleWithAck();
    bit.voted(1, KEY, 2, vote(6, 3, [entry(6), entry(5, { blank: true, nack: true }), entry(4)]));
    expect(bit.check(committedAs(X))).toMatch(/nacked op 5 \(nack bit\)/);

    const faulty = oracleWithAck();
    faulty.voted(1, KEY, 2, vote(6, 3, [entry(6), entry(5, { blank: true }), entry(4)]));
    expect(faulty.check(committedAs(X))).toBeNull();

    const blind = oracleWithAck();
    blind.voted(1, KEY, 2, vote(4, 3, [entry(4, { blank: true })])); // log end unknown: no nack by omission
    expect(blind.check(committedAs(X))).toBeNull();

    const below = oracleWithAck();
    below.voted(1, KEY, 2, vote(6, 5, [entry(6)])); // op 5 is at its commit point
    expect(below.check(committedAs(X))).toBeNull();
    expect(below.votesWithAcks).toBe(0);
  });

  it('only the sender\'s own acks and only the same group history count', () => {
    const oracle = oracleWithAck();
    oracle.voted(2, KEY, 2, vote(4, 3, [entry(4)]));
    oracle.voted(1, KEY + 1n, 2, vote(4, 3, [entry(4)]));
    expect(oracle.check(committedAs(X))).toBeNull();
  });

  it('a real run feeds it every PrepareOk and DoViewChange: some vote had acked ops above its commit point', () => {
    const result = new Simulation(calmOptions(45, 3, { safetyTicks: 1500, crashProbability: 0.01, powerShare: 0.5 })).run();
    expect(result.ok, result.failure ?? '').toBe(true);
    expect(result.marks['check.dvc_acks']).toBe(1);
  });

  it('the final checks fail a seed whose vote nacked a committed op its sender acked', () => {
    const sim = new Simulation(calmOptions(45, 3, { safetyTicks: 600 }), {
      beforeFinalChecks: (s: Simulation): void => {
        const committed = s.checker.committedChecksum(METADATA_GROUP_ID, 2) as bigint;
        expect(committed).not.toBeNull();
        s.ackOracle.acked(0, METADATA_GROUP_ID, 2, committed);
        s.ackOracle.voted(0, METADATA_GROUP_ID, 9, vote(1, 1, [entry(1)]));
      },
    });
    const result = sim.run();
    expect(result.ok).toBe(false);
    expect(result.failure).toMatch(/replica 0 metadata: its DoViewChange in view 9 nacked op 2 \(log ends below\)/);
  });
});
