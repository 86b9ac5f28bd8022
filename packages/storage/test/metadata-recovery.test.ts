import { describe, expect, it } from 'vitest';
import {
  MetadataJournal,
  SimDisk,
  SnapshotFile,
  SuperblockStore,
  mkdirDurable,
  recoverMetadata,
  type MetadataRecoveryOptions,
  type VsrState,
} from '../src/index.js';
import { CLUSTER_ID, checksumOf, makePrepares, must } from './support/fixtures.js';

/** Test snapshot payload: "SNAP" + op as u32 (the state machine's real payload is MessagePack). */
function payloadFor(op: number): Uint8Array {
  const out = new Uint8Array(8);
  out.set([0x53, 0x4e, 0x41, 0x50]);
  new DataView(out.buffer).setUint32(4, op, true);
  return out;
}

const OPTIONS: MetadataRecoveryOptions = {
  expected: { clusterId: CLUSTER_ID, replicaId: 0, replicaCount: 3 },
  snapshotOpOf: (p) => (p.length === 8 && p[0] === 0x53 ? new DataView(p.buffer, p.byteOffset).getUint32(4, true) : null),
};

function state(overrides: Partial<VsrState> = {}): VsrState {
  return {
    clusterId: CLUSTER_ID,
    replicaId: 0,
    replicaCount: 3,
    view: 2,
    logView: 2,
    commitMax: 0n,
    checkpointOp: 0n,
    checkpointChecksum: 0n,
    offsetFrontier: 0n,
    logHead: 0n,
    ...overrides,
  };
}

/** Snapshot at op 10 recorded in the superblock, WAL holding ops 10..20 (commit = op − 2). */
function cluster(seed = 1): { disk: SimDisk; frames: Uint8Array[] } {
  const disk = new SimDisk({ seed });
  mkdirDurable(disk, '/m');
  const checksum = must(new SnapshotFile(disk, '/m').write(payloadFor(10)));
  must(new SuperblockStore(disk, '/m').write(state({ checkpointOp: 10n, checkpointChecksum: checksum, commitMax: 10n })));
  const journal = must(MetadataJournal.open(disk, '/m'));
  must(journal.recover(10));
  const frames = makePrepares(10, 20, 0n, 40, 2);
  for (const f of frames) must(journal.append(f));
  must(journal.close());
  return { disk, frames };
}

/** `cluster()` with the WAL cut above op 14 and ops 16..17 of another history appended (then `more`). */
function forgedAbove14(more?: (frames: Uint8Array[], journal: MetadataJournal) => void): { disk: SimDisk; forged: Uint8Array[] } {
  const { disk, frames } = cluster();
  const journal = must(MetadataJournal.open(disk, '/m'));
  must(journal.recover(10));
  must(journal.truncateFrom(15));
  const forged = makePrepares(16, 17, checksumOf(frames[3] as Uint8Array) ^ 1n, 40, 2, 77);
  for (const f of forged) must(journal.append(f));
  more?.(frames, journal);
  must(journal.close());
  return { disk, forged };
}

describe('recoverMetadata (§9.4)', () => {
  it('restores snapshot, superblock, replay up to the provable commit watermark, and the unapplied tail', () => {
    const { disk } = cluster();
    disk.crash();
    const r = must(recoverMetadata(disk, '/m', OPTIONS));
    expect(r.snapshot?.op).toBe(10);
    expect(r.superblock?.state.checkpointOp).toBe(10n);
    expect(r.commitWatermark).toBe(18);
    expect(r.replay.map((e) => e.op)).toEqual([11, 12, 13, 14, 15, 16, 17, 18]);
    expect(r.unapplied.map((e) => e.op)).toEqual([19, 20]);
    expect(r.headOp).toBe(20);
    expect(r.journal.watermark).toBe(10);
  });

  it('a solo cluster replays every journaled op', () => {
    const { disk } = cluster();
    must(new SuperblockStore(disk, '/m').write(state({ replicaCount: 1, checkpointOp: 0n })));
    const r = must(recoverMetadata(disk, '/m', { ...OPTIONS, expected: { ...OPTIONS.expected, replicaCount: 1 } }));
    expect(r.commitWatermark).toBe(20);
    expect(r.replay.map((e) => e.op).at(-1)).toBe(20);
  });

  // Deviation from upstream's truncate_from (§9.4): every returned entry verified, and the journal
  // held it before the restart as it does now; cut, the ops above became faulty (seed 1068468 of 3).
  it('stops replay at a gap, and keeps the entries above it', () => {
    const { disk, forged } = forgedAbove14();
    const r = must(recoverMetadata(disk, '/m', OPTIONS));
    expect(r.replay.map((e) => e.op)).toEqual([11, 12, 13, 14]);
    expect(r.unapplied).toEqual([]);
    expect(r.headOp).toBe(17);
    expect(r.faulty.map((f) => [f.kind, f.op])).toEqual([['missing', 15]]);
    expect(r.recordedFaulty).toEqual([]);
    for (const [i, op] of [16, 17].entries()) expect(must(r.journal.read(op))).toEqual(forged[i]);
  });

  it('stops replay at a chain break, and keeps the entries above it (a later repair wrote the op below)', () => {
    // Ops 16..17 of another history, then op 15 of this one: 16 does not chain to 15.
    const { disk, forged } = forgedAbove14((frames, journal) => must(journal.append(frames[5] as Uint8Array)));
    const r = must(recoverMetadata(disk, '/m', OPTIONS));
    // (The watermark is 15, op 17's commit field: storage's replay is upstream's; the core's is stricter.)
    expect(r.replay.map((e) => e.op)).toEqual([11, 12, 13, 14, 15]);
    expect(r.unapplied).toEqual([]);
    expect(r.headOp).toBe(17);
    expect(r.faulty).toEqual([]);
    expect(r.recordedFaulty).toEqual([]);
    for (const [i, op] of [16, 17].entries()) expect(must(r.journal.read(op))).toEqual(forged[i]);
  });

  it('refuses: identity mismatch, checkpoint ahead of the snapshot, checksum mismatch, corrupt snapshot', () => {
    const wrongReplica = recoverMetadata(cluster().disk, '/m', { ...OPTIONS, expected: { ...OPTIONS.expected, replicaId: 1 } });
    expect(!wrongReplica.ok && wrongReplica.error.kind).toBe('identity_mismatch');
    const id = recoverMetadata(cluster().disk, '/m', { ...OPTIONS, expected: { ...OPTIONS.expected, clusterId: 1n } });
    expect(!id.ok && id.error.kind).toBe('identity_mismatch');

    const ahead = cluster();
    must(new SuperblockStore(ahead.disk, '/m').write(state({ checkpointOp: 11n, checkpointChecksum: 1n })));
    const a = recoverMetadata(ahead.disk, '/m', OPTIONS);
    expect(!a.ok && a.error.kind).toBe('checkpoint_ahead_of_snapshot');

    const mismatch = cluster();
    must(new SuperblockStore(mismatch.disk, '/m').write(state({ checkpointOp: 10n, checkpointChecksum: 99n })));
    const m = recoverMetadata(mismatch.disk, '/m', OPTIONS);
    expect(!m.ok && m.error.kind).toBe('checkpoint_checksum_mismatch');

    const rot = cluster();
    rot.disk.corruptAtRest('/m/snapshot.bin', 2);
    const s = recoverMetadata(rot.disk, '/m', OPTIONS);
    expect(!s.ok && s.error.kind).toBe('snapshot_corrupt');

    // A damaged trailer magic reads as a legacy file whose checksum no longer matches the superblock.
    const magic = cluster();
    magic.disk.corruptAtRest('/m/snapshot.bin', 8);
    const g = recoverMetadata(magic.disk, '/m', OPTIONS);
    expect(g.ok).toBe(false);

    const bothBad = cluster();
    must(new SuperblockStore(bothBad.disk, '/m').write(state({ checkpointOp: 10n, checkpointChecksum: must(new SnapshotFile(bothBad.disk, '/m').read()).kind === 'sealed' ? 0n : 0n })));
    bothBad.disk.corruptAtRest('/m/superblock.a', 30);
    bothBad.disk.corruptAtRest('/m/superblock.b', 30);
    const b = recoverMetadata(bothBad.disk, '/m', OPTIONS);
    expect(!b.ok && b.error.kind).toBe('superblock_refused');
  });

  it('accepts a snapshot newer than the superblock checkpoint (crash between the two writes)', () => {
    const { disk } = cluster();
    must(new SnapshotFile(disk, '/m').write(payloadFor(15)));
    const r = must(recoverMetadata(disk, '/m', OPTIONS));
    expect(r.snapshot?.op).toBe(15);
    expect(r.replay.map((e) => e.op)[0]).toBe(16);
  });

  it('fresh directory: nothing to restore', () => {
    const disk = new SimDisk({ seed: 9 });
    const r = must(recoverMetadata(disk, '/m', OPTIONS));
    expect(r.snapshot).toBeNull();
    expect(r.superblock).toBeNull();
    expect(r.replay).toEqual([]);
    expect(r.headOp).toBe(0);
  });
});
