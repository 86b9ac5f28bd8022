import { describe, expect, it } from 'vitest';
import {
  ConsumerOffsetStore,
  DataDirLayout,
  RealDisk,
  SimDisk,
  decodeIdentity,
  decodeOffsetFile,
  encodeIdentity,
  encodeOffsetFile,
  type Fd,
  identityFor,
  UNSYNCED_CREATION,
  mkdirDurable,
  openDataDir,
  wipeDataDir,
  writeFileAtomic,
} from '../src/index.js';
import { CLUSTER_NAME, must, tempDir } from './support/fixtures.js';

/** Writes `bytes` as the whole of a new file and makes file and directory entry durable. */
function writeDurably(disk: SimDisk, path: string, bytes: Uint8Array): void {
  const fd = disk.open(path, 'create');
  disk.write(fd, bytes, 0, bytes.length, 0);
  disk.fsync(fd);
  disk.close(fd);
  disk.fsyncDir(path.slice(0, path.lastIndexOf('/')));
}

describe('data directory identity', () => {
  it('stamps the identity at first boot and accepts it afterwards', () => {
    const disk = new SimDisk({ seed: 1 });
    const id = identityFor(CLUSTER_NAME, 2);
    const first = must(openDataDir(disk, '/data', id));
    expect(first.created).toBe(true);
    disk.crash();
    const again = must(openDataDir(disk, '/data', id));
    expect(again.created).toBe(false);
    expect(disk.stat('/data/metadata')?.kind).toBe('directory');
    expect(again.layout.partitionDir(1, 2, 3)).toBe('/data/streams/1/topics/2/partitions/3');
    expect(decodeIdentity(encodeIdentity(id))).toEqual({ ok: true, value: id });
  });

  it('refuses a renamed cluster, naming both names and ids; and another replica id', () => {
    const disk = new SimDisk({ seed: 2 });
    must(openDataDir(disk, '/data', identityFor(CLUSTER_NAME, 0)));
    const renamed = openDataDir(disk, '/data', identityFor('another-cluster', 0));
    expect(renamed.ok).toBe(false);
    if (!renamed.ok && renamed.error.kind === 'cluster_mismatch') {
      expect(renamed.error.found.clusterName).toBe(CLUSTER_NAME);
      expect(renamed.error.configured.clusterName).toBe('another-cluster');
      expect(renamed.error.message).toContain(CLUSTER_NAME);
      expect(renamed.error.message).toContain('another-cluster');
      expect(renamed.error.message).toContain(renamed.error.found.clusterId.toString(16));
      expect(renamed.error.message).toContain(renamed.error.configured.clusterId.toString(16));
    } else {
      throw new Error('expected cluster_mismatch');
    }
    const replica = openDataDir(disk, '/data', identityFor(CLUSTER_NAME, 1));
    expect(!replica.ok && replica.error.kind).toBe('replica_mismatch');
  });

  it('refuses a non-empty foreign directory and a corrupt identity', () => {
    const disk = new SimDisk({ seed: 3 });
    mkdirDurable(disk, '/home/user');
    writeFileAtomic(disk, '/home/user/notes.txt', [new Uint8Array([1])]);
    const foreign = openDataDir(disk, '/home/user', identityFor(CLUSTER_NAME, 0));
    expect(!foreign.ok && foreign.error.kind).toBe('not_a_data_dir');
    must(openDataDir(disk, '/data', identityFor(CLUSTER_NAME, 0)));
    disk.corruptAtRest('/data/shoal.identity', 10);
    const corrupt = openDataDir(disk, '/data', identityFor(CLUSTER_NAME, 0));
    expect(!corrupt.ok && corrupt.error.kind).toBe('identity_corrupt');
  });
});

describe('--fresh', () => {
  it('wipes only a Shoal data directory, identity last, and keeps foreign entries', () => {
    const dir = tempDir('fresh');
    try {
      const disk = new RealDisk();
      const root = `${dir.path}/data`;
      must(openDataDir(disk, root, identityFor(CLUSTER_NAME, 0)));
      mkdirDurable(disk, new DataDirLayout(root).partitionDir(0, 0, 0));
      writeFileAtomic(disk, `${root}/metadata/journal.wal`, [new Uint8Array(10)]);
      writeFileAtomic(disk, `${root}/README.user`, [new Uint8Array(1)]);
      const wiped = must(wipeDataDir(disk, root));
      expect([...wiped.removed].sort()).toEqual(['metadata', 'shoal.identity', 'streams']);
      expect(wiped.kept).toEqual(['README.user']);
      expect(disk.readdir(root)).toEqual(['README.user']);
      const again = must(openDataDir(disk, `${dir.path}/fresh-again`, identityFor('new-name', 0)));
      expect(again.created).toBe(true);
    } finally {
      dir.remove();
    }
  });

  it('refuses to wipe a directory that does not look like a Shoal data dir, or /', () => {
    const disk = new SimDisk({ seed: 4 });
    mkdirDurable(disk, '/home');
    writeFileAtomic(disk, '/home/precious', [new Uint8Array(1)]);
    const refused = wipeDataDir(disk, '/home');
    expect(!refused.ok && refused.error.kind).toBe('not_a_data_dir');
    expect(disk.stat('/home/precious')).not.toBeNull();
    expect(wipeDataDir(disk, '/').ok).toBe(false);
    expect(must(wipeDataDir(disk, '/missing')).removed).toEqual([]);
  });
});

describe('consumer offset files', () => {
  it('encode 16 bytes with XXH3, accept the 8-byte legacy form, classify damage', () => {
    const bytes = encodeOffsetFile(1234n);
    expect(bytes.length).toBe(16);
    expect(decodeOffsetFile(bytes)).toEqual({ ok: true, value: 1234n, legacy: false });
    expect(decodeOffsetFile(bytes.subarray(0, 8))).toEqual({ ok: true, value: 1234n, legacy: true });
    for (const length of [0, 1, 7, 9, 15, 17]) expect(decodeOffsetFile(new Uint8Array(length)).ok).toBe(false);
    const flipped = bytes.slice();
    flipped[3] = (flipped[3] as number) ^ 1;
    expect(decodeOffsetFile(flipped).ok).toBe(false);
  });

  it('store / load / delete for consumers and groups, durable with enforce_fsync; faulty files reported', () => {
    const disk = new SimDisk({ seed: 5 });
    const store = new ConsumerOffsetStore(disk, '/p', true);
    must(store.load());
    must(store.store('consumer', 1, 10n));
    must(store.store('consumer', 1, 11n));
    must(store.store('group', 1, 20n));
    must(store.store('group', 2, 30n));
    must(store.delete('group', 2));
    writeDurably(disk, '/p/offsets/consumers/5', new Uint8Array([9, 0, 0, 0, 0, 0, 0, 0]));
    disk.crash();
    const again = new ConsumerOffsetStore(disk, '/p', true);
    const loaded = must(again.load());
    expect([...loaded.consumers]).toEqual([[1, 11n], [5, 9n]]);
    expect([...loaded.groups]).toEqual([[1, 20n]]);
    expect(loaded.faulty).toEqual([]);
    must(again.store('consumer', 5, 12n));
    expect(disk.stat('/p/offsets/consumers/5')?.size).toBe(16);
    disk.corruptAtRest('/p/offsets/groups/1', 0);
    const third = must(new ConsumerOffsetStore(disk, '/p', true).load());
    expect(third.faulty).toEqual([{ kind: 'group', name: '1', reason: 'offset_file_checksum_mismatch' }]);
    expect(third.groups.size).toBe(0);
  });

  it('a read that does not verify is read again before the file counts as damaged', () => {
    const disk = new SimDisk({ seed: 7 });
    const writer = new ConsumerOffsetStore(disk, '/p', true);
    must(writer.load());
    must(writer.store('consumer', 4, 40n));
    // The first read of the file comes back with a bit flipped (a transient read error).
    let flips = 1;
    const flaky = new Proxy(disk, {
      get(target, key) {
        if (key !== 'read') {
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number => {
          const n = target.read(fd, buffer, offset, length, position);
          if (flips > 0 && n > 0) {
            flips--;
            buffer[offset] = (buffer[offset] as number) ^ 0x04;
          }
          return n;
        };
      },
    });
    const loaded = must(new ConsumerOffsetStore(flaky, '/p', true).load());
    expect(flips).toBe(0);
    expect(loaded.faulty).toEqual([]);
    expect([...loaded.consumers]).toEqual([[4, 40n]]);
  });

  // A power loss after a creation whose data never reached the disk (ext4's delayed allocation
  // commits the directory entry first) leaves an empty file: that is no damage, and it refused the
  // partition, so a node exited 13 after a power loss. A short file can only be such a creation.
  it('a file shorter than 8 bytes is an unsynced creation: removed and absent, not damage', () => {
    const disk = new SimDisk({ seed: 8 });
    const writer = new ConsumerOffsetStore(disk, '/p', false);
    must(writer.load());
    must(writer.store('consumer', 1, 10n));
    must(writer.sync());
    for (const [id, length] of [[2, 0], [3, 5], [4, 12]] as const) {
      writeDurably(disk, `/p/offsets/consumers/${id}`, encodeOffsetFile(BigInt(id)).subarray(0, length));
    }
    disk.crash();
    const store = new ConsumerOffsetStore(disk, '/p', false);
    const loaded = must(store.load());
    expect([...loaded.consumers]).toEqual([[1, 10n]]);
    expect(loaded.faulty).toEqual([
      { kind: 'consumer', name: '2', reason: UNSYNCED_CREATION },
      { kind: 'consumer', name: '3', reason: UNSYNCED_CREATION },
      { kind: 'consumer', name: '4', reason: 'offset_file_length_12' }, // a torn legacy upgrade looks the same: damage
    ]);
    expect(disk.stat('/p/offsets/consumers/2')).toBeNull();
    expect(disk.stat('/p/offsets/consumers/3')).toBeNull();
    must(store.sync()); // the removals are durable with the directory
    disk.crash();
    expect(disk.stat('/p/offsets/consumers/2')).toBeNull();
    expect(disk.stat('/p/offsets/consumers/4')?.size).toBe(12);
  });

  // Simulator seed 32 (3 replicas): an offset file created, then a process crash before any sync
  // (the file and its directory entry only in the page cache); after the boot the op was applied
  // again, found the file present, synced the file but not the directory; the frontier then
  // vouched for the op, and a power loss dropped the file. The same for a delete's unlink.
  it('what a process crash left unsynced is made durable by the first sync after the boot', () => {
    const disk = new SimDisk({ seed: 6 });
    const before = new ConsumerOffsetStore(disk, '/p', false);
    must(before.load());
    must(before.store('consumer', 3, 7n));
    must(before.sync());
    must(before.store('consumer', 13, 89n)); // a new file, not synced
    must(before.delete('consumer', 3)); // an unlink, not synced
    // Process crash: the store is gone, the page cache stays. The boot re-applies both ops.
    const after = new ConsumerOffsetStore(disk, '/p', false);
    const loaded = must(after.load());
    expect([...loaded.consumers]).toEqual([[13, 89n]]);
    must(after.store('consumer', 13, 89n));
    must(after.delete('consumer', 3));
    must(after.sync()); // the driver syncs before it records a frontier past both ops
    disk.crash(); // power loss
    expect([...must(new ConsumerOffsetStore(disk, '/p', false).load()).consumers]).toEqual([[13, 89n]]);
  });
});
