/**
 * Removing a deleted partition's directory (partition-removal.ts): a disk error at any step is
 * returned, never thrown, never leaves a half-removed directory under the live name, and what is
 * left is finished by the next removal of the path or the boot sweep. Once a crash: seed 200319
 * of 5 replicas, an injected ENOSPC escaped from the `rm -r` of a deleted partition.
 */
import { mkdirSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DataDirLayout, type DiskErrorCode, RealDisk, SimDisk, mkdirDurable, removePartitionDir, sweepDeletedPartitions, tombstoneOf,
  writeFileAtomic,
} from '../src/index.js';
import { tempDir } from './support/fixtures.js';

const layout = new DataDirLayout('/data');
const DIR = layout.partitionDir(0, 0, 0);

function withPartition(seed: number): SimDisk {
  const disk = new SimDisk({ seed });
  mkdirDurable(disk, DIR);
  mkdirDurable(disk, `${DIR}/offsets`);
  writeFileAtomic(disk, `${DIR}/00000000000000000000.log`, [new Uint8Array([1, 2, 3])]);
  writeFileAtomic(disk, `${DIR}/offsets/7`, [new Uint8Array([4])]);
  return disk;
}

describe('partition directory removal', () => {
  it('removes the directory and its tombstone durably', () => {
    const disk = withPartition(1);
    expect(removePartitionDir(disk, DIR)).toEqual({ ok: true, value: undefined });
    expect(disk.stat(DIR)).toBeNull();
    expect(disk.stat(tombstoneOf(DIR))).toBeNull();
    disk.crash();
    expect(disk.stat(DIR)).toBeNull();
    expect(removePartitionDir(disk, DIR).ok).toBe(true);
  });

  // Each mutating step in turn fails (rename, fsync, rm -r, fsync): the error comes back as a
  // value, the live name is either whole or free, and a later removal or the boot sweep finishes.
  for (const code of ['ENOSPC', 'EIO'] as DiskErrorCode[]) {
    for (let step = 0; step < 4; step++) {
      it(`${code} at mutating step ${step}: returned, never half-removed, finished later`, () => {
        const disk = withPartition(10 + step);
        const failed = failAt(disk, step, code, () => removePartitionDir(disk, DIR));
        expect(failed.ok).toBe(false);
        if (!failed.ok) expect(failed.error.code).toBe(code);
        const live = disk.stat(DIR);
        if (live !== null) {
          // Still whole under its name: nothing of it was removed.
          expect(disk.stat(`${DIR}/00000000000000000000.log`)?.kind).toBe('file');
          expect(disk.stat(`${DIR}/offsets/7`)?.kind).toBe('file');
          expect(removePartitionDir(disk, DIR).ok).toBe(true);
        } else {
          const swept = sweepDeletedPartitions(disk, layout.root);
          expect(swept.ok).toBe(true);
        }
        expect(disk.stat(DIR)).toBeNull();
        expect(disk.stat(tombstoneOf(DIR))).toBeNull();
      });
    }
  }

  it('a re-created partition under the same ids is not touched by the sweep of the old tombstone', () => {
    const disk = withPartition(20);
    const failed = failAt(disk, 2, 'ENOSPC', () => removePartitionDir(disk, DIR));
    expect(failed.ok).toBe(false);
    expect(disk.stat(DIR)).toBeNull();
    expect(disk.stat(tombstoneOf(DIR))?.kind).toBe('directory');
    mkdirDurable(disk, DIR);
    writeFileAtomic(disk, `${DIR}/purge.gen`, [new Uint8Array([9])]);
    expect(sweepDeletedPartitions(disk, layout.root)).toEqual({ ok: true, value: [tombstoneOf(DIR)] });
    expect(disk.stat(`${DIR}/purge.gen`)?.kind).toBe('file');
    expect(disk.stat(tombstoneOf(DIR))).toBeNull();
  });

  it('a removal of the same path clears an older tombstone first', () => {
    const disk = withPartition(30);
    expect(failAt(disk, 2, 'EIO', () => removePartitionDir(disk, DIR)).ok).toBe(false);
    mkdirDurable(disk, DIR);
    expect(removePartitionDir(disk, DIR).ok).toBe(true);
    expect(disk.stat(DIR)).toBeNull();
    expect(disk.stat(tombstoneOf(DIR))).toBeNull();
  });

  it('on a real filesystem: removes the directory; the boot sweep removes a half-removed tombstone', () => {
    const tmp = tempDir('removal');
    try {
      const disk = new RealDisk();
      const root = tmp.path;
      const real = new DataDirLayout(root);
      const dir = real.partitionDir(3, 1, 2);
      mkdirSync(join(dir, 'offsets'), { recursive: true });
      writeFileSync(join(dir, '00000000000000000000.log'), 'x');
      expect(removePartitionDir(disk, dir).ok).toBe(true);
      expect(existsSync(dir)).toBe(false);
      expect(existsSync(tombstoneOf(dir))).toBe(false);
      // What a crash in the middle of `rm -r` leaves: part of the tombstone.
      mkdirSync(join(tombstoneOf(dir), 'offsets'), { recursive: true });
      mkdirSync(join(dir), { recursive: true });
      expect(sweepDeletedPartitions(disk, root)).toEqual({ ok: true, value: [tombstoneOf(dir)] });
      expect(readdirSync(join(root, 'streams', '3', 'topics', '1', 'partitions'))).toEqual(['2']);
    } finally {
      tmp.remove();
    }
  });
});

/** Runs `body` with the (step + 1)-th mutating disk call failing with `code`. */
function failAt<T>(disk: SimDisk, step: number, code: DiskErrorCode, body: () => T): T {
  disk.failNext(code, 1, step);
  return body();
}
