import { describe, expect, it } from 'vitest';
import { StatusTable } from '../src/status/status-table.js';

function table(): StatusTable {
  return StatusTable.attach(StatusTable.create({ shardCount: 2, threadCount: 3, sessionSlotsPerShard: 4, partitionSlots: 8, startTimeMicros: 1_700_000_000_000_000n }));
}

describe('status table (shared node facts)', () => {
  it('holds sessions per shard, readable by every shard, and forgets closed ones', () => {
    const t = table();
    t.writeSession(0, 1, { clientId: 10, userId: null, transport: 1, vsrClient: null, address: '127.0.0.1:5000' });
    t.writeSession(1, 3, { clientId: 11, userId: 4, transport: 1, vsrClient: (1n << 100n) | 7n, address: '[::1]:6000' });
    expect(t.sessions()).toEqual([
      { clientId: 10, userId: null, transport: 1, vsrClient: null, address: '127.0.0.1:5000' },
      { clientId: 11, userId: 4, transport: 1, vsrClient: (1n << 100n) | 7n, address: '[::1]:6000' },
    ]);
    t.clearSession(0, 1);
    expect(t.sessions().map((s) => s.clientId)).toEqual([11]);
    expect(() => t.writeSession(2, 0, { clientId: 1, userId: null, transport: 1, vsrClient: null, address: '' })).toThrow(RangeError);
  });

  it('publishes the metadata op last sent to the shards, as a whole u64 seen by another attachment', () => {
    const handle = StatusTable.create({ shardCount: 2, threadCount: 3, sessionSlotsPerShard: 4, partitionSlots: 8, startTimeMicros: 1n });
    const t = StatusTable.attach(handle);
    const other = StatusTable.attach(handle);
    expect(other.metadataApplied()).toBe(0n);
    t.publishMetadataApplied(41n);
    expect(other.metadataApplied()).toBe(41n);
    t.publishMetadataApplied((3n << 32n) | 0xffff_fffen);
    expect(other.metadataApplied()).toBe((3n << 32n) | 0xffff_fffen);
    // A snapshot at a lower op (the copies restart from it) is published as is.
    t.publishMetadataApplied(7n);
    expect(other.metadataApplied()).toBe(7n);
    expect(other.metadata().commit).toBe(0n);
  });

  it('publishes the boot latch once: null until the metadata replica was current, then the op, never moved again', () => {
    const handle = StatusTable.create({ shardCount: 2, threadCount: 3, sessionSlotsPerShard: 4, partitionSlots: 8, startTimeMicros: 1n });
    const t = StatusTable.attach(handle);
    const other = StatusTable.attach(handle);
    expect(other.metadataCurrent()).toBeNull();
    t.publishMetadataCurrent((2n << 32n) | 5n);
    expect(other.metadataCurrent()).toBe((2n << 32n) | 5n);
    t.publishMetadataCurrent(99n);
    expect(other.metadataCurrent()).toBe((2n << 32n) | 5n);
  });

  it('counts connections against a node-wide cap and hands out node-unique client ids', () => {
    const t = table();
    expect(t.tryOpenConnection(2)).toBe(true);
    expect(t.tryOpenConnection(2)).toBe(true);
    expect(t.tryOpenConnection(2)).toBe(false);
    t.closeConnection();
    expect(t.connectionsOpen).toBe(1);
    const ids = new Set(Array.from({ length: 100 }, () => t.nextClientId()));
    expect(ids.size).toBe(100);
    expect(ids.has(0)).toBe(false);
  });

  it('publishes partition counters by group with open addressing, retires and re-creates them', () => {
    const t = table();
    const groups = [0n, 1n, (5n << 32n) | 7n, (1n << 32n) | (3n << 20n), 2n, 3n];
    groups.forEach((g, i) => expect(t.publishPartition(g, { currentOffset: BigInt(i), segmentsCount: i + 1, sizeBytes: BigInt(i * 10), messagesCount: BigInt(i * 2) })).toBe(true));
    groups.forEach((g, i) => expect(t.partition(g)).toEqual({ currentOffset: BigInt(i), segmentsCount: i + 1, sizeBytes: BigInt(i * 10), messagesCount: BigInt(i * 2) }));
    expect(t.partition(99n)).toBeNull();
    t.retirePartition(groups[2] as bigint);
    expect(t.partition(groups[2] as bigint)).toBeNull();
    expect(t.partition(groups[3] as bigint)).not.toBeNull(); // probes still pass the retired slot
    t.publishPartition(groups[2] as bigint, { currentOffset: 0n, segmentsCount: 1, sizeBytes: 0n, messagesCount: 0n });
    expect(t.partition(groups[2] as bigint)?.segmentsCount).toBe(1);
    t.publishPartition(100n, { currentOffset: 0n, segmentsCount: 1, sizeBytes: 0n, messagesCount: 0n });
    t.publishPartition(101n, { currentOffset: 0n, segmentsCount: 1, sizeBytes: 0n, messagesCount: 0n });
    expect(t.publishPartition(102n, { currentOffset: 0n, segmentsCount: 1, sizeBytes: 0n, messagesCount: 0n })).toBe(false); // 8 slots
  });

  it('carries the metadata view, traffic per thread and the bound ports', () => {
    const t = table();
    t.publishMetadata(3, 'view_change', 1, 1n << 40n);
    expect(t.metadata()).toEqual({ view: 3, status: 'view_change', primary: 1, commit: 1n << 40n });
    t.publishTraffic(2, { bytesIn: 1n << 33n, bytesOut: 5n, messagesIn: 0n, connections: 4 });
    expect(t.traffic(2)).toEqual({ bytesIn: 1n << 33n, bytesOut: 5n, messagesIn: 0n, connections: 4 });
    t.publishBoundPort('tcp', 41017);
    expect(t.boundPort('tcp')).toBe(41017);
    expect(t.startTimeMicros).toBe(1_700_000_000_000_000n);
  });
});
