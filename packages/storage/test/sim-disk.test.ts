import { describe, expect, it } from 'vitest';
import { DiskError, RealDisk, SimDisk, SimulatedCrash, readWholeFile, writeFileAtomic, type Disk } from '../src/index.js';
import { tempDir } from './support/fixtures.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

function writeFile(disk: Disk, path: string, data: Uint8Array, sync: boolean): void {
  const fd = disk.open(path, 'create');
  disk.write(fd, data, 0, data.length, 0);
  if (sync) disk.fsync(fd);
  disk.close(fd);
}

describe('SimDisk: durability model', () => {
  it('unsynced writes are lost on crash, synced ones survive', () => {
    const disk = new SimDisk({ seed: 1 });
    disk.mkdirp('/d');
    disk.fsyncDir('/');
    writeFile(disk, '/d/a', bytes(1, 2, 3), true);
    disk.fsyncDir('/d');
    const fd = disk.open('/d/a', 'readwrite');
    disk.write(fd, bytes(9, 9), 0, 2, 3);
    expect(disk.size(fd)).toBe(5);
    disk.crash();
    expect(readWholeFile(disk, '/d/a')).toEqual(bytes(1, 2, 3));
  });

  it('a created file without fsyncDir of its directory disappears on crash', () => {
    const disk = new SimDisk({ seed: 2 });
    writeFile(disk, '/x', bytes(1), true);
    disk.crash();
    expect(disk.stat('/x')).toBeNull();
    writeFile(disk, '/x', bytes(1), true);
    disk.fsyncDir('/');
    disk.crash();
    expect(readWholeFile(disk, '/x')).toEqual(bytes(1));
  });

  it('rename is volatile until fsyncDir, then atomic', () => {
    const disk = new SimDisk({ seed: 3 });
    writeFile(disk, '/f', bytes(1), true);
    disk.fsyncDir('/');
    writeFile(disk, '/f.tmp', bytes(2), true);
    disk.rename('/f.tmp', '/f');
    expect(readWholeFile(disk, '/f')).toEqual(bytes(2));
    disk.crash();
    expect(readWholeFile(disk, '/f')).toEqual(bytes(1));
    writeFileAtomic(disk, '/f', [bytes(3)]);
    disk.crash();
    expect(readWholeFile(disk, '/f')).toEqual(bytes(3));
    expect(disk.stat('/f.tmp')).toBeNull();
  });

  it('directories need their parent fsynced; orphans vanish with them', () => {
    const disk = new SimDisk({ seed: 4 });
    disk.mkdirp('/a/b');
    writeFile(disk, '/a/b/f', bytes(7), true);
    disk.fsyncDir('/a/b');
    disk.crash();
    expect(disk.stat('/a')).toBeNull();
    expect(disk.stat('/a/b/f')).toBeNull();
  });

  it('crashAfter halts at the chosen mutating op; failNext injects environment errors', () => {
    const disk = new SimDisk({ seed: 5 });
    disk.crashAfter(2);
    const fd = disk.open('/z', 'create');
    expect(() => disk.write(fd, bytes(1), 0, 1, 0)).toThrow(SimulatedCrash);
    expect(() => disk.stat('/z')).toThrow(SimulatedCrash);
    disk.crash();
    expect(disk.stat('/z')).toBeNull();
    disk.failNext('ENOSPC');
    expect(() => disk.open('/z', 'create')).toThrow(DiskError);
    expect(disk.open('/z', 'create')).toBeGreaterThan(0);
  });

  it('capacity runs out with ENOSPC', () => {
    const disk = new SimDisk({ seed: 6, capacityBytes: 10 });
    const fd = disk.open('/f', 'create');
    disk.write(fd, new Uint8Array(8), 0, 8, 0);
    let error: unknown = null;
    try {
      disk.write(fd, new Uint8Array(8), 0, 8, 8);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DiskError);
    expect((error as DiskError).code).toBe('ENOSPC');
  });
});

describe('SimDisk: injected faults', () => {
  function tornRun(seed: number): { image: Uint8Array | null; log: string[] } {
    const disk = new SimDisk({ seed, faults: { tornWriteProbability: 1 } });
    writeFile(disk, '/f', new Uint8Array(0), true);
    disk.fsyncDir('/');
    const fd = disk.open('/f', 'readwrite');
    disk.write(fd, new Uint8Array(100).fill(0xab), 0, 100, 0);
    disk.crash();
    return { image: readWholeFile(disk, '/f'), log: disk.faultLog.map((f) => `${f.kind}:${f.length}`) };
  }

  it('a torn write persists a seeded prefix, deterministically', () => {
    const a = tornRun(11);
    const b = tornRun(11);
    expect(a).toEqual(b);
    expect(a.image?.length).toBeGreaterThan(0);
    expect(a.image?.length).toBeLessThan(100);
    expect(a.log[0]).toMatch(/^torn_write:/);
  });

  it('unsynced writes can persist out of order', () => {
    const disk = new SimDisk({ seed: 12, faults: { unsyncedPersistProbability: 0.5 } });
    writeFile(disk, '/f', new Uint8Array(0), true);
    disk.fsyncDir('/');
    const fd = disk.open('/f', 'readwrite');
    for (let i = 0; i < 16; i++) disk.write(fd, bytes(i + 1), 0, 1, i);
    disk.crash();
    const image = readWholeFile(disk, '/f') as Uint8Array;
    const persisted = [...image].filter((b) => b !== 0).length;
    expect(persisted).toBeGreaterThan(0);
    expect(persisted).toBeLessThan(16);
    expect(disk.faultLog.every((f) => f.kind === 'unsynced_persisted')).toBe(true);
  });

  it('bit flips on read leave the stored bytes intact; misdirected writes land elsewhere', () => {
    const disk = new SimDisk({ seed: 13, faults: { readBitFlipProbability: 1 } });
    writeFile(disk, '/f', new Uint8Array(64), true);
    const fd = disk.open('/f', 'read');
    const out = new Uint8Array(64);
    disk.read(fd, out, 0, 64, 0);
    expect(out.some((b) => b !== 0)).toBe(true);
    disk.setFaultsAllowed(false);
    disk.read(fd, out, 0, 64, 0);
    expect(out.every((b) => b === 0)).toBe(true);

    const mis = new SimDisk({ seed: 14, faults: { misdirectedWriteProbability: 1 } });
    const wfd = mis.open('/g', 'create');
    mis.write(wfd, new Uint8Array(16).fill(5), 0, 16, 4096);
    const image = readWholeFile(mis, '/g') as Uint8Array;
    const intended = image.subarray(4096, 4112);
    expect(intended.length === 16 && intended.every((b) => b === 5)).toBe(false);
    expect(mis.faultLog[0]?.position).not.toBe(4096);
    expect(mis.faultLog[0]?.kind).toBe('misdirected_write');
  });

  it('flipOnRead flips one byte of the chosen read covering a position, once', () => {
    const disk = new SimDisk({ seed: 15 });
    writeFile(disk, '/f', new Uint8Array(64), true);
    const fd = disk.open('/f', 'read');
    const out = new Uint8Array(64);
    disk.flipOnRead('/f', 40, 0x04, 1);
    disk.read(fd, out, 0, 16, 0); // does not cover byte 40: not counted
    disk.read(fd, out, 0, 64, 0); // the skipped read
    expect(out.every((b) => b === 0)).toBe(true);
    disk.read(fd, out, 0, 32, 32);
    expect(out[8]).toBe(0x04);
    expect(out.filter((b) => b !== 0).length).toBe(1);
    disk.read(fd, out, 0, 64, 0);
    expect(out.every((b) => b === 0)).toBe(true);
    expect(disk.faultLog.map((f) => [f.kind, f.position])).toEqual([['read_bit_flip', 40]]);
    expect((readWholeFile(disk, '/f') as Uint8Array).every((b) => b === 0)).toBe(true);
  });

  it('the fault budget stops injection once spent', () => {
    const disk = new SimDisk({ seed: 15, faults: { readBitFlipProbability: 1 } });
    disk.allowFaults(2);
    writeFile(disk, '/f', new Uint8Array(8), true);
    const fd = disk.open('/f', 'read');
    const out = new Uint8Array(8);
    for (let i = 0; i < 5; i++) disk.read(fd, out, 0, 8, 0);
    expect(disk.faultLog.length).toBe(2);
    expect(disk.faultBudget).toBe(0);
    expect(disk.faultsAllowed).toBe(false);
  });
});

describe('RealDisk', () => {
  it('implements the port on real files', () => {
    const dir = tempDir('real');
    try {
      const disk = new RealDisk();
      const sub = `${dir.path}/a/b`;
      expect(disk.mkdirp(sub)).toEqual([`${dir.path}/a`, sub]);
      const fd = disk.open(`${sub}/f`, 'create');
      disk.writev(fd, [bytes(1, 2), bytes(3), new Uint8Array(0), bytes(4, 5)], 10);
      expect(disk.size(fd)).toBe(15);
      const out = new Uint8Array(5);
      expect(disk.read(fd, out, 0, 5, 10)).toBe(5);
      expect(out).toEqual(bytes(1, 2, 3, 4, 5));
      disk.fdatasync(fd);
      disk.truncate(fd, 12);
      disk.close(fd);
      disk.fsyncDir(sub);
      expect(disk.stat(`${sub}/f`)).toEqual({ kind: 'file', size: 12 });
      expect(disk.readdir(sub)).toEqual(['f']);
      disk.rename(`${sub}/f`, `${sub}/g`);
      expect(() => disk.open(`${sub}/f`, 'read')).toThrow(DiskError);
      try {
        disk.open(`${sub}/f`, 'read');
      } catch (e) {
        expect((e as DiskError).code).toBe('ENOENT');
      }
      expect(() => disk.open(`${sub}/g`, 'createExclusive')).toThrow(/EEXIST/);
      disk.removeTree(`${dir.path}/a`);
      expect(disk.stat(`${dir.path}/a`)).toBeNull();
    } finally {
      dir.remove();
    }
  });
});
