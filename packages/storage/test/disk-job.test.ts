/**
 * Disk jobs (disk-job.ts) and the log's deferred threshold sync: a job's fdatasync by path makes
 * bytes written through another fd durable, a queued job that never ran leaves them volatile
 * (a crash loses them), removals and directory syncs, jobs run in order, and a failure names
 * its step.
 */
import { describe, expect, it } from 'vitest';
import {
  DeferredDiskQueue, InlineDiskQueue, PartitionStorage, SimDisk, readWholeFile, runDiskJob, type DiskJobResult,
} from '../src/index.js';
import { makeBatches, must } from './support/fixtures.js';

const DIR = '/data/streams/0/topics/0/partitions/0';
const FILE = '/data/f.bin';

function written(disk: SimDisk, bytes: number[]): void {
  disk.mkdirp('/data');
  disk.fsyncDir('/');
  const fd = disk.open(FILE, 'create');
  disk.fsyncDir('/data');
  disk.write(fd, Uint8Array.from(bytes), 0, bytes.length, 0);
  disk.close(fd);
}

describe('disk jobs', () => {
  it('sync_file makes bytes another fd wrote durable; a dropped job leaves them to the crash', () => {
    for (const run of [true, false]) {
      const disk = new SimDisk({ seed: 3 });
      written(disk, [1, 2, 3]);
      const queue = new DeferredDiskQueue(disk);
      const results: DiskJobResult[] = [];
      queue.submit({ steps: [{ kind: 'sync_file', path: FILE }] }, (r) => results.push(r));
      expect(queue.pending).toBe(1);
      if (run) queue.barrier();
      else queue.drop();
      disk.crash();
      expect(readWholeFile(disk, FILE)).toEqual(run ? Uint8Array.from([1, 2, 3]) : new Uint8Array(0));
      expect(results).toEqual(run ? [{ ok: true }] : []);
    }
  });

  it('write_atomic replaces the file durably; jobs and their callbacks run in submission order', () => {
    const disk = new SimDisk({ seed: 4 });
    written(disk, [9]);
    const queue = new DeferredDiskQueue(disk);
    const order: string[] = [];
    queue.submit({ steps: [{ kind: 'write_atomic', path: FILE, bytes: Uint8Array.from([5, 6]) }] }, () => {
      order.push('a');
      // A callback may submit the next job: the barrier runs it too.
      queue.submit({ steps: [{ kind: 'sync_file', path: FILE }] }, () => order.push('c'));
    });
    queue.submit({ steps: [] }, () => order.push('b'));
    queue.barrier();
    expect(order).toEqual(['a', 'b', 'c']);
    disk.crash();
    expect(readWholeFile(disk, FILE)).toEqual(Uint8Array.from([5, 6]));
  });

  it('remove_file unlinks (a file already gone counts as removed); sync_dir makes the unlink survive a crash', () => {
    for (const synced of [true, false]) {
      const disk = new SimDisk({ seed: 6 });
      written(disk, [1]);
      const steps = [{ kind: 'remove_file', path: FILE }, { kind: 'remove_file', path: '/data/never-there.bin' }] as const;
      const result = runDiskJob(disk, { steps: synced ? [...steps, { kind: 'sync_dir', path: '/data' }] : steps });
      expect(result).toEqual({ ok: true });
      expect(disk.readdir('/data')).toEqual([]);
      disk.crash();
      // Without the directory fsync the unlink was volatile: the crash brings the file back.
      expect(disk.readdir('/data')).toEqual(synced ? [] : ['f.bin']);
    }
  });

  it('stops at the first failing step and names it', () => {
    const disk = new SimDisk({ seed: 5 });
    written(disk, [1]);
    const result = runDiskJob(disk, {
      steps: [{ kind: 'sync_file', path: FILE }, { kind: 'sync_file', path: '/data/missing' }, { kind: 'write_atomic', path: FILE, bytes: Uint8Array.from([7]) }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.step).toBe(1);
    expect(result.error.code).toBe('ENOENT');
    expect(readWholeFile(disk, FILE)).toEqual(Uint8Array.from([1])); // step 2 never ran
    let inline: DiskJobResult | null = null;
    new InlineDiskQueue(disk).submit({ steps: [{ kind: 'sync_file', path: FILE }] }, (r) => (inline = r));
    expect(inline).toEqual({ ok: true });
  });
});

describe('PartitionLog: deferred threshold sync', () => {
  it('reports the window due instead of syncing it; a ticket job makes it durable and releases it', () => {
    const disk = new SimDisk({ seed: 6 });
    const opened = PartitionStorage.open(disk, DIR, { messagesRequiredToSave: 4 });
    if (!opened.ok) throw new Error(JSON.stringify(opened.error));
    const log = opened.value.log;
    const outcome = must(log.append(makeBatches(0, [2, 3]), true));
    expect(outcome).toMatchObject({ synced: false, syncDue: true });
    expect(log.syncDue).toBe(true);
    const ticket = log.syncTicket();
    expect(ticket).toMatchObject({ messages: 5, segmentStart: 0 });
    // More arrives while the job waits: it stays unsynced after the job.
    must(log.append(makeBatches(5, [1]), true));
    const result = runDiskJob(disk, { steps: ticket.paths.map((path) => ({ kind: 'sync_file' as const, path })) });
    expect(result.ok).toBe(true);
    log.synced(ticket);
    expect(log.unsyncedMessages).toBe(1);
    expect(log.syncDue).toBe(false);
    // Without deferral the same window syncs inline, as before.
    const inline = must(log.append(makeBatches(6, [3])));
    expect(inline).toMatchObject({ synced: true, syncDue: false });
    disk.crash();
    const again = PartitionStorage.open(disk, DIR, { messagesRequiredToSave: 4 });
    if (!again.ok) throw new Error(JSON.stringify(again.error));
    expect(again.value.log.nextOffset).toBe(9);
  });
});
