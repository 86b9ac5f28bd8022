/**
 * Balanced leadership (leadership.ts): a brand-new partition group starts in the view its
 * preferred replica leads, durably, on every replica alike.
 */
import { describe, expect, it } from 'vitest';
import { PartitionDriver, preferredPrimary } from '../src/index.js';
import { Harness } from './support/harness.js';

function harnessFor(group: bigint): Harness<PartitionDriver> {
  return new Harness<PartitionDriver>(3, (h, i) => {
    const opened = PartitionDriver.open({
      ...h.options(i), dir: '/data/p', group, identity: { streamId: Number(group >> 32n), topicId: 0, partitionId: Number(group & 0xfffffn) },
      createdRevision: 1n,
    });
    if (!opened.ok) throw new Error(`open ${i}: ${opened.reason} ${opened.detail}`);
    return opened.driver;
  });
}

describe('balanced leadership', () => {
  it('spreads a topic\'s partitions round-robin over the replicas', () => {
    const group = (stream: number, topic: number, partition: number): bigint => (BigInt(stream) << 32n) | (BigInt(topic) << 20n) | BigInt(partition);
    expect([0, 1, 2, 3, 4, 5].map((p) => preferredPrimary(group(0, 0, p), 3))).toEqual([0, 1, 2, 0, 1, 2]);
    expect([0, 1, 2].map((p) => preferredPrimary(group(0, 1, p), 3))).toEqual([1, 2, 0]);
    expect([0, 1, 2, 3, 4].map((p) => preferredPrimary(group(2, 0, p), 5))).toEqual([2, 3, 4, 0, 1]);
    expect(preferredPrimary(group(7, 3, 1), 1)).toBe(0);
  });

  it('a new group starts in the view its preferred replica leads, on every replica, and keeps it across a restart', () => {
    const group = (0n << 32n) | (0n << 20n) | 2n; // preferred: replica 2
    const h = harnessFor(group);
    for (let i = 0; i < 3; i++) {
      const s = h.driver(i).status;
      expect(s.view, `replica ${i}`).toBe(2);
      expect(s.status).toBe('normal');
      expect(s.primary, `replica ${i}`).toBe(i === 2);
    }
    // The view was written before the core could speak in it: a restart finds it.
    h.crash(0);
    const rebooted = h.boot(0);
    expect(rebooted.status.view).toBe(2);
  });
});
