/**
 * The nemesis's judge and planner on their own: each check must name the fault it exists for
 * (a lost acknowledged message, a gap, a duplicate not explained by a re-send, a divergent node,
 * a lost or resurrected stream), and a seed must always plan the same faults.
 */
import { describe, expect, it } from 'vitest';
import { checkCatalog, checkPartitionCopy, compareCatalogs, compareCopies } from '../support/nemesis/checks.js';
import { ALL_KINDS, plan } from '../support/nemesis/schedule.js';
import { longestGap, newLedger, type BatchRecord, type Ledger } from '../support/nemesis/workload.js';

function ledgerOf(...batches: BatchRecord[]): Ledger {
  const ledger = newLedger();
  ledger.batches.push(...batches);
  return ledger;
}

const a: BatchRecord = { producer: 0, partition: 0, payloads: ['a0', 'a1'], attempts: 1, ackedAt: 0n };
const b: BatchRecord = { producer: 1, partition: 0, payloads: ['b0'], attempts: 2, ackedAt: 3n };
const lost: BatchRecord = { producer: 1, partition: 0, payloads: ['u0'], attempts: 1, ackedAt: null };

describe('nemesis checks', () => {
  it('accepts a copy with every acknowledged message in place and a re-sent duplicate', () => {
    const copy = new Map([[0n, 'a0'], [1n, 'a1'], [2n, 'b0'], [3n, 'b0'], [4n, 'u0']]);
    expect(checkPartitionCopy(0, 0, copy, ledgerOf(a, b, lost))).toEqual([]);
  });

  it('names a lost acknowledged message, a gap, an unexplained duplicate and a stranger', () => {
    expect(checkPartitionCopy(0, 0, new Map([[0n, 'a0'], [2n, 'b0'], [3n, 'b0']]), ledgerOf(a, b))).toEqual([
      'node 0 p0 offset 1: acknowledged a1, holds nothing',
      'node 0 p0: offset 2 where 1 was expected (gap)',
    ]);
    expect(checkPartitionCopy(2, 0, new Map([[0n, 'a0'], [1n, 'a1'], [2n, 'a1'], [3n, 'b0'], [4n, 'x']]), ledgerOf(a, b))).toEqual([
      'node 2 p0: a1 stored 2 times, sent 1',
      'node 2 p0 offset 4: x was never sent to this partition',
    ]);
    // An acknowledged offset given to another batch: both problems are named.
    expect(checkPartitionCopy(1, 0, new Map([[0n, 'a0'], [1n, 'a1'], [2n, 'u0'], [3n, 'u0']]), ledgerOf(a, b, lost))).toEqual([
      'node 1 p0 offset 3: acknowledged b0, holds u0',
      'node 1 p0: u0 stored 2 times, sent 1',
    ]);
  });

  it('names the first offset where two nodes differ, and a different catalog', () => {
    const same = [new Map([[0n, 'a0'], [1n, 'a1']])];
    expect(compareCopies([0, 1], [same, same])).toEqual([]);
    expect(compareCopies([0, 2], [same, [new Map([[0n, 'a0'], [1n, 'b0']])]])).toEqual([
      'partition 0: node 2 differs from node 0 from offset 1 (b0 vs a1; sizes 2 vs 2)',
    ]);
    expect(compareCopies([0, 1], [same, [new Map([[0n, 'a0']])]])).toEqual([
      'partition 0: node 1 differs from node 0 from offset 1 (nothing vs a1; sizes 1 vs 2)',
    ]);
    expect(compareCatalogs([0, 1], [['s id=1'], ['s id=1']])).toEqual([]);
    expect(compareCatalogs([0, 1], [['s id=1'], ['s id=2']])).toHaveLength(1);
  });

  it('names a lost stream, a resurrected one and one never created', () => {
    const ledger = newLedger();
    ledger.streams.set('kept', { name: 'kept', create: 'acked', delete: 'none' });
    ledger.streams.set('gone', { name: 'gone', create: 'acked', delete: 'acked' });
    ledger.streams.set('maybe', { name: 'maybe', create: 'unknown', delete: 'none' });
    expect(checkCatalog(0, ['base id=1 topics=[]', 'kept id=2 topics=[]'], ledger, ['base'])).toEqual([]);
    expect(checkCatalog(0, ['base id=1 topics=[]', 'maybe id=2 topics=[]', 'kept id=3 topics=[]'], ledger, ['base'])).toEqual([]);
    expect(checkCatalog(1, ['gone id=4 topics=[]', 'other id=5 topics=[]'], ledger, ['base'])).toEqual([
      'node 1: acknowledged stream kept is missing',
      'node 1: stream gone whose delete was acknowledged exists',
      'node 1: stream other was never created',
    ]);
  });

  it('measures the longest time without an acknowledgement, up to the end of the window', () => {
    expect(longestGap([110, 120, 500, 510], 100, 600)).toEqual({ ms: 380, endsAt: 500 });
    expect(longestGap([110], 100, 1_000)).toEqual({ ms: 890, endsAt: 1_000 });
  });
});

describe('nemesis plan', () => {
  it('is a function of the seed, covers the time asked, and keeps faults inside the cluster', () => {
    const first = plan({ seed: 7, nodes: 5, durationMs: 600_000 });
    expect(plan({ seed: 7, nodes: 5, durationMs: 600_000 })).toEqual(first);
    expect(plan({ seed: 8, nodes: 5, durationMs: 600_000 })).not.toEqual(first);
    expect(new Set(first.map((e) => e.fault.kind))).toEqual(new Set(ALL_KINDS));
    for (const { fault } of first) {
      const nodes = 'node' in fault ? [fault.node] : 'order' in fault ? fault.order : 'a' in fault ? [fault.a, fault.b] : [];
      for (const node of nodes) expect(node).toBeGreaterThanOrEqual(0);
      for (const node of nodes) expect(node).toBeLessThan(5);
      if (fault.kind === 'cut') expect(fault.a).not.toBe(fault.b);
      if (fault.kind === 'rolling') expect([...fault.order].sort()).toEqual([0, 1, 2, 3, 4]);
    }
    expect(plan({ seed: 1, nodes: 3, durationMs: 60_000, kinds: ['pause'] }).every((e) => e.fault.kind === 'pause')).toBe(true);
  });
});
