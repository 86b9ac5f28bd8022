/**
 * The shared start of the orphan scenarios (restart-safety.test.ts, commit-point-orphan.test.ts):
 * a 3-replica partition cluster commits ops 1..6; replica 0, view 0's primary, then journals
 * orphans 7..9 that nobody else receives and crashes; replicas 1 and 2 start view 1 (replica 1).
 */
import { Command } from '@shoal/protocol';
import { fakeBatch } from '../../../packages/consensus/test/support/state-machines.js';
import { Cluster } from './cluster.js';

export function viewZeroOrphans(flushEvery: number): Cluster {
  const cluster = new Cluster({ replicas: 3, plane: 'partition', flushEvery });
  for (let i = 1; i <= 6; i++) {
    const { token } = cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 300);
  }
  cluster.runUntil(() => cluster.converged(6), 300);
  cluster.filters.push((m) => m.from === 0 && m.command === Command.Prepare);
  for (let i = 7; i <= 9; i++) {
    cluster.request(0, { client: 1n, request: BigInt(i), body: fakeBatch(`m${i}`) });
    cluster.run(2);
  }
  if (cluster.nodes[0]?.r.status.op !== 9) throw new Error('replica 0 did not journal its orphans 7..9');
  cluster.crash(0);
  cluster.filters.length = 0;
  cluster.runUntil(() => cluster.primary() === 1, 3000);
  return cluster;
}
