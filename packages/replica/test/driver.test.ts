/**
 * The driver's contract: effects performed in durability order (group commit, the log before the
 * reply), boot from what storage kept, host duties (admission after the client-table preflight),
 * and the ingress check of repaired partition batches.
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, createStreamCommand, Operation, readBatchHeader } from '@shoal/protocol';
import { encodeStoreOffsetBody } from '@shoal/state';
import { MetadataDriver, MetadataHost, echoReply, decodeClientTableSnapshot, encodeClientTableSnapshot } from '../src/index.js';
import { type Harness, PARTITION_GROUP, metadataHarness, partitionHarness } from './support/harness.js';
import { PartitionDriver, wipePartition } from '../src/index.js';
import { SimDisk } from '@shoal/storage';

const COMMAND_PREPARE = 6;
const COMMAND_PREPARE_OK = 7;

function login(h: Harness<MetadataDriver>, node: number, client: bigint, userId = 0): bigint {
  const token = 1000 + Number(client);
  h.driver(node).submitSession({ session: 'register', client, userId, epoch: 0n, request: 0n, token });
  for (let i = 0; i < 200 && !h.sessions.some((s) => s.token === token); i++) h.tick();
  const result = h.sessions.find((s) => s.token === token);
  expect(result?.outcome).toBe('ok');
  return result?.epoch ?? 0n;
}

function createStream(client: bigint, request: bigint, session: bigint, name: string, token: number) {
  return {
    client, request, session, requestChecksum: 0n, operation: Operation.CreateStream,
    body: createStreamCommand.encodeRequest({ name, options: [] }), userId: 0, timestamp: 77n, token,
  };
}

function batch(tag: number, count = 2): Uint8Array {
  const messages = Array.from({ length: count }, (_, i) => ({ id: BigInt(tag * 100 + i + 1), payload: new TextEncoder().encode(`m${tag}.${i}`), originTimestamp: 1n }));
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

function sendMessages(client: bigint, request: bigint, body: Uint8Array, token: number) {
  return { client, request, session: 0n, requestChecksum: 0n, operation: Operation.SendMessages, body, userId: 0, timestamp: 5n, token };
}

const PARTITION_DIR = '/data/streams/1/topics/0/partitions/0';

/** Open options of replica `i`'s partition 1/0/0 in a partition harness (one message per save). */
function partitionOptions(h: Harness<PartitionDriver>, i: number) {
  return { ...h.options(i), dir: PARTITION_DIR, group: PARTITION_GROUP, identity: { streamId: 1, topicId: 0, partitionId: 0 }, storage: { messagesRequiredToSave: 1 }, createdRevision: 1n };
}

/** Replica 2's offset file of consumer `key` damaged at rest: refused, wiped, reopened and re-attached. */
function damageWipeReopen(h: Harness<PartitionDriver>, key: number): PartitionDriver {
  h.drivers[2] = null; // process kill
  h.disks[2]?.inner.corruptAtRest(`${PARTITION_DIR}/offsets/consumers/${key}`, 3);
  const options = partitionOptions(h, 2);
  const refused = PartitionDriver.open(options);
  expect(refused.ok ? 'opened' : refused.reason).toBe('partition_recovery_refused');
  expect(wipePartition(h.disks[2] as NonNullable<(typeof h.disks)[2]>, PARTITION_DIR, { generation: 0n, createdRevision: 1n })).toBeNull();
  const reopened = PartitionDriver.open(options);
  if (!reopened.ok) throw new Error(reopened.detail);
  h.drivers[2] = reopened.driver;
  return reopened.driver;
}

describe('metadata driver: durability order', () => {
  it('group-commits WAL appends: nothing vouching for an entry leaves before the one fdatasync of flush()', () => {
    const h = metadataHarness(3);
    h.tick(5);
    const epoch = login(h, 0, 11n);
    h.tick(5);
    const primary = h.driver(0);
    const disk0 = h.disks[0];
    if (disk0 === undefined) throw new Error('disk');
    // Three requests in one host turn (three clients).
    const epochs = [epoch, login(h, 0, 12n), login(h, 0, 13n)];
    h.tick(5);
    const before = disk0.fdatasyncs;
    [11n, 12n, 13n].forEach((client, i) => primary.onRequest(createStream(client, 1n, epochs[i] ?? 0n, `s${i}`, 500 + i)));
    // Appended, not yet synced: the forwarded prepares (they vouch for the entries) are withheld.
    expect(h.network.filter((m) => m.from === 0 && m.frame[60] === COMMAND_PREPARE)).toHaveLength(0);
    expect(disk0.fdatasyncs).toBe(before);
    primary.flush();
    expect(disk0.fdatasyncs - before).toBe(1);
    expect(h.network.filter((m) => m.from === 0 && m.frame[60] === COMMAND_PREPARE).length).toBeGreaterThan(0);
    // A backup journals them and withholds its PrepareOks until its own flush.
    const backup = h.driver(1);
    const disk1 = h.disks[1];
    if (disk1 === undefined) throw new Error('disk');
    const toBackup = h.network.filter((m) => m.to === 1);
    h.network.splice(0, h.network.length, ...h.network.filter((m) => m.to !== 1));
    const backupBefore = disk1.fdatasyncs;
    for (const m of toBackup) backup.onMessage(m.frame);
    expect(h.network.filter((m) => m.from === 1 && m.frame[60] === COMMAND_PREPARE_OK)).toHaveLength(0);
    backup.flush();
    expect(disk1.fdatasyncs - backupBefore).toBe(1);
    expect(h.network.filter((m) => m.from === 1 && m.frame[60] === COMMAND_PREPARE_OK).length).toBeGreaterThan(0);
    h.settle();
    expect([500, 501, 502].every((t) => (h.answers.get(t)?.length ?? 0) > 0)).toBe(true);
  });

  it('boots from the WAL and the snapshot after a power loss, with the state and client table it had', () => {
    const h = metadataHarness(1);
    const host = new MetadataHost({
      driver: h.driver(0), transport: h.options(0).transport, now: () => 1n,
      ports: { hashPassword: (p) => `h:${p}`, verifyPassword: (s, p) => s === `h:${p}`, generateToken: () => 'tok' },
    });
    for (let i = 0; i < 5; i++) {
      h.tick();
      host.tick();
    }
    expect(h.driver(0).state.model.users.size).toBe(1); // root, through an internal session
    const epoch = login(h, 0, 21n);
    for (let r = 1; r <= 12; r++) {
      host.submitRequest(createStream(21n, BigInt(r), epoch, `stream-${r}`, 600 + r));
      h.flush();
      h.tick();
    }
    const before = h.driver(0).status.commitMin;
    expect(h.driver(0).state.model.streams.size).toBe(12);
    h.crash(0);
    const rebooted = h.boot(0);
    expect(rebooted.status.commitMin).toBe(before);
    expect(rebooted.state.model.streams.size).toBe(12);
    expect(rebooted.sessionUser(21n)?.epoch).toBe(epoch);
    // A retry of an applied request gets the cached reply (same committed op), not a second admission.
    const host2 = new MetadataHost({
      driver: rebooted, transport: h.options(0).transport, now: () => 1n,
      ports: { hashPassword: (p) => `h:${p}`, verifyPassword: () => true, generateToken: () => 'tok' },
    });
    h.answers.clear();
    host2.submitRequest(createStream(21n, 12n, epoch, 'stream-12', 999));
    h.settle();
    const reply = h.answers.get(999)?.[0];
    expect(reply).toBeDefined();
    const op = new DataView((reply as Uint8Array).buffer).getBigUint64(176, true);
    expect(op).toBeGreaterThan(0n);
    expect(rebooted.state.model.streams.size).toBe(12);
  });

  it('checkpoints into snapshot.bin, drains the WAL and boots from the snapshot', () => {
    const h = metadataHarness(1);
    // journal_slots 1024 / margin 64: a checkpoint comes after ~960 ops; with smaller slots sooner.
    const small = (i: number) => ({ ...h.options(i), config: { ...h.options(i).config, journalSlots: 256, checkpointMargin: 64 } });
    h.crash(0);
    const opened = MetadataDriver.open({ ...small(0), dir: '/data/metadata' });
    if (!opened.ok) throw new Error(opened.detail);
    h.drivers[0] = opened.driver;
    const epoch = login(h, 0, 31n);
    for (let r = 1; r <= 230; r++) {
      h.driver(0).onRequest(createStream(31n, BigInt(r), epoch, `x${r}`, 2000 + r));
      h.flush();
      if (r % 20 === 0) h.tick();
    }
    h.tick(3);
    const d = h.driver(0);
    expect(d.snapshotOp).toBeGreaterThan(0);
    expect(d.journal.watermark).toBeGreaterThan(0);
    const commit = d.status.commitMin;
    h.crash(0);
    const again = MetadataDriver.open({ ...small(0), dir: '/data/metadata' });
    if (!again.ok) throw new Error(again.detail);
    expect(again.driver.status.commitMin).toBe(commit);
    expect(again.driver.snapshotOp).toBe(d.snapshotOp);
  });
});

describe('partition driver', () => {
  it('writes a committed batch to the log before its reply, and records the commit frontier', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    const logEndAtReply: number[] = [];
    const primary = h.driver(0);
    for (let i = 1; i <= 4; i++) {
      primary.onRequest(sendMessages(7n, BigInt(i), batch(i), 300 + i));
      h.settle();
      h.tick();
      const reply = h.answers.get(300 + i)?.[0];
      expect(reply).toBeDefined();
      logEndAtReply.push(primary.storage.log.nextOffset);
    }
    expect(logEndAtReply).toEqual([2, 4, 6, 8]);
    expect(primary.frontier.offset).toBe(8);
    h.tick(60);
    for (const d of h.drivers) expect((d as PartitionDriver).storage.log.nextOffset).toBe(8);
  });

  it('cuts unsynced batches above the frontier after a power loss (n = 3) and catches up from peers', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 4 });
    h.tick(5);
    for (let i = 1; i <= 5; i++) {
      h.driver(0).onRequest(sendMessages(7n, BigInt(i), batch(i, 1), 400 + i));
      h.settle();
      h.tick();
    }
    h.tick(60);
    const backup = h.driver(2);
    expect(backup.storage.log.nextOffset).toBe(5);
    expect(backup.frontier.offset).toBe(4); // synced at 4 messages; the fifth is in the page cache
    h.crash(2);
    const rebooted = h.boot(2);
    expect(rebooted.storage.log.nextOffset).toBe(4);
    expect(rebooted.state.nextOffset).toBe(4n);
    expect(rebooted.status.commitMin).toBe(rebooted.frontier.op);
    h.driver(0).onRequest(sendMessages(7n, 6n, batch(6, 1), 406));
    h.tick(400);
    for (const d of h.drivers) expect((d as PartitionDriver).storage.log.nextOffset).toBe(6);
    const heads = h.drivers.map((d) => (d as PartitionDriver).messageLog.read(5n, 1).parts.map((b) => readBatchHeader(b)?.baseOffset));
    expect(heads).toEqual([[5n], [5n], [5n]]);
  });

  it('a single replica re-applies the journal a process crash left above its frontier (not the batch count)', () => {
    const h = partitionHarness(1, { messagesRequiredToSave: 1000 });
    h.tick(2);
    for (let i = 1; i <= 3; i++) {
      h.driver(0).onRequest(sendMessages(7n, BigInt(i), batch(i), 500 + i));
      h.settle();
      h.tick();
    }
    expect(h.driver(0).frontier.offset).toBe(0);
    // Process crash: the objects are gone, the page cache (SimDisk's volatile image) stays.
    h.drivers[0] = null;
    const rebooted = h.boot(0);
    // The unsynced segment bytes were cut back to the frontier; the journal's ops 1..3 (a solo
    // replica committed each one it journaled) were applied again at boot.
    expect(rebooted.replica.role.commitMin).toBe(3);
    expect(rebooted.storage.log.nextOffset).toBe(6);
    expect(rebooted.replica.role.journalIncomplete).toBe(false);
    rebooted.onRequest(sendMessages(7n, 4n, batch(4), 504));
    h.settle();
    h.tick();
    expect(rebooted.storage.log.nextOffset).toBe(8);
  });

  it('without a journal file (a directory from before it existed) a single replica adopts the batches above its frontier', () => {
    const h = partitionHarness(1, { messagesRequiredToSave: 1000 });
    h.tick(2);
    for (let i = 1; i <= 3; i++) {
      h.driver(0).onRequest(sendMessages(7n, BigInt(i), batch(i), 500 + i));
      h.settle();
      h.tick();
    }
    h.drivers[0] = null;
    h.disks[0]?.inner.removeTree('/data/streams/1/topics/0/partitions/0/journal');
    const rebooted = h.boot(0);
    expect(rebooted.storage.log.nextOffset).toBe(6);
    expect(rebooted.frontier).toEqual({ op: 3, offset: 6 });
    rebooted.onRequest(sendMessages(7n, 4n, batch(4), 504));
    h.settle();
    h.tick();
    expect(rebooted.storage.log.nextOffset).toBe(8);
  });

  // Issue 12: the frontier claims every op at or below it durable, but the consumer-offset files
  // were fdatasynced only with enforce_fsync: after a power loss the offset an acknowledged
  // StoreConsumerOffset wrote was gone, and nothing replayed it (its op is below the frontier).
  it('a power loss after the frontier passed a StoreConsumerOffset keeps the stored offset', () => {
    const h = partitionHarness(1, { messagesRequiredToSave: 1 });
    h.tick(2);
    const primary = h.driver(0);
    primary.onRequest(sendMessages(7n, 1n, batch(1), 701));
    h.settle();
    const body = encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 9 }, offset: 1n });
    primary.onRequest({ client: 7n, request: 2n, session: 0n, requestChecksum: 0n, operation: Operation.StoreConsumerOffset, body, userId: 0, timestamp: 5n, token: 702 });
    h.settle();
    // A later batch: its append fdatasyncs the segments and records a frontier past the offset op.
    primary.onRequest(sendMessages(7n, 3n, batch(3), 703));
    h.settle();
    h.tick();
    expect(primary.frontier.op).toBeGreaterThanOrEqual(3);
    expect(primary.state.offsets.get({ kind: 'consumer', key: 9 })).toBe(1n);
    h.drivers[0] = null;
    h.disks[0]?.inner.crash(); // power loss: unsynced writes are gone
    const rebooted = h.boot(0);
    expect(rebooted.state.offsets.get({ kind: 'consumer', key: 9 })).toBe(1n);
  });

  it('drops a RepairPrepare whose batch does not verify (partition bodies carry no body seal)', () => {
    const h = partitionHarness(3);
    h.tick(5);
    h.driver(0).onRequest(sendMessages(7n, 1n, batch(1), 601));
    h.settle();
    h.tick(10);
    const journaled = h.driver(0).replica.journalFrame(1);
    if (journaled === null) throw new Error('op 1 not journaled');
    const repair = journaled.slice();
    repair[60] = 19;
    repair[256 + 300] = (repair[256 + 300] as number) ^ 0x08;
    const dropped: string[] = [];
    const reason = h.driver(1).onMessage(repair);
    if (reason !== null) dropped.push(reason);
    expect(dropped[0]).toMatch(/^repair_batch_/);
  });

  // A damaged offset file (bit rot, a misdirected write) was reported and not loaded, and the
  // replica went on at a frontier that vouches for the offset it lost: its table differed from
  // the others' for good (no later op rewrites a key nobody writes again).
  it('a damaged offset file refuses the partition (n > 1): wiped, it is rebuilt from a peer with the offset', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    const primary = h.driver(0);
    primary.onRequest(sendMessages(7n, 1n, batch(1), 901));
    h.settle();
    const body = encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 9 }, offset: 1n });
    primary.onRequest({ client: 7n, request: 2n, session: 0n, requestChecksum: 0n, operation: Operation.StoreConsumerOffset, body, userId: 0, timestamp: 5n, token: 902 });
    h.settle();
    primary.onRequest(sendMessages(7n, 3n, batch(3), 903));
    h.settle();
    h.tick(60);
    expect(h.driver(2).frontier.op).toBeGreaterThanOrEqual(2);
    const reopened = damageWipeReopen(h, 9);
    h.tick(600);
    expect(reopened.state.offsets.get({ kind: 'consumer', key: 9 })).toBe(1n);
    expect(reopened.storage.log.nextOffset).toBe(4);
  });

  // A power loss can leave a created offset file empty (its data never written back): the op that
  // created it is above the frontier, so the partition opens with the key absent (not refused:
  // the runtime exits 13 on a refusal) and the op is applied again.
  it('an empty offset file after a power loss does not refuse the partition; the op applies again', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    const primary = h.driver(0);
    primary.onRequest(sendMessages(7n, 1n, batch(1), 961));
    h.settle();
    h.tick(20);
    const dir = PARTITION_DIR;
    const frontier = h.driver(2).frontier;
    const body = encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 4 }, offset: 0n });
    primary.onRequest({ client: 7n, request: 2n, session: 0n, requestChecksum: 0n, operation: Operation.StoreConsumerOffset, body, userId: 0, timestamp: 5n, token: 962 });
    h.settle();
    const disk = h.disks[2] as NonNullable<(typeof h.disks)[2]>;
    expect(disk.inner.stat(`${dir}/offsets/consumers/4`)?.size).toBe(16);
    h.drivers[2] = null; // process kill; then the data is lost, the directory entry kept
    const fd = disk.inner.open(`${dir}/offsets/consumers/4`, 'readwrite');
    disk.inner.truncate(fd, 0);
    disk.inner.fsync(fd);
    disk.inner.close(fd);
    disk.inner.fsyncDir(`${dir}/offsets/consumers`);
    disk.inner.crash();
    const options = partitionOptions(h, 2);
    const reopened = PartitionDriver.open(options);
    if (!reopened.ok) throw new Error(reopened.detail);
    expect(reopened.driver.frontier).toEqual(frontier);
    expect(reopened.driver.state.offsets.get({ kind: 'consumer', key: 4 })).toBeUndefined();
    h.drivers[2] = reopened.driver;
    h.tick(600);
    expect(reopened.driver.state.offsets.get({ kind: 'consumer', key: 4 })).toBe(0n);
    expect(disk.inner.stat(`${dir}/offsets/consumers/4`)?.size).toBe(16);
  });

  // Simulator seed 1028171 of 5: the superblock kept through a wipe still recorded a frontier of
  // op 1 at offset 0 (only an offset write committed, then a view change wrote the superblock).
  // Nothing told the reopened driver that its files were gone (an empty log matches offset 0), so
  // it restarted at commit 1 with an empty offset table: op 1 was never applied again there.
  it('a wipe forgets the frontier: a frontier at offset 0 vouching for an offset write is not trusted after it', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    const body = encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 9 }, offset: 1n });
    h.driver(0).onRequest({ client: 7n, request: 1n, session: 0n, requestChecksum: 0n, operation: Operation.StoreConsumerOffset, body, userId: 0, timestamp: 5n, token: 951 });
    h.settle();
    h.tick(10);
    h.crash(0); // the view change that follows writes every survivor's superblock
    h.tick(3000);
    expect(h.driver(2).replica.role.view).toBeGreaterThan(0);
    expect(h.driver(2).frontier).toEqual({ op: 1, offset: 0 });
    h.boot(0);
    h.tick(200);
    const reopened = damageWipeReopen(h, 9);
    expect(reopened.frontier).toEqual({ op: 0, offset: 0 });
    h.tick(600);
    expect(reopened.replica.role.commitMin).toBeGreaterThanOrEqual(1);
    expect(reopened.state.offsets.get({ kind: 'consumer', key: 9 })).toBe(1n);
  });

  // Simulator seed 300962 of 3: a read of replica 1's purge.gen flipped bit 5 of byte 12 (created
  // revision 1 read as 0x2000000001). The driver took the directory for a deleted incarnation's
  // leftover and re-created it: superblock, journal and segments gone, the group booted brand new
  // (the preferred primary's initial view, no journal-lost mark) and voted with an empty log, so
  // a view without the one other holder of committed op 6 committed another op 6.
  it('a purge.gen naming a newer created revision refuses the partition; nothing it holds is removed', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    h.driver(0).onRequest(sendMessages(7n, 1n, batch(1), 901));
    h.settle();
    h.driver(0).onRequest(sendMessages(7n, 2n, batch(2), 902));
    h.settle();
    h.tick(60);
    const dir = PARTITION_DIR;
    const view = h.driver(2).replica.role.view;
    h.drivers[2] = null; // process kill
    const disk = h.disks[2] as NonNullable<(typeof h.disks)[2]>;
    const before = disk.inner.listFiles().filter((f) => f.startsWith(dir)).sort();
    const logBytes = disk.inner.stat(`${dir}/00000000000000000000.log`)?.size ?? 0;
    expect(logBytes).toBeGreaterThan(0);
    disk.inner.corruptAtRest(`${dir}/purge.gen`, 12, 0x20);
    const options = partitionOptions(h, 2);
    const refused = PartitionDriver.open(options);
    expect(refused.ok ? 'opened' : refused.reason).toBe('partition_recovery_refused');
    expect(disk.inner.listFiles().filter((f) => f.startsWith(dir)).sort()).toEqual(before);
    expect(disk.inner.stat(`${dir}/00000000000000000000.log`)?.size).toBe(logBytes);
    // The host's refusal path: wiped with its superblock kept, it boots in the view it promised,
    // its journal marked lost (it abstains, then votes blind), and is refilled from a peer.
    expect(wipePartition(disk, dir, { generation: 0n, createdRevision: 1n })).toBeNull();
    const reopened = PartitionDriver.open(options);
    if (!reopened.ok) throw new Error(reopened.detail);
    expect(reopened.driver.replica.role.view).toBeGreaterThanOrEqual(view);
    expect(reopened.driver.replica.role.journalIncomplete).toBe(true);
    h.drivers[2] = reopened.driver;
    h.tick(600);
    expect(reopened.driver.storage.log.nextOffset).toBe(4);
  });

  // A purge.gen recording created revision 0 names no incarnation (a directory written before
  // hosts passed revisions, or revision 1 read with bit 0 flipped): it adopts the committed
  // revision and keeps its log, superblock and view, where a re-create would have wiped them.
  it('a purge.gen recording no created revision adopts the committed one and keeps everything', () => {
    const h = partitionHarness(3, { messagesRequiredToSave: 1 });
    h.tick(5);
    h.driver(0).onRequest(sendMessages(7n, 1n, batch(1), 901));
    h.settle();
    h.tick(60);
    const dir = PARTITION_DIR;
    const view = h.driver(2).replica.role.view;
    h.drivers[2] = null; // process kill
    const disk = h.disks[2] as NonNullable<(typeof h.disks)[2]>;
    const logBytes = disk.inner.stat(`${dir}/00000000000000000000.log`)?.size ?? 0;
    expect(logBytes).toBeGreaterThan(0);
    disk.inner.corruptAtRest(`${dir}/purge.gen`, 8, 0x01); // created revision 1 -> 0
    const options = partitionOptions(h, 2);
    const reopened = PartitionDriver.open(options);
    if (!reopened.ok) throw new Error(reopened.detail);
    expect(reopened.driver.storage.purgeRecord.createdRevision).toBe(1n);
    expect(reopened.driver.storage.log.nextOffset).toBeGreaterThan(0);
    expect(reopened.driver.replica.role.view).toBeGreaterThanOrEqual(view);
    expect(disk.inner.stat(`${dir}/00000000000000000000.log`)?.size).toBe(logBytes);
  });

  // Simulator seed 300 of 3: an injected EIO while a new partition's storage was being created
  // came back as partition_recovery_refused, so the host "wiped" a directory that did not exist
  // yet (and threw). An I/O error is partition_io: the process exits and restarts.
  it('an I/O error while opening the partition is partition_io, not a refusal', () => {
    const disk = new SimDisk({ seed: 9 });
    disk.failNext('EIO', 1);
    const h = partitionHarness(1);
    const opened = PartitionDriver.open({
      ...h.options(0), disk, dir: '/data/streams/1/topics/0/partitions/0', group: PARTITION_GROUP,
      identity: { streamId: 1, topicId: 0, partitionId: 0 }, createdRevision: 1n,
    });
    expect(opened.ok).toBe(false);
    if (!opened.ok) expect(opened.reason).toBe('partition_io');
    expect(disk.stat('/data/streams/1/topics/0/partitions/0')).toBeNull();
  });

  // The simulator's network flipped a bit in a StoreConsumerOffset prepare's body: nothing
  // covered it (partition prepares leave checksum_body zero, the identity covers the header),
  // so the backup journaled and committed another offset than the primary's.
  it('drops a Prepare and a RepairPrepare whose consumer-offset body had a bit flipped (the body seal)', () => {
    const h = partitionHarness(3);
    h.tick(5);
    h.driver(0).onRequest(sendMessages(7n, 1n, batch(1), 801));
    h.settle();
    h.tick(10);
    const body = encodeStoreOffsetBody({ consumer: { kind: 'consumer', key: 9 }, offset: 1n });
    h.driver(0).onRequest({ client: 7n, request: 2n, session: 0n, requestChecksum: 0n, operation: Operation.StoreConsumerOffset, body, userId: 0, timestamp: 5n, token: 802 });
    const refused: (string | null)[] = [];
    h.settle(50, (m) => {
      if (m.to !== 1 || m.frame[60] !== COMMAND_PREPARE) return false;
      const flipped = m.frame.slice();
      flipped[256 + 1] = (flipped[256 + 1] as number) ^ 0x01; // consumer key 9 -> 8
      refused.push(h.driver(1).onMessage(flipped));
      return true;
    });
    expect(refused.length).toBeGreaterThan(0);
    for (const reason of refused) expect(reason).toMatch(/offset_body_seal_mismatch/);
    expect(h.driver(1).replica.journalFrame(2)).toBeNull();
    h.tick(200);
    for (const d of h.drivers) {
      expect((d as PartitionDriver).state.offsets.get({ kind: 'consumer', key: 9 })).toBe(1n);
      expect((d as PartitionDriver).state.offsets.get({ kind: 'consumer', key: 8 })).toBeUndefined();
    }
    const journaled = h.driver(0).replica.journalFrame(2);
    if (journaled === null) throw new Error('op 2 not journaled');
    const repair = journaled.slice();
    repair[60] = 19;
    repair[256 + 6] = (repair[256 + 6] as number) ^ 0x40; // the offset's low byte
    expect(h.driver(2).onMessage(repair)).toBe('repair_body_offset_body_seal_mismatch');
  });
});

describe('helpers', () => {
  it('echoReply patches operation and timestamp of a Reply copy', () => {
    const frame = new Uint8Array(256);
    frame[60] = 8;
    frame[208] = 64;
    const out = echoReply(frame, { operation: 132, timestamp: 99n });
    expect(out[208]).toBe(132);
    expect(new DataView(out.buffer).getBigUint64(192, true)).toBe(99n);
    expect(frame[208]).toBe(64);
  });

  it('client table checkpoint round-trips through the snapshot value', () => {
    const reply = new Uint8Array(256);
    reply[60] = 8;
    const entries = [{ slot: 3, client: (1n << 100n) + 5n, epoch: 1n << 40n, userId: 2, watermark: 7n, watermarkChecksum: 9n, reply }];
    const decoded = decodeClientTableSnapshot(encodeClientTableSnapshot(entries));
    expect(decoded.ok && decoded.entries).toEqual(entries);
    expect(decodeClientTableSnapshot([[[1, 'x']]]).ok).toBe(false);
  });
});
