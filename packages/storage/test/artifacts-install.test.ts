import { describe, expect, it } from 'vitest';
import { ArtifactKind, decodeManifest, encodeClientTable, xxh3_64 } from '@shoal/protocol';
import {
  ClientTableFile,
  INSTALL_MARKER_NAME,
  MetadataInstaller,
  MetadataJournal,
  PartitionInstaller,
  PartitionStorage,
  SimDisk,
  SimulatedCrash,
  STAGING_DIR_NAME,
  SnapshotFile,
  TOPIC_STORAGE_DEFAULTS,
  buildMetadataOffer,
  buildPartitionOffer,
  mkdirDurable,
  readWholeFile,
  resolveMetadataStaging,
  xxh3OfFileRange,
  xxh3OfParts,
  type Fd,
  type StateOffer,
  type TopicStorageOptions,
} from '../src/index.js';
import { concat, equalBytes, makeBatch, makeBatches, makePrepares, must } from './support/fixtures.js';

const BATCH_4 = makeBatch(0, 4).length;
const OPTIONS: TopicStorageOptions = { ...TOPIC_STORAGE_DEFAULTS, segmentSize: 2 * BATCH_4 };

function source(seed: number): PartitionStorage {
  const disk = new SimDisk({ seed });
  const p = must(PartitionStorage.open(disk, '/src', OPTIONS));
  must(p.log.append(makeBatches(0, [4, 4, 4, 4, 4], 64)));
  must(p.offsets.store('consumer', 1, 7n));
  must(p.offsets.store('group', 2, 13n));
  return p;
}

/** Pulls every artifact in chunks of `chunk` bytes into the installer, first incomplete first. */
function transfer(offer: StateOffer, installer: { firstIncomplete: number; chunk: (a: number, o: number, b: Uint8Array) => unknown }, received: number[], chunk = 500): void {
  for (;;) {
    const artifact = installer.firstIncomplete;
    if (artifact < 0) return;
    const bytes = must(offer.chunk(artifact, received[artifact] ?? 0, chunk));
    expect(installer.chunk(artifact, received[artifact] ?? 0, bytes)).toEqual({ ok: true, value: 'accepted' });
    received[artifact] = (received[artifact] ?? 0) + bytes.length;
  }
}

function installInto(disk: SimDisk, offer: StateOffer): PartitionInstaller {
  const installer = new PartitionInstaller(disk, '/dst', offer.entries, offer.commitOp);
  must(installer.begin());
  transfer(offer, installer, offer.entries.map(() => 0));
  must(installer.verify());
  return installer;
}

describe('file hashing', () => {
  it('streams XXH3 over file ranges and parts exactly like xxh3_64', () => {
    const disk = new SimDisk({ seed: 1 });
    const data = new Uint8Array(9 * 1024 * 1024 + 17);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const fd = disk.open('/f', 'create');
    disk.write(fd, data, 0, data.length, 0);
    expect(xxh3OfFileRange(disk, fd, 0, data.length)).toBe(xxh3_64(data));
    expect(xxh3OfFileRange(disk, fd, 100, 1000)).toBe(xxh3_64(data.subarray(100, 1100)));
    expect(xxh3OfFileRange(disk, fd, 0, data.length + 1)).toBeNull();
    expect(xxh3OfParts([data.subarray(0, 5), data.subarray(5, 70000)])).toBe(xxh3_64(data.subarray(0, 70000)));
  });
});

describe('partition artifacts: produce → install', () => {
  it('produces one SEGMENT_LOG per segment and one CONSUMER_OFFSETS, chunked within bounds', () => {
    const p = source(2);
    const offer = must(buildPartitionOffer(p.log, p.offsets, 0n, 42n));
    const manifest = decodeManifest(offer.manifest());
    expect(manifest.ok).toBe(true);
    expect(offer.entries.map((e) => [e.kind, Number(e.frontier), Number(e.len)])).toEqual([
      [ArtifactKind.SegmentLog, 0, 2 * BATCH_4],
      [ArtifactKind.SegmentLog, 8, 2 * BATCH_4],
      [ArtifactKind.SegmentLog, 16, BATCH_4],
      [ArtifactKind.ConsumerOffsets, 42, expect.any(Number)],
    ]);
    const logBytes = readWholeFile(p.disk, '/src/00000000000000000008.log') as Uint8Array;
    expect(offer.entries[1]?.checksum).toBe(xxh3_64(logBytes));
    expect(must(offer.chunk(1, 10, 100)).length).toBe(100);
    expect(must(offer.chunk(1, 2 * BATCH_4 - 5, 100)).length).toBe(5);
    expect(offer.chunk(1, 2 * BATCH_4, 1).ok).toBe(false);
    expect(offer.chunk(9, 0, 1).ok).toBe(false);
  });

  it('round-trips byte-identical segments, a locally rebuilt index and the offsets', () => {
    const p = source(3);
    const offer = must(buildPartitionOffer(p.log, p.offsets, 5n, 42n));
    const disk = new SimDisk({ seed: 4 });
    const installer = installInto(disk, offer);
    must(installer.commit(OPTIONS));
    disk.crash();
    const q = must(PartitionStorage.open(disk, '/dst', OPTIONS));
    for (const name of ['00000000000000000000', '00000000000000000008', '00000000000000000016']) {
      expect(equalBytes(readWholeFile(disk, `/dst/${name}.log`) as Uint8Array, readWholeFile(p.disk, `/src/${name}.log`) as Uint8Array)).toBe(true);
      expect(equalBytes(readWholeFile(disk, `/dst/${name}.index`) as Uint8Array, readWholeFile(p.disk, `/src/${name}.index`) as Uint8Array)).toBe(true);
    }
    expect(q.log.nextOffset).toBe(20);
    expect(q.offsets.get('consumer', 1)).toBe(7n);
    expect(q.offsets.get('group', 2)).toBe(13n);
    expect(q.purgeRecord.generation).toBe(5n);
    expect(must(q.reader.first(100)).messageCount).toBe(20);
    must(q.log.append(makeBatches(20, [4])));
  });

  it('rejects a chunk that is not the next expected one; refuses a damaged artifact whole', () => {
    const p = source(5);
    const offer = must(buildPartitionOffer(p.log, p.offsets, 0n, 1n));
    const disk = new SimDisk({ seed: 6 });
    const installer = new PartitionInstaller(disk, '/dst', offer.entries, offer.commitOp);
    must(installer.begin());
    const first = must(offer.chunk(0, 0, 100));
    expect(must(installer.chunk(1, 0, first))).toBe('not_first_incomplete');
    expect(must(installer.chunk(0, 5, first))).toBe('offset_mismatch');
    expect(must(installer.chunk(0, 0, new Uint8Array(0)))).toBe('empty');
    expect(must(installer.chunk(0, 0, new Uint8Array(2 * BATCH_4 + 1)))).toBe('overrun');
    const received = offer.entries.map(() => 0);
    // Deliver a corrupted copy of artifact 1.
    for (;;) {
      const a = installer.firstIncomplete;
      if (a < 0) break;
      const bytes = must(offer.chunk(a, received[a] as number, 300)).slice();
      if (a === 1 && received[a] === 0) bytes[270] = (bytes[270] as number) ^ 1;
      must(installer.chunk(a, received[a] as number, bytes));
      received[a] = (received[a] as number) + bytes.length;
    }
    const verdict = installer.verify();
    expect(!verdict.ok && verdict.error.kind === 'invalid' && /artifact_1_checksum_mismatch/.test(verdict.error.reason)).toBe(true);
    must(installer.abort());
    expect(disk.stat('/dst/.staging')).toBeNull();
  });

  it('refuses offers with wrong kinds or no CONSUMER_OFFSETS, and segment logs that do not walk', () => {
    const disk = new SimDisk({ seed: 7 });
    const bad = new PartitionInstaller(disk, '/dst', [{ kind: 0, frontier: 0n, len: 1n, checksum: 0n }], 1n);
    expect(bad.begin().ok).toBe(false);
    const none = new PartitionInstaller(disk, '/dst', [], 1n);
    expect(none.begin().ok).toBe(false);
    // A segment whose batches do not continue from its frontier.
    const log = concat(makeBatches(10, [4]));
    const ico = readWholeFile(source(8).disk, '/src/00000000000000000000.index'); // any bytes: replaced below
    expect(ico).not.toBeNull();
    const p = source(9);
    const offer = must(buildPartitionOffer(p.log, p.offsets, 0n, 1n));
    const icoEntry = offer.entries[offer.entries.length - 1];
    if (icoEntry === undefined) throw new Error('no ico');
    const icoBytes = must(offer.chunk(offer.entries.length - 1, 0, 1 << 20));
    const installer = new PartitionInstaller(disk, '/dst', [{ kind: ArtifactKind.SegmentLog, frontier: 0n, len: BigInt(log.length), checksum: xxh3_64(log) }, icoEntry], 1n);
    must(installer.begin());
    must(installer.chunk(0, 0, log));
    must(installer.chunk(1, 0, icoBytes));
    const verdict = installer.verify();
    expect(!verdict.ok && /base_offset_10_expected_0/.test(verdict.error.kind === 'invalid' ? verdict.error.reason : '')).toBe(true);
  });

  it.each([false, true])('a crash at every step of the install leaves the old partition or the new one, never a mix (boot reads the marker damaged once: %s)', (flipAtBoot) => {
    const p = source(10);
    const offer = must(buildPartitionOffer(p.log, p.offsets, 3n, 9n));
    const oldBatches = makeBatches(0, [1, 1, 1], 32);
    const build = (seed: number): SimDisk => {
      const disk = new SimDisk({ seed, faults: { tornWriteProbability: 0.5, unsyncedPersistProbability: 0.5 } });
      const old = must(PartitionStorage.open(disk, '/dst', OPTIONS));
      must(old.log.append(oldBatches));
      old.offsets.enforceFsync = true;
      must(old.offsets.store('consumer', 9, 1n));
      must(old.log.sync());
      return disk;
    };
    const probe = build(0);
    const installer = installInto(probe, offer);
    const before = probe.mutatingOps;
    must(installer.commit(OPTIONS));
    const steps = probe.mutatingOps - before;
    expect(steps).toBeGreaterThan(10);
    let sawOld = 0;
    let sawNew = 0;
    for (let k = 1; k <= steps + 1; k++) {
      const disk = build(k);
      const inst = installInto(disk, offer);
      disk.crashAfter(k);
      try {
        inst.commit(OPTIONS);
      } catch (error) {
        expect(error).toBeInstanceOf(SimulatedCrash);
      }
      disk.crash();
      if (flipAtBoot) disk.flipOnRead(`/dst/${STAGING_DIR_NAME}/${INSTALL_MARKER_NAME}`, 12);
      const q = must(PartitionStorage.open(disk, '/dst', OPTIONS));
      const messages = must(q.reader.first(1000)).messageCount;
      if (q.log.nextOffset === 3) {
        sawOld++;
        expect(messages).toBe(3);
        expect(q.offsets.get('consumer', 9)).toBe(1n);
        expect(q.offsets.get('consumer', 1)).toBeUndefined();
      } else {
        sawNew++;
        expect(q.log.nextOffset).toBe(20);
        expect(messages).toBe(20);
        expect(q.offsets.get('consumer', 9)).toBeUndefined();
        expect(q.offsets.get('consumer', 1)).toBe(7n);
        expect(q.purgeRecord.generation).toBe(3n);
      }
      expect(disk.stat('/dst/.staging')).toBeNull();
    }
    expect(sawOld).toBeGreaterThan(0);
    expect(sawNew).toBeGreaterThan(0);
  });
});

describe('partition install: the marker decides only once it reads back', () => {
  const oldPartition = (seed: number): SimDisk => {
    const disk = new SimDisk({ seed });
    const old = must(PartitionStorage.open(disk, '/dst', OPTIONS));
    must(old.log.append(makeBatches(0, [1, 1, 1], 32)));
    must(old.log.sync());
    old.close();
    return disk;
  };
  const offer = (): StateOffer => {
    const p = source(21);
    return must(buildPartitionOffer(p.log, p.offsets, 3n, 9n));
  };

  it('writes the marker again when a read hands it back damaged, then installs', () => {
    const disk = oldPartition(22);
    const installer = installInto(disk, offer());
    disk.flipOnRead(`/dst/${STAGING_DIR_NAME}/${INSTALL_MARKER_NAME}`, 12);
    must(installer.commit(OPTIONS));
    expect(disk.faultLog.filter((f) => f.kind === 'read_bit_flip')).toHaveLength(1);
    disk.crash();
    expect(must(PartitionStorage.open(disk, '/dst', OPTIONS)).log.nextOffset).toBe(20);
  });

  it('an install whose marker never reads back is not applied: the old partition stays, the staging goes', () => {
    const marker = `/dst/${STAGING_DIR_NAME}/${INSTALL_MARKER_NAME}`;
    /** Every read of the marker hands back a flipped byte (re-armed after each read). */
    class RottenMarkerDisk extends SimDisk {
      rotten = false;
      override read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
        const n = super.read(fd, buffer, offset, length, position);
        if (this.rotten) this.flipOnRead(marker, 12);
        return n;
      }
    }
    const disk = new RottenMarkerDisk({ seed: 24 });
    const old = must(PartitionStorage.open(disk, '/dst', OPTIONS));
    must(old.log.append(makeBatches(0, [1, 1, 1], 32)));
    must(old.log.sync());
    old.close();
    const installer = installInto(disk, offer());
    disk.rotten = true;
    disk.flipOnRead(marker, 12);
    const committed = installer.commit(OPTIONS);
    expect(committed).toEqual({ ok: false, error: { kind: 'not_applied', reason: 'marker_did_not_read_back' } });
    disk.rotten = false;
    expect(disk.stat(`/dst/${STAGING_DIR_NAME}`)).toBeNull();
    disk.crash();
    expect(must(PartitionStorage.open(disk, '/dst', OPTIONS)).log.nextOffset).toBe(3);
  });

  it('an install whose marker cannot be written is not applied: the old partition stays, the staging goes', () => {
    const disk = oldPartition(23);
    const installer = installInto(disk, offer());
    disk.failNext('EIO', 1);
    const committed = installer.commit(OPTIONS);
    expect(committed.ok).toBe(false);
    expect(!committed.ok && committed.error.kind).toBe('not_applied');
    expect(disk.stat(`/dst/${STAGING_DIR_NAME}`)).toBeNull();
    disk.crash();
    const q = must(PartitionStorage.open(disk, '/dst', OPTIONS));
    expect(q.log.nextOffset).toBe(3);
    expect(must(q.reader.first(100)).messageCount).toBe(3);
  });
});

describe('metadata artifacts: produce → install', () => {
  const payload = new TextEncoder().encode('snapshot-payload-'.repeat(50));
  const ict2 = encodeClientTable([]);

  function metadataSource(): { disk: SimDisk; offer: StateOffer } {
    const disk = new SimDisk({ seed: 20 });
    mkdirDurable(disk, '/m');
    must(new SnapshotFile(disk, '/m').write(payload));
    const offer = must(buildMetadataOffer(new SnapshotFile(disk, '/m'), 192n, ict2, 195n));
    return { disk, offer };
  }

  it('offers the payload without its trailer and the ICT2 bytes; refuses without a snapshot', () => {
    const { offer } = metadataSource();
    expect(offer.entries.map((e) => [e.kind, e.frontier, Number(e.len)])).toEqual([
      [ArtifactKind.MetadataSnapshot, 192n, payload.length],
      [ArtifactKind.ClientTable, 195n, ict2.length],
    ]);
    const empty = new SimDisk({ seed: 21 });
    mkdirDurable(empty, '/m');
    expect(buildMetadataOffer(new SnapshotFile(empty, '/m'), 1n, ict2, 1n).ok).toBe(false);
  });

  it('installs atomically (snapshot re-sealed, client table, WAL truncated above the snapshot op) at every crash point', () => {
    const { offer } = metadataSource();
    const build = (seed: number): { disk: SimDisk; journal: MetadataJournal } => {
      const disk = new SimDisk({ seed });
      mkdirDurable(disk, '/m');
      must(new SnapshotFile(disk, '/m').write(new Uint8Array([1, 2, 3])));
      const journal = must(MetadataJournal.open(disk, '/m'));
      must(journal.recover(0));
      for (const f of makePrepares(190, 200)) must(journal.append(f));
      return { disk, journal };
    };
    const run = (disk: SimDisk, journal: MetadataJournal, crashAt: number | null): void => {
      const installer = new MetadataInstaller(disk, '/m', offer.entries, offer.commitOp);
      must(installer.begin());
      const received = offer.entries.map(() => 0);
      transfer(offer, installer, received, 333);
      const verified = must(installer.verify());
      expect(equalBytes(verified.snapshotPayload, payload)).toBe(true);
      expect(verified.snapshotOp).toBe(192n);
      if (crashAt !== null) disk.crashAfter(crashAt);
      must(installer.commit(true, journal));
    };
    const probe = build(0);
    const before = probe.disk.mutatingOps;
    run(probe.disk, probe.journal, null);
    const steps = probe.disk.mutatingOps - before;
    for (let k = 1; k <= steps; k++) {
      const { disk, journal } = build(k);
      try {
        run(disk, journal, k);
      } catch (error) {
        expect(error).toBeInstanceOf(SimulatedCrash);
      }
      disk.crash();
      const resolution = resolveMetadataStaging(disk, '/m');
      const snap = must(new SnapshotFile(disk, '/m').read());
      const j = must(MetadataJournal.open(disk, '/m'));
      const rec = must(j.recover(0));
      if (rec.kind !== 'ok') throw new Error('refused');
      if (snap.kind === 'sealed' && equalBytes(snap.payload, payload)) {
        // New state: the table is installed; the WAL is (or, on roll-forward, is about to be) cut above 192.
        expect(must(new ClientTableFile(disk, '/m').read()).kind).toBe('ok');
        if (resolution.kind === 'rolled_forward') expect(resolution.truncateWalFrom).toBe(193);
        else expect(rec.headOp).toBe(192);
      } else {
        expect(snap.kind === 'sealed' && snap.payload.length === 3).toBe(true);
        expect(rec.headOp).toBe(200);
      }
    }
  });
});
