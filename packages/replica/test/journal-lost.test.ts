/**
 * A partition replica that booted without its journal (prior state, no journal file) must stay
 * `journalIncomplete` across a crash before it caught up: the first lost boot writes a new, empty
 * journal file, which made the next boot look whole. Seed 46 of 3: that replica then voted with
 * an empty log and its nack truncated a committed op (journal-lost-marker.ts).
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, Operation } from '@shoal/protocol';
import { PARTITION_JOURNAL_DIR, PARTITION_JOURNAL_RECORD_HEADER } from '@shoal/storage';
import { partitionHarness } from './support/harness.js';

const DIR = '/data/streams/1/topics/0/partitions/0';

function sendMessages(client: bigint, request: bigint, tag: number, token: number) {
  const body = buildBatch([{ id: BigInt(tag), payload: new TextEncoder().encode(`m${tag}`), originTimestamp: 1n }]);
  if (!body.ok) throw new Error(body.reason);
  return { client, request, session: 0n, requestChecksum: 0n, operation: Operation.SendMessages, body: body.value, userId: 0, timestamp: 5n, token };
}

describe('partition driver: a lost journal', () => {
  it('stays lost across a crash before catching up, and is forgotten once caught up', () => {
    const h = partitionHarness(3);
    h.tick(5);
    for (let i = 1; i <= 3; i++) {
      h.driver(0).onRequest(sendMessages(7n, BigInt(i), i, 100 + i));
      h.settle();
      h.tick();
    }
    h.tick(60);
    expect(h.driver(2).status.commitMin).toBe(3);
    h.crash(2);
    h.disks[2]?.inner.removeTree(`${DIR}/${PARTITION_JOURNAL_DIR}`);
    expect(h.boot(2).replica.role.journalIncomplete).toBe(true);
    // Down again before it heard from anyone: its new journal file holds nothing it acked.
    h.crash(2);
    expect(h.boot(2).replica.role.journalIncomplete).toBe(true);
    h.tick(2000);
    expect(h.driver(2).replica.role.journalIncomplete).toBe(false);
    expect(h.disks[2]?.inner.stat(`${DIR}/journal-lost`)).toBeNull();
    h.crash(2);
    expect(h.boot(2).replica.role.journalIncomplete).toBe(false);
  });

  // Seed 500232 of 3: after a process kill a read flipped the magic of the record that followed
  // the journal's OPEN record; the boot reported nothing lost and the replica voted with an empty
  // log, so a view without the other holder of committed op 1 committed another op 1. Damage where
  // no crash cut a write leaves what was acked unbounded: the journal is lost (and stays lost).
  it('a journal damaged where no crash cut it (after a process kill) is lost, and stays lost until caught up', () => {
    const h = partitionHarness(3);
    h.tick(5);
    for (let i = 1; i <= 3; i++) {
      h.driver(0).onRequest(sendMessages(7n, BigInt(i), i, 100 + i));
      h.settle();
      h.tick();
    }
    h.tick(60);
    expect(h.driver(2).status.commitMin).toBe(3);
    // A process kill: the page cache keeps every write.
    h.drivers[2] = null;
    for (let k = h.network.length - 1; k >= 0; k--) if (h.network[k]?.to === 2 || h.network[k]?.from === 2) h.network.splice(k, 1);
    const disk = h.disks[2]?.inner;
    if (disk === undefined) throw new Error('no disk 2');
    const journalDir = `${DIR}/${PARTITION_JOURNAL_DIR}`;
    const path = `${journalDir}/${disk.readdir(journalDir)[0] ?? ''}`;
    const fd = disk.open(path, 'read');
    const head = new Uint8Array(PARTITION_JOURNAL_RECORD_HEADER);
    disk.read(fd, head, 0, head.length, 0);
    disk.close(fd);
    disk.corruptAtRest(path, PARTITION_JOURNAL_RECORD_HEADER + new DataView(head.buffer).getUint32(8, true));
    expect(h.boot(2).replica.role.journalIncomplete).toBe(true);
    expect(disk.stat(`${DIR}/journal-lost`)).not.toBeNull();
    h.drivers[2] = null; // killed again before it heard from anyone: the new journal file looks whole
    expect(h.boot(2).replica.role.journalIncomplete).toBe(true);
    h.tick(2000);
    expect(h.driver(2).replica.role.journalIncomplete).toBe(false);
    expect(disk.stat(`${DIR}/journal-lost`)).toBeNull();
  });
});
