/**
 * The commit frontier's durability work off the driver's thread (issue 13 item 6,
 * docs/storage-async-frontier.md): with a `diskQueue` the segment and journal fdatasyncs and the
 * superblock write of a frontier are one queued job; the frontier moves only once it ran, replies
 * never wait for it, and everything else that touches the superblock or the files settles the
 * queue first. Each replica's queue here is a DeferredDiskQueue the test runs by hand.
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, Operation } from '@shoal/protocol';
import { DeferredDiskQueue, type Disk, DiskError, type DiskJob, type DiskJobDone, joinPath, PARTITION_JOURNAL_DIR, SuperblockStore } from '@shoal/storage';
import type { PartitionDriver } from '../src/index.js';
import { type Harness, PARTITION_DIR, partitionHarness } from './support/harness.js';

function batch(tag: number): Uint8Array {
  const built = buildBatch([{ id: BigInt(tag), payload: new TextEncoder().encode(`m${tag}`), originTimestamp: 1n }]);
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

function send(h: Harness<PartitionDriver>, request: number): void {
  h.driver(0).onRequest({
    client: 7n, request: BigInt(request), session: 0n, requestChecksum: 0n, operation: Operation.SendMessages,
    body: batch(request), userId: 0, timestamp: 5n, token: 300 + request,
  });
  h.settle();
  h.tick();
}

/** The frontier (op) the superblock on replica i's disk records. */
function durableFrontier(h: Harness<PartitionDriver>, i: number): bigint {
  const read = new SuperblockStore(h.disks[i]?.inner as never, PARTITION_DIR).read();
  if (!read.ok || read.value.kind !== 'ok') throw new Error(`superblock of ${i}: ${JSON.stringify(read)}`);
  return read.value.state.checkpointOp;
}

function setup(): { h: Harness<PartitionDriver>; queues: DeferredDiskQueue[] } {
  const queues: DeferredDiskQueue[] = [];
  const h = partitionHarness(3, { messagesRequiredToSave: 4 }, (i, disk) => (queues[i] = new DeferredDiskQueue(disk)));
  h.tick(5);
  return { h, queues };
}

describe('asynchronous commit frontier (diskQueue)', () => {
  it('queues one job per full window; replies do not wait; the frontier moves when it ran', () => {
    const { h, queues } = setup();
    const start = durableFrontier(h, 0);
    for (let r = 1; r <= 9; r++) send(h, r);
    // Every request was answered while the jobs were still queued.
    for (let r = 1; r <= 9; r++) expect(h.answers.get(300 + r)?.length ?? 0).toBeGreaterThan(0);
    const primary = h.driver(0);
    expect(queues[0]?.pending).toBe(1); // one in flight, the next window waits for it
    expect(primary.frontier.op).toBe(Number(start));
    expect(durableFrontier(h, 0)).toBe(start);
    expect(queues[0]?.runNext()).toBe(true);
    // The first window (4 messages, ops 1..4) is on disk; the next job was queued on completion.
    expect(durableFrontier(h, 0)).toBeGreaterThanOrEqual(4n);
    expect(primary.frontier.op).toBe(Number(durableFrontier(h, 0)));
    expect(queues[0]?.pending).toBe(1);
    queues[0]?.barrier();
    expect(durableFrontier(h, 0)).toBe(9n);
    expect(primary.frontier).toEqual({ op: 9, offset: 9 });
    expect(queues[0]?.pending).toBe(0);
  });

  it('a power loss with the job still queued recovers from the old frontier and catches up', () => {
    const { h, queues } = setup();
    for (let r = 1; r <= 6; r++) send(h, r);
    h.tick(30);
    const backup = h.driver(2);
    expect(backup.storage.log.nextOffset).toBe(6);
    expect(queues[2]?.pending).toBe(1);
    const before = durableFrontier(h, 2);
    // The job never reached the disk: its fdatasyncs and superblock write did not happen.
    queues[2]?.drop();
    h.crash(2);
    expect(durableFrontier(h, 2)).toBe(before);
    const rebooted = h.boot(2);
    expect(rebooted.frontier.op).toBe(Number(before));
    expect(rebooted.fatal).toBeNull();
    send(h, 7);
    h.tick(400);
    for (const q of queues) q.barrier();
    for (const d of h.drivers) expect((d as PartitionDriver).storage.log.nextOffset).toBe(7);
    expect(durableFrontier(h, 2)).toBe(7n);
  });

  it('a view change writes its superblock after the queued job (one slot owner at a time)', () => {
    const { h, queues } = setup();
    for (let r = 1; r <= 5; r++) send(h, r);
    h.tick(30);
    expect(queues[1]?.pending).toBe(1);
    expect(queues[2]?.pending).toBe(1);
    queues[0]?.drop();
    h.crash(0);
    // Without the barrier the backups' view-change superblock writes would meet the queued job's
    // prepared slot (the driver asserts against that).
    for (let t = 0; t < 5000 && h.driver(1).status.view === 0 && h.driver(2).status.view === 0; t++) h.tick();
    h.tick(50);
    const views = [1, 2].map((i) => h.driver(i).status.view);
    expect(Math.max(...views)).toBeGreaterThan(0);
    for (const i of [1, 2]) {
      expect(h.driver(i).fatal).toBeNull();
      const read = new SuperblockStore(h.disks[i]?.inner as never, PARTITION_DIR).read();
      expect(read.ok && read.value.kind === 'ok' ? read.value.state.view : -1).toBe(h.driver(i).status.view);
      expect(durableFrontier(h, i)).toBeGreaterThanOrEqual(4n);
    }
  });

  it('a superblock write that keeps failing leaves the frontier, never loops, and is retried by the next window', () => {
    const queues: DeferredDiskQueue[] = [];
    const failing = { on: true };
    // The disk thread's view of the disk: renames (the superblock's atomic replace) fail while `on`.
    const faulty = (disk: Disk): Disk => new Proxy(disk, {
      get(target, key) {
        if (key === 'rename') {
          return (from: string, to: string) => {
            if (failing.on) throw new DiskError('EIO', 'rename', to);
            target.rename(from, to);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const h = partitionHarness(3, { messagesRequiredToSave: 4 }, (i, disk) => (queues[i] = new DeferredDiskQueue(faulty(disk))));
    h.tick(5);
    for (let r = 1; r <= 5; r++) send(h, r);
    const primary = h.driver(0);
    const before = durableFrontier(h, 0);
    queues[0]?.barrier(); // terminates: a failed job does not resubmit itself
    expect(queues[0]?.pending).toBe(0);
    expect(primary.fatal).toBeNull();
    expect(durableFrontier(h, 0)).toBe(before);
    expect(primary.frontier.op).toBe(Number(before));
    failing.on = false;
    // The failed job's fdatasyncs did run (its window of 5 is released); the next window of 4
    // (ops 6..8) submits a job that records the frontier at op 8.
    for (let r = 6; r <= 9; r++) send(h, r);
    queues[0]?.barrier();
    expect(durableFrontier(h, 0)).toBe(8n);
    expect(primary.frontier.op).toBe(8);
  });

  it('close settles the queue, then records the last frontier inline', () => {
    const { h, queues } = setup();
    for (let r = 1; r <= 6; r++) send(h, r);
    expect(queues[0]?.pending).toBe(1);
    h.driver(0).close();
    expect(queues[0]?.pending).toBe(0);
    expect(durableFrontier(h, 0)).toBe(6n);
  });

  it('journal files the frontier released are unlinked by a queued job; a crash before it leaves files the boot drops', () => {
    const queues: RecordingQueue[] = [];
    const h = partitionHarness(3, { messagesRequiredToSave: 4 }, (i, disk) => (queues[i] = new RecordingQueue(disk)));
    h.tick(5);
    const q = queues[0] as RecordingQueue;
    const dir = joinPath(PARTITION_DIR, PARTITION_JOURNAL_DIR);
    const files = (): string[] => (h.disks[0]?.inner as Disk).readdir(dir).filter((name) => name.endsWith('.pj')).sort();
    let request = 0;
    let removals = 0;
    // ~200 KiB prepares: the 16 MiB journal file rotates every ~80 of them.
    while (removals < 2 && request < 400) {
      request += 1;
      sendLarge(h, request);
      for (const other of [queues[1], queues[2]]) other?.barrier();
      while (q.pending > 0) {
        const next = q.peek() as DiskJob;
        if (next.steps[0]?.kind !== 'remove_file') {
          q.runNext();
          continue;
        }
        removals += 1;
        const named = next.steps.flatMap((step) => (step.kind === 'remove_file' ? [step.path.split('/').pop() as string] : []));
        // Released, not yet unlinked: the files are still there until the job runs.
        for (const name of named) expect(files()).toContain(name);
        expect(next.steps[next.steps.length - 1]).toEqual({ kind: 'sync_dir', path: dir });
        if (removals === 1) {
          q.runNext();
          for (const name of named) expect(files()).not.toContain(name);
          continue;
        }
        // The second removal never runs: the process dies with it queued.
        expect(files().length).toBeGreaterThan(1);
        break;
      }
    }
    expect(removals).toBe(2);
    q.drop();
    h.crash(0);
    const rebooted = h.boot(0);
    expect(rebooted.fatal).toBeNull();
    expect(files()).toHaveLength(1); // the boot consolidated the journal and dropped the leftovers
    // It catches up with what the others committed (the group may have changed its primary).
    h.tick(400);
    for (const queue of queues) queue.barrier();
    for (const d of h.drivers) expect((d as PartitionDriver).storage.log.nextOffset).toBe(request);
  });
});

/** A DeferredDiskQueue whose next job the test can look at before running it. */
class RecordingQueue extends DeferredDiskQueue {
  readonly #jobs: DiskJob[] = [];

  override submit(job: DiskJob, done: DiskJobDone): void {
    this.#jobs.push(job);
    super.submit(job, done);
  }

  override runNext(): boolean {
    this.#jobs.shift();
    return super.runNext();
  }

  override drop(): void {
    this.#jobs.length = 0;
    super.drop();
  }

  peek(): DiskJob | undefined {
    return this.#jobs[0];
  }
}

function sendLarge(h: Harness<PartitionDriver>, request: number): void {
  const built = buildBatch([{ id: BigInt(request), payload: new Uint8Array(200 * 1024).fill(request & 0xff), originTimestamp: 1n }]);
  if (!built.ok) throw new Error(built.reason);
  h.driver(0).onRequest({
    client: 7n, request: BigInt(request), session: 0n, requestChecksum: 0n, operation: Operation.SendMessages,
    body: built.value, userId: 0, timestamp: 5n, token: 300 + request,
  });
  h.settle();
  h.tick();
}
