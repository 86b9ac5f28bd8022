import { describe, expect, it } from 'vitest';
import { encodeClientTable } from '@shoal/protocol';
import {
  ClientTableFile,
  SNAPSHOT_TRAILER_SIZE,
  SimDisk,
  SimulatedCrash,
  SnapshotFile,
  SuperblockStore,
  VSR_STATE_LEGACY_SIZE, VSR_STATE_NO_LOG_HEAD_SIZE,
  checkSuperblockIdentity,
  classifySnapshot,
  classifySuperblockRecord,
  decodeVsrState,
  encodeSuperblockRecord,
  encodeVsrState,
  mkdirDurable,
  type VsrState,
} from '../src/index.js';
import { CLUSTER_ID, must } from './support/fixtures.js';

const STATE: VsrState = {
  clusterId: CLUSTER_ID,
  replicaId: 1,
  replicaCount: 3,
  view: 7,
  logView: 6,
  commitMax: 1234n,
  checkpointOp: 1000n,
  checkpointChecksum: 0xdeadbeefn,
  offsetFrontier: 55n,
  logHead: 1240n,
};

function freshDisk(seed = 1): SimDisk {
  const disk = new SimDisk({ seed });
  mkdirDurable(disk, '/m');
  return disk;
}

describe('VsrState codec', () => {
  it('round-trips 74 bytes at the documented offsets', () => {
    const bytes = encodeVsrState(STATE);
    expect(bytes.length).toBe(74);
    expect(bytes[16]).toBe(1);
    expect(bytes[17]).toBe(3);
    expect(new DataView(bytes.buffer).getUint32(18, true)).toBe(7);
    expect(new DataView(bytes.buffer).getBigUint64(58, true)).toBe(55n);
    expect(new DataView(bytes.buffer).getBigUint64(66, true)).toBe(1240n);
    expect(decodeVsrState(bytes)).toEqual({ ok: true, value: STATE });
  });

  it('accepts the 66-byte record with log_head 0 and the 58-byte one with offset_frontier 0 too, refuses log_view > view', () => {
    const noLogHead = encodeVsrState(STATE).slice(0, VSR_STATE_NO_LOG_HEAD_SIZE);
    expect(decodeVsrState(noLogHead)).toEqual({ ok: true, value: { ...STATE, logHead: 0n } });
    const legacy = encodeVsrState(STATE).slice(0, VSR_STATE_LEGACY_SIZE);
    expect(decodeVsrState(legacy)).toEqual({ ok: true, value: { ...STATE, offsetFrontier: 0n, logHead: 0n } });
    const bad = encodeVsrState(STATE);
    new DataView(bad.buffer).setUint32(22, 9, true);
    expect(decodeVsrState(bad).ok).toBe(false);
    expect(decodeVsrState(bad.slice(0, 60)).ok).toBe(false);
  });
});

describe('superblock record', () => {
  it('has the §9.2 layout and classifies every damage', () => {
    const record = encodeSuperblockRecord(5n, STATE);
    expect(record.length).toBe(28 + 74 + 8);
    expect([...record.subarray(0, 4)]).toEqual([0x4b, 0x4c, 0x42, 0x53]);
    expect(classifySuperblockRecord(record)).toEqual({ kind: 'valid', sequence: 5n, state: STATE });
    expect(classifySuperblockRecord(null).kind).toBe('absent');
    expect(classifySuperblockRecord(new Uint8Array(0)).kind).toBe('empty');
    for (let cut = 1; cut < record.length; cut += 7) {
      expect(classifySuperblockRecord(record.subarray(0, cut)).kind).toBe('corrupt');
    }
    for (let at = 0; at < record.length; at++) {
      const flipped = record.slice();
      flipped[at] = (flipped[at] as number) ^ 0x10;
      expect(classifySuperblockRecord(flipped).kind, `flip at ${at}`).toBe('corrupt');
    }
    expect(classifySuperblockRecord(new Uint8Array(28 + 4096 + 9)).kind).toBe('corrupt');
  });
});

describe('SuperblockStore', () => {
  it('alternates slots with increasing sequence numbers; the newest wins on read', () => {
    const disk = freshDisk();
    const store = new SuperblockStore(disk, '/m');
    expect(must(store.read()).kind).toBe('fresh');
    const slots: string[] = [];
    for (let view = 1; view <= 5; view++) {
      const w = must(store.write({ ...STATE, view, logView: view }));
      slots.push(`${w.slot}${w.sequence}`);
    }
    expect(slots).toEqual(['a1', 'b2', 'a3', 'b4', 'a5']);
    disk.crash();
    const read = must(new SuperblockStore(disk, '/m').read());
    expect(read.kind).toBe('ok');
    if (read.kind === 'ok') {
      expect(read.state.view).toBe(5);
      expect(read.sequence).toBe(5n);
      expect(read.slot).toBe('a');
    }
  });

  it('a crash at any point of a write keeps the last good state (old or new, never lost)', () => {
    const probe = freshDisk();
    const store = new SuperblockStore(probe, '/m');
    must(store.write({ ...STATE, view: 1, logView: 1 }));
    must(store.write({ ...STATE, view: 2, logView: 2 }));
    const before = probe.mutatingOps;
    must(store.write({ ...STATE, view: 3, logView: 3 }));
    const opsPerWrite = probe.mutatingOps - before;
    expect(opsPerWrite).toBeGreaterThanOrEqual(5);
    for (const tear of [0, 1]) {
      for (let k = 1; k <= opsPerWrite + 1; k++) {
        const disk = new SimDisk({ seed: 100 + k, faults: { tornWriteProbability: tear, unsyncedPersistProbability: tear * 0.5 } });
        mkdirDurable(disk, '/m');
        const s = new SuperblockStore(disk, '/m');
        must(s.write({ ...STATE, view: 1, logView: 1 }));
        must(s.write({ ...STATE, view: 2, logView: 2 }));
        disk.crashAfter(k);
        try {
          s.write({ ...STATE, view: 3, logView: 3 });
        } catch (error) {
          expect(error).toBeInstanceOf(SimulatedCrash);
        }
        disk.crash();
        const read = must(new SuperblockStore(disk, '/m').read());
        expect(read.kind, `crash point ${k}`).toBe('ok');
        if (read.kind === 'ok') expect([2, 3]).toContain(read.state.view);
      }
    }
  });

  it('refuses when a slot holds bytes that do not verify (one or both), and refuses writes after', () => {
    const disk = freshDisk();
    const store = new SuperblockStore(disk, '/m');
    must(store.write({ ...STATE, view: 1, logView: 1 }));
    must(store.write({ ...STATE, view: 2, logView: 2 }));
    disk.corruptAtRest('/m/superblock.b', 40);
    const one = must(new SuperblockStore(disk, '/m').read());
    expect(one.kind).toBe('refused');
    disk.corruptAtRest('/m/superblock.a', 40);
    const reader = new SuperblockStore(disk, '/m');
    const both = must(reader.read());
    expect(both.kind).toBe('refused');
    if (both.kind === 'refused') {
      expect(both.slots.a.kind).toBe('corrupt');
      expect(both.slots.b.kind).toBe('corrupt');
    }
    expect(() => reader.write(STATE)).toThrow(/refused/);
  });

  it('one valid slot and one absent or empty reads the valid one; a transient read flip is re-read', () => {
    const disk = freshDisk();
    must(new SuperblockStore(disk, '/m').write(STATE));
    const fd = disk.open('/m/superblock.b', 'create');
    disk.close(fd);
    disk.fsyncDir('/m');
    const read = must(new SuperblockStore(disk, '/m').read());
    expect(read.kind).toBe('ok');

    disk.setFaults({ readBitFlipProbability: 0.5 });
    let ok = 0;
    for (let i = 0; i < 20; i++) if (must(new SuperblockStore(disk, '/m').read()).kind === 'ok') ok++;
    expect(ok).toBeGreaterThan(10);
  });

  it('checks identity against the configuration', () => {
    expect(checkSuperblockIdentity(STATE, { clusterId: CLUSTER_ID, replicaId: 1, replicaCount: 3 })).toBeNull();
    expect(checkSuperblockIdentity(STATE, { clusterId: 5n, replicaId: 1, replicaCount: 3 })).toMatch(/cluster id/);
    expect(checkSuperblockIdentity(STATE, { clusterId: CLUSTER_ID, replicaId: 2, replicaCount: 3 })).toMatch(/replica id/);
    expect(checkSuperblockIdentity(STATE, { clusterId: CLUSTER_ID, replicaId: 1, replicaCount: 5 })).toMatch(/replica count/);
  });
});

describe('snapshot.bin', () => {
  it('writes payload + 20-byte trailer and verifies it on read', () => {
    const disk = freshDisk();
    const file = new SnapshotFile(disk, '/m');
    expect(must(file.read()).kind).toBe('missing');
    const payload = new TextEncoder().encode('msgpack-payload-v3');
    const checksum = must(file.write(payload));
    disk.crash();
    const read = must(new SnapshotFile(disk, '/m').read());
    expect(read).toEqual({ kind: 'sealed', payload, checksum });
    const raw = disk.durableImage('/m/snapshot.bin') as Uint8Array;
    expect(raw.length).toBe(payload.length + SNAPSHOT_TRAILER_SIZE);
    expect([...raw.subarray(payload.length, payload.length + 4)]).toEqual([0x50, 0x4e, 0x53, 0x49]);
    expect(raw.subarray(raw.length - 8).every((b) => b === 0)).toBe(true);
  });

  it('classifies legacy, corrupt trailer and truncation', () => {
    const payload = new TextEncoder().encode('abcdefghijklmnopqrstuvwxyz');
    expect(classifySnapshot(payload).kind).toBe('legacy');
    expect(classifySnapshot(new Uint8Array(0)).kind).toBe('corrupt');
    const disk = freshDisk();
    const file = new SnapshotFile(disk, '/m');
    must(file.write(payload));
    const sealed = disk.durableImage('/m/snapshot.bin') as Uint8Array;
    for (let at = 0; at < sealed.length; at++) {
      const flipped = sealed.slice();
      flipped[at] = (flipped[at] as number) ^ 1;
      const verdict = classifySnapshot(flipped);
      // Payload or checksum damage is corrupt; damage to the magic reads as an unsealed legacy file
      // (the superblock's checkpoint checksum then catches it: metadata-recovery tests).
      expect(verdict.kind === 'corrupt' || (verdict.kind === 'legacy' && at >= payload.length && at < payload.length + 4)).toBe(true);
    }
    expect(classifySnapshot(sealed.subarray(0, sealed.length - 1)).kind).toBe('legacy');
  });

  it('a crash during the write leaves the old snapshot or the new one', () => {
    for (let k = 1; k <= 6; k++) {
      const disk = new SimDisk({ seed: k, faults: { tornWriteProbability: 1 } });
      mkdirDurable(disk, '/m');
      const file = new SnapshotFile(disk, '/m');
      must(file.write(new Uint8Array(50).fill(1)));
      disk.crashAfter(k);
      try {
        file.write(new Uint8Array(70).fill(2));
      } catch (error) {
        expect(error).toBeInstanceOf(SimulatedCrash);
      }
      disk.crash();
      const read = must(new SnapshotFile(disk, '/m').read());
      expect(read.kind).toBe('sealed');
      if (read.kind === 'sealed') expect([50, 70]).toContain(read.payload.length);
    }
  });
});

describe('client_table.ict2', () => {
  it('round-trips ICT2 and classifies damage', () => {
    const disk = freshDisk();
    const file = new ClientTableFile(disk, '/m');
    expect(must(file.read()).kind).toBe('missing');
    const ict2 = encodeClientTable([]);
    must(file.write(ict2));
    disk.crash();
    const read = must(new ClientTableFile(disk, '/m').read());
    expect(read.kind).toBe('ok');
    disk.corruptAtRest('/m/client_table.ict2', 2);
    expect(must(new ClientTableFile(disk, '/m').read()).kind).toBe('corrupt');
  });
});
