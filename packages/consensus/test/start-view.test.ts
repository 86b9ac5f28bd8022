/**
 * Starting a view (§5.6) on the primary-elect, white-box.
 */
import { describe, expect, it } from 'vitest';
import { coreOf } from '../src/testing.js';
import { tryFinishView } from '../src/start-view.js';
import { asView } from '../src/types.js';
import { Cluster } from '../../../test/scenario/support/cluster.js';
import { fakeBatch } from './support/state-machines.js';

describe('start view', () => {
  // Regression (found by the VOPR, seed 3849 with 5 replicas): the primary-elect had applied more
  // than the merged commit point (it abstained from the merge with an incomplete journal, so its
  // own, higher commit was not in it). The pipeline it rebuilds must start above what it applied,
  // or it re-pipelines an applied op (assertion "pipeline head already applied").
  it('rebuilds the pipeline above the ops the primary-elect already applied', () => {
    const cluster = new Cluster({ replicas: 3, plane: 'partition' });
    for (let i = 1; i <= 3; i++) {
      cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
      cluster.run(3);
    }
    cluster.runUntil(() => cluster.converged(3), 200);
    const node = cluster.nodes[1];
    if (node === undefined) throw new Error('no node 1');
    const c = coreOf(node.r);
    expect(c.commitMin).toBe(3);
    expect(c.journal.has(3)).toBe(true);
    // Replica 1 is the primary-elect of view 1 with a merged log whose commit point (2) is below
    // what it applied (3); its log head is op 3.
    c.view = asView(1);
    c.status = 'view_change';
    c.vc.parked = { opHead: 3, commitMax: 2, headers: [], committedElsewhere: [], sources: [] };
    tryFinishView(c);
    node.r.invariants();
    expect(c.status).toBe('normal');
    expect(c.pipeline.empty).toBe(true);
  });
});
