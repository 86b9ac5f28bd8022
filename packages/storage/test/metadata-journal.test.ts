import { describe, expect, it } from 'vitest';
import {
  MetadataJournal,
  SimDisk,
  SimulatedCrash,
  mkdirDurable,
  scanJournal,
  type JournalRecovery,
} from '../src/index.js';
import { concat, equalBytes, makePrepares, must } from './support/fixtures.js';

function openJournal(disk: SimDisk, mode: 'refuse' | 'repair' = 'refuse', slots?: number): MetadataJournal {
  mkdirDurable(disk, '/m');
  return must(MetadataJournal.open(disk, '/m', slots === undefined ? { mode } : { mode, slots }));
}

function recovered(journal: MetadataJournal, watermark = 0): Extract<JournalRecovery, { kind: 'ok' }> {
  const r = must(journal.recover(watermark));
  if (r.kind !== 'ok') throw new Error(`refused: ${r.reason}`);
  return r;
}

/** A WAL file with `n` chained entries, written through the API, fully synced. */
function walWith(n: number, seed = 1): { disk: SimDisk; frames: Uint8Array[] } {
  const disk = new SimDisk({ seed });
  const journal = openJournal(disk);
  recovered(journal);
  const frames = makePrepares(1, n);
  for (const f of frames) must(journal.append(f));
  return { disk, frames };
}

describe('MetadataJournal: append and recover', () => {
  it('round-trips entries in op order with head op and last header', () => {
    const { disk, frames } = walWith(6);
    disk.crash();
    const r = recovered(openJournal(disk));
    expect(r.entries.map((e) => e.op)).toEqual([1, 2, 3, 4, 5, 6]);
    r.entries.forEach((e, i) => expect(equalBytes(e.frame, frames[i] as Uint8Array)).toBe(true));
    expect(r.headOp).toBe(6);
    expect(equalBytes(r.lastHeader as Uint8Array, (frames[5] as Uint8Array).subarray(0, 256))).toBe(true);
    expect(r.faulty).toEqual([]);
  });

  it('appendNoSync + sync batches several appends under one fdatasync; unsynced ones die in a crash', () => {
    const disk = new SimDisk({ seed: 2 });
    const journal = openJournal(disk);
    recovered(journal);
    const frames = makePrepares(1, 8);
    for (const f of frames.slice(0, 4)) must(journal.appendNoSync(f));
    must(journal.sync());
    for (const f of frames.slice(4)) must(journal.appendNoSync(f));
    disk.crash();
    expect(recovered(openJournal(disk)).entries.map((e) => e.op)).toEqual([1, 2, 3, 4]);
  });

  it('refuses a frame whose length differs from its header size (assertion)', () => {
    const disk = new SimDisk({ seed: 3 });
    const journal = openJournal(disk);
    recovered(journal);
    const frame = makePrepares(1, 1)[0] as Uint8Array;
    expect(() => journal.append(frame.subarray(0, frame.length - 1))).toThrow(/length|size/);
  });

  it('asserts the journal_slots ring: an op may not overwrite a slot above the watermark', () => {
    const disk = new SimDisk({ seed: 4 });
    const journal = openJournal(disk, 'refuse', 4);
    recovered(journal);
    const frames = makePrepares(1, 6);
    for (const f of frames.slice(0, 4)) must(journal.append(f));
    expect(() => journal.append(frames[4] as Uint8Array)).toThrow(/slot/);
    must(journal.drain(1));
    must(journal.append(frames[4] as Uint8Array));
  });

  it('later duplicates of an op win', () => {
    const disk = new SimDisk({ seed: 5 });
    const journal = openJournal(disk);
    recovered(journal);
    const frames = makePrepares(1, 3);
    for (const f of frames) must(journal.append(f));
    const again = makePrepares(3, 3, (frames[1] as Uint8Array).subarray(0, 16).reduceRight((a, b) => (a << 8n) | BigInt(b), 0n), 99)[0] as Uint8Array;
    must(journal.append(again));
    disk.crash();
    const r = recovered(openJournal(disk));
    expect(r.entries.map((e) => e.op)).toEqual([1, 2, 3]);
    expect(equalBytes((r.entries[2] as { frame: Uint8Array }).frame, again)).toBe(true);
  });
});

describe('journal scan: torn tail vs interior corruption (§9.1)', () => {
  const frames = makePrepares(1, 5);
  const file = concat(frames);
  const lastStart = file.length - (frames[4] as Uint8Array).length;

  it('a tail cut at ANY byte of the last entry is a torn tail, truncated to the previous entry', () => {
    for (let cut = lastStart + 1; cut < file.length; cut++) {
      const scan = scanJournal(file.subarray(0, cut));
      expect(scan.refused, `cut ${cut}`).toBeNull();
      expect(scan.torn?.offset).toBe(lastStart);
      expect(scan.end).toBe(lastStart);
      expect(scan.entries.length).toBe(4);
    }
  });

  it('integrity damage to the last entry is torn; to an interior entry refuses boot', () => {
    for (let at = lastStart; at < file.length; at += 17) {
      const damaged = file.slice();
      damaged[at] = (damaged[at] as number) ^ 0x40;
      const scan = scanJournal(damaged);
      expect(scan.refused, `flip at ${at}`).toBeNull();
      expect(scan.entries.length).toBe(4);
    }
    const interiorStart = (frames[0] as Uint8Array).length;
    for (const at of [interiorStart + 3, interiorStart + 200, interiorStart + 270]) {
      const damaged = file.slice();
      damaged[at] = (damaged[at] as number) ^ 0x40;
      const scan = scanJournal(damaged);
      expect(scan.refused, `flip at ${at}`).not.toBeNull();
      expect(scan.entries.length).toBe(1);
    }
  });

  it('a structural failure with a complete entry later refuses; with none later is torn', () => {
    const interiorStart = (frames[0] as Uint8Array).length;
    const badCommand = file.slice();
    badCommand[interiorStart + 60] = 9;
    expect(scanJournal(badCommand).refused).not.toBeNull();
    const badSizeLast = file.slice();
    new DataView(badSizeLast.buffer).setUint32(lastStart + 48, 10, true);
    const scan = scanJournal(badSizeLast);
    expect(scan.refused).toBeNull();
    expect(scan.torn?.offset).toBe(lastStart);
    const garbageTail = concat([file, new Uint8Array(100).fill(7)]);
    expect(scanJournal(garbageTail).torn?.reason).toBe('leftover_shorter_than_header');
    const bigGarbage = concat([file, new Uint8Array(300).fill(7)]);
    expect(scanJournal(bigGarbage).torn?.offset).toBe(file.length);
  });

  it('a parent-chain break between consecutive ops is an integrity failure', () => {
    const other = makePrepares(3, 3, 12345n)[0] as Uint8Array;
    const broken = concat([frames[0] as Uint8Array, frames[1] as Uint8Array, other, frames[3] as Uint8Array]);
    const scan = scanJournal(broken);
    expect(scan.refused?.reason).toMatch(/parent_chain_break/);
    const tail = scanJournal(concat([frames[0] as Uint8Array, frames[1] as Uint8Array, other]));
    expect(tail.torn?.reason).toBe('parent_chain_break');
  });

  it('repair mode reports interior corrupt slots instead of refusing, and keeps what follows', () => {
    const interiorStart = (frames[0] as Uint8Array).length;
    const damaged = file.slice();
    damaged[interiorStart + 270] = (damaged[interiorStart + 270] as number) ^ 0x40; // body of op 2
    const scan = scanJournal(damaged, 'repair');
    expect(scan.refused).toBeNull();
    expect(scan.corrupt).toEqual([{ offset: interiorStart, length: (frames[1] as Uint8Array).length, op: 2, reason: 'body_checksum_mismatch' }]);
    expect(scan.entries.map((e) => e.op)).toEqual([1, 3, 4, 5]);
    const header = file.slice();
    header[interiorStart + 60] = 9; // structural: op unknown
    const s2 = scanJournal(header, 'repair');
    expect(s2.corrupt[0]?.op).toBeUndefined();
    expect(s2.entries.map((e) => e.op)).toEqual([1, 3, 4, 5]);
  });
});

describe('MetadataJournal.recover on disk', () => {
  it('truncates a torn tail durably and reports it; missing ops above the watermark are listed', () => {
    const { disk } = walWith(5);
    const fd = disk.open('/m/journal.wal', 'readwrite');
    const size = disk.size(fd);
    disk.truncate(fd, size - 10);
    disk.fsync(fd);
    disk.close(fd);
    const journal = openJournal(disk);
    const r = recovered(journal);
    expect(r.headOp).toBe(4);
    expect(r.faulty.map((f) => f.kind)).toEqual(['torn']);
    expect(r.truncatedBytes).toBeGreaterThan(0);
    disk.crash();
    expect(recovered(openJournal(disk)).faulty).toEqual([]);
  });

  // Seed 1013767 of 5 (found by the simulator's ack oracle): one flipped bit on the boot read of
  // the last record made a durable, acknowledged prepare look torn, and the truncation deleted it.
  it('a faulty read of the last record is read again: nothing is truncated and nothing is faulty', () => {
    const { disk, frames } = walWith(5);
    const lastStart = frames.slice(0, 4).reduce((n, f) => n + f.length, 0);
    disk.flipOnRead('/m/journal.wal', lastStart + 300, 0x10);
    const r = recovered(openJournal(disk));
    expect(disk.faultLog.map((f) => f.kind)).toEqual(['read_bit_flip']);
    expect(r.headOp).toBe(5);
    expect(r.faulty).toEqual([]);
    expect(r.truncatedBytes).toBe(0);
  });

  it('damage two reads show alike is believed (a torn tail, as upstream); reads that never agree refuse the boot', () => {
    const { disk, frames } = walWith(5);
    const lastStart = frames.slice(0, 4).reduce((n, f) => n + f.length, 0);
    disk.corruptAtRest('/m/journal.wal', lastStart + 300);
    const r = recovered(openJournal(disk));
    expect(r.headOp).toBe(4);
    expect(r.faulty).toEqual([{ kind: 'torn', offset: lastStart, reason: 'body_checksum_mismatch' }]);

    // Three reads, three different pictures: the last record damaged on the platter, and each of
    // the two re-reads also flips a bit of an earlier record (a disk that cannot be read twice alike).
    const { disk: d2, frames: f2 } = walWith(5, 7);
    const start2 = f2.slice(0, 4).reduce((n, f) => n + f.length, 0);
    d2.corruptAtRest('/m/journal.wal', start2 + 300);
    const journal = openJournal(d2);
    let reads = 0;
    const read = d2.read.bind(d2);
    d2.read = (fd, buffer, offset, length, position): number => {
      const n = read(fd, buffer, offset, length, position);
      if (position === 0 && length > start2) {
        reads++;
        const flip = offset + (reads === 2 ? 10 : (f2[0] as Uint8Array).length + 10);
        if (reads >= 2) buffer[flip] = (buffer[flip] as number) ^ 0x20;
      }
      return n;
    };
    const refused = must(journal.recover(0));
    expect(refused).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/^journal_reads_disagree/) });
  });

  it('a rewrite copies a record that no read verifies as it is: the damage is on the disk, the next boot judges it', () => {
    const { disk, frames } = walWith(5);
    disk.crash();
    const journal = openJournal(disk, 'repair');
    recovered(journal);
    const secondStart = (frames[0] as Uint8Array).length;
    disk.corruptAtRest('/m/journal.wal', secondStart + (frames[1] as Uint8Array).length - 1); // op 2's body
    must(journal.truncateFrom(5));
    disk.crash();
    const r = recovered(openJournal(disk, 'repair'));
    expect(r.entries.map((e) => e.op)).toEqual([1, 3, 4]);
    expect(r.faulty).toContainEqual(expect.objectContaining({ kind: 'corrupt', op: 2 }));
  });

  it('a rewrite over a file that ends inside an indexed record copies it as zeros at its size (seed 1125324 of 3)', () => {
    const { disk, frames } = walWith(5);
    disk.crash();
    const journal = openJournal(disk, 'repair');
    recovered(journal);
    // The file lost op 5's bytes under the running journal (a misdirected append landed elsewhere
    // and the file never grew over it): it ends inside the record the index still names.
    const fifth = frames.slice(0, 4).reduce((n, f) => n + f.length, 0);
    const fd = disk.open('/m/journal.wal', 'readwrite');
    disk.truncate(fd, fifth + 100);
    disk.fdatasync(fd);
    disk.close(fd);
    must(journal.truncateFrom(6)); // a rewrite that keeps op 5: no assertion
    // Op 5 kept its place and size (as zeros past the 100 bytes that were there) …
    expect(disk.stat('/m/journal.wal')?.size).toBe(fifth + (frames[4] as Uint8Array).length);
    disk.crash();
    // … and the next boot judges it: a damaged last record is a torn tail.
    const r = recovered(openJournal(disk, 'repair'));
    expect(r.entries.map((e) => e.op)).toEqual([1, 2, 3, 4]);
  });

  it('a rewrite copies each record only once a read of it verifies', () => {
    const { disk, frames } = walWith(5);
    disk.crash();
    const journal = openJournal(disk);
    recovered(journal);
    const lastStart = frames.slice(0, 4).reduce((n, f) => n + f.length, 0);
    disk.flipOnRead('/m/journal.wal', lastStart + 180, 0x01); // the read that copies op 5
    must(journal.drain(1));
    expect(disk.faultLog.map((f) => f.kind)).toEqual(['read_bit_flip']);
    disk.crash();
    const r = recovered(openJournal(disk));
    expect(r.headOp).toBe(5);
    expect(r.truncatedBytes).toBe(0);
    expect(r.entries.map((e) => e.op)).toEqual([2, 3, 4, 5]);
  });

  it('refuses boot on interior corruption (refuse mode) and reports a faulty slot (repair mode)', () => {
    const { disk, frames } = walWith(5);
    disk.corruptAtRest('/m/journal.wal', (frames[0] as Uint8Array).length + 270);
    const refused = must(openJournal(disk).recover());
    expect(refused.kind).toBe('refused');
    const repaired = recovered(openJournal(disk, 'repair'));
    expect(repaired.entries.map((e) => e.op)).toEqual([1, 3, 4, 5]);
    expect(repaired.faulty).toContainEqual(expect.objectContaining({ kind: 'corrupt', op: 2 }));
    expect(repaired.faulty).toContainEqual({ kind: 'missing', op: 2, reason: 'not_journaled' });
  });
});

describe('MetadataJournal: drain and truncateFrom', () => {
  it('rewrite keeps survivors, moves the watermark (drain only) and survives restart', () => {
    const { disk, frames } = walWith(10);
    const journal = openJournal(disk);
    recovered(journal);
    must(journal.drain(4));
    expect(journal.watermark).toBe(4);
    expect(journal.ops()).toEqual([5, 6, 7, 8, 9, 10]);
    must(journal.truncateFrom(9));
    expect(journal.ops()).toEqual([5, 6, 7, 8]);
    expect(journal.watermark).toBe(4);
    expect(equalBytes(must(journal.read(7)) as Uint8Array, frames[6] as Uint8Array)).toBe(true);
    must(journal.append(frames[8] as Uint8Array));
    disk.crash();
    const r = recovered(openJournal(disk), 4);
    expect(r.entries.map((e) => e.op)).toEqual([5, 6, 7, 8, 9]);
  });

  it('a crash at any step of a rewrite leaves the old file or the new one', () => {
    const probe = walWith(8).disk;
    const pj = openJournal(probe);
    recovered(pj);
    const before = probe.mutatingOps;
    must(pj.drain(3));
    const steps = probe.mutatingOps - before;
    for (let k = 1; k <= steps + 1; k++) {
      const { disk } = walWith(8, k);
      const journal = openJournal(disk);
      recovered(journal);
      disk.crashAfter(k);
      try {
        journal.drain(3);
      } catch (error) {
        expect(error).toBeInstanceOf(SimulatedCrash);
      }
      disk.crash();
      const ops = recovered(openJournal(disk)).entries.map((e) => e.op);
      expect([[1, 2, 3, 4, 5, 6, 7, 8], [4, 5, 6, 7, 8]]).toContainEqual(ops);
    }
  });

  it('an fdatasync failure poisons the journal', () => {
    const { disk, frames } = walWith(2);
    const journal = openJournal(disk);
    recovered(journal);
    must(journal.appendNoSync(makePrepares(3, 3, BigInt(0))[0] as Uint8Array));
    disk.failNext('EIO');
    const failed = journal.sync();
    expect(failed.ok).toBe(false);
    const more = journal.append(frames[0] as Uint8Array);
    expect(more.ok).toBe(false);
  });
});

describe('MetadataJournal: recorded faulty ops (the metadata persisted floor)', () => {
  it('a truncation records the ops it drops that may have been acked, and they come back at recovery', () => {
    const { disk } = walWith(8, 3);
    const journal = openJournal(disk);
    recovered(journal);
    must(journal.truncateFrom(6, 8));
    disk.crash();
    const again = openJournal(disk);
    const r = recovered(again);
    expect(r.entries.map((e) => e.op)).toEqual([1, 2, 3, 4, 5]);
    expect(r.recordedFaulty).toEqual([6, 7, 8]);
    // A truncation from 7 with nothing faulty replaces what was recorded at or above 7.
    must(again.truncateFrom(7, 0));
    disk.crash();
    expect(recovered(openJournal(disk)).recordedFaulty).toEqual([6]);
  });

  it('ops journaled again are not faulty; ops below the watermark are forgotten', () => {
    const { disk, frames } = walWith(8, 4);
    const journal = openJournal(disk);
    recovered(journal);
    must(journal.truncateFrom(6, 8));
    must(journal.append(frames[5] as Uint8Array));
    disk.crash();
    expect(recovered(openJournal(disk)).recordedFaulty).toEqual([7, 8]);
    expect(recovered(openJournal(disk), 7).recordedFaulty).toEqual([8]);
  });

  it('a damaged journal.faulty refuses recovery (it is written atomically: damage is a disk fault)', () => {
    const { disk } = walWith(4, 5);
    const journal = openJournal(disk);
    recovered(journal);
    must(journal.recordFaulty(3, 4));
    disk.corruptAtRest('/m/journal.faulty', 9);
    const r = must(openJournal(disk).recover(0));
    expect(r.kind).toBe('refused');
  });
});
