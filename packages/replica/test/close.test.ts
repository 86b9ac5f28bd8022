/**
 * Clean shutdown (issue 12: exit 40 on SIGTERM). `close()` performs every effect and fdatasyncs
 * every held append first, then the driver takes no input: a peer's frame, a client request or a
 * tick that reaches it after its files closed touches no file (a WAL append or truncation on the
 * closed fd was an EBADF, and the node exited 40 instead of 0; on a reused fd number it would
 * have written into another file).
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, createStreamCommand, Operation } from '@shoal/protocol';
import { sweepDeletedPartitions, tombstoneOf } from '@shoal/storage';
import type { MetadataDriver, PartitionDriver } from '../src/index.js';
import { type CountingDisk, type Harness, metadataHarness, partitionHarness } from './support/harness.js';

const COMMAND_PREPARE = 6;
const COMMAND_PREPARE_OK = 7;

function login(h: Harness<MetadataDriver>, client: bigint): bigint {
  const token = 1000 + Number(client);
  h.driver(0).submitSession({ session: 'register', client, userId: 0, epoch: 0n, request: 0n, token });
  for (let i = 0; i < 200 && !h.sessions.some((s) => s.token === token); i++) h.tick();
  return h.sessions.find((s) => s.token === token)?.epoch ?? 0n;
}

function createStream(client: bigint, request: bigint, session: bigint, name: string, token: number) {
  return {
    client, request, session, requestChecksum: 0n, operation: Operation.CreateStream,
    body: createStreamCommand.encodeRequest({ name, options: [] }), userId: 0, timestamp: 77n, token,
  };
}

/** One CreateStream on the primary, ticked until its reply. */
function created(h: Harness<MetadataDriver>, epoch: bigint, r: number): void {
  h.driver(0).onRequest(createStream(11n, BigInt(r), epoch, `a${r}`, 500 + r));
  for (let i = 0; i < 100 && h.answers.get(500 + r) === undefined; i++) h.tick();
  expect(h.answers.get(500 + r)?.length ?? 0).toBeGreaterThan(0);
}

function sendMessages(request: bigint, tag: number, token: number) {
  const built = buildBatch([{ id: BigInt(tag), payload: new TextEncoder().encode(`m${tag}`), originTimestamp: 1n }]);
  if (!built.ok) throw new Error(built.reason);
  return { client: 7n, request, session: 0n, requestChecksum: 0n, operation: Operation.SendMessages, body: built.value, userId: 0, timestamp: 5n, token };
}

function diskOf<D extends MetadataDriver | PartitionDriver>(h: Harness<D>, i: number): CountingDisk {
  const disk = h.disks[i];
  if (disk === undefined) throw new Error(`disk ${i}`);
  return disk;
}

describe('driver close: no input after the files closed', () => {
  it('metadata: a closed backup takes no frame, tick or request, and touches no file', () => {
    const h = metadataHarness(3);
    h.tick(5);
    const epoch = login(h, 11n);
    for (let r = 1; r <= 5; r++) created(h, epoch, r);
    const backup = h.driver(1);
    const committed = backup.status.commitMin;
    const journaled = backup.status.op;
    backup.close();
    const disk = diskOf(h, 1);
    const calls = disk.calls;
    // The rest of the cluster keeps committing (and checkpointing: the closed backup would drain
    // its WAL); every frame, tick and flush also reaches the closed driver (the harness throws on
    // a driver's fatal).
    for (let r = 6; r <= 40; r++) created(h, epoch, r);
    expect(backup.onRequest(createStream(11n, 41n, epoch, 'late', 541))).toBe('dropped');
    expect(backup.closed).toBe(true);
    expect(backup.fatal).toBeNull();
    expect(disk.calls).toBe(calls);
    expect(backup.status.commitMin).toBe(committed);
    // Its files are whole: it reopens with every entry it had journaled and catches up.
    const again = h.boot(1);
    expect(again.status.op).toBe(journaled);
    h.tick(400);
    expect(again.status.commitMin).toBe(h.driver(0).status.commitMin);
  });

  it('metadata: close fdatasyncs held appends and sends their PrepareOks before the WAL closes', () => {
    const h = metadataHarness(3);
    h.tick(5);
    const epoch = login(h, 12n);
    h.driver(0).onRequest(createStream(12n, 1n, epoch, 'held', 600));
    h.driver(0).flush();
    const toBackup = h.network.filter((m) => m.to === 1);
    h.network.splice(0, h.network.length, ...h.network.filter((m) => m.to !== 1));
    const backup = h.driver(1);
    for (const m of toBackup) backup.onMessage(m.frame);
    const op = backup.status.op;
    expect(h.network.some((m) => m.from === 1 && m.frame[60] === COMMAND_PREPARE_OK)).toBe(false);
    backup.close();
    expect(h.network.some((m) => m.from === 1 && m.frame[60] === COMMAND_PREPARE_OK)).toBe(true);
    // Power loss right after the close: the acknowledged entry is on disk.
    h.crash(1);
    expect(h.boot(1).status.op).toBe(op);
  });

  it('partition: a closed backup takes no frame or tick, and touches no file', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    for (let i = 1; i <= 3; i++) h.driver(0).onRequest(sendMessages(BigInt(i), i, 300 + i));
    h.tick(5);
    const backup = h.driver(1);
    const stored = backup.storage.log.nextOffset;
    backup.close();
    const disk = diskOf(h, 1);
    const calls = disk.calls;
    for (let i = 4; i <= 12; i++) {
      h.driver(0).onRequest(sendMessages(BigInt(i), i, 300 + i));
      h.tick();
    }
    h.tick(20);
    expect(h.answers.get(312)?.length ?? 0).toBeGreaterThan(0);
    expect(backup.onMessage(new Uint8Array(256))).toBe('closed');
    expect(disk.calls).toBe(calls);
    expect(backup.fatal).toBeNull();
    const again = h.boot(1);
    expect(again.storage.log.nextOffset).toBe(stored);
    h.tick(400);
    expect(again.storage.log.nextOffset).toBe(12);
  });

  // Once a crash (seed 200319 of 5): an injected ENOSPC escaped from the `rm -r` of a deleted
  // partition. A deletion's disk error is returned and reported, the replica keeps running, and
  // the directory's name is whole or free (partition-removal.ts).
  it('partition: destroy returns a disk error instead of throwing; the tombstone is swept later', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    for (let i = 1; i <= 3; i++) h.driver(0).onRequest(sendMessages(BigInt(i), i, 300 + i));
    h.tick(5);
    const backup = h.driver(1);
    const disk = diskOf(h, 1).inner;
    // rename and its fsync go through; the rm -r fails.
    disk.failNext('ENOSPC', 1, 2);
    const removed = backup.destroy();
    expect(removed.ok).toBe(false);
    if (!removed.ok) expect(removed.error.code).toBe('ENOSPC');
    expect(backup.fatal).toBeNull();
    expect(disk.stat(backup.dir)).toBeNull();
    expect(disk.stat(tombstoneOf(backup.dir))?.kind).toBe('directory');
    expect(sweepDeletedPartitions(disk, '/data')).toEqual({ ok: true, value: [tombstoneOf(backup.dir)] });
    expect(disk.stat(tombstoneOf(backup.dir))).toBeNull();
  });
});
