/**
 * A corrupt metadata WAL record is the only evidence that its op may have been acknowledged, and
 * every rewrite of journal.wal (a suffix truncation, a drain) copies the indexed records alone.
 * Before, a rewrite after the boot scan erased the corrupt range, and the next boot saw a clean
 * WAL with a hole that was "never journaled": the op was no longer faulty and the DoViewChange
 * could nack it (helper-49). The boot now records the scan's faulty ops in journal.faulty first.
 */
import { describe, expect, it } from 'vitest';
import { Operation, createStreamCommand } from '@shoal/protocol';
import { coreOf } from '@shoal/consensus/testing';
import type { MetadataDriver } from '../src/index.js';
import { type Harness, metadataHarness } from './support/harness.js';

const WAL = '/data/metadata/journal.wal';

function login(h: Harness<MetadataDriver>, node: number, client: bigint): bigint {
  const token = 1000 + Number(client);
  h.driver(node).submitSession({ session: 'register', client, userId: 0, epoch: 0n, request: 0n, token });
  for (let i = 0; i < 200 && !h.sessions.some((s) => s.token === token); i++) h.tick();
  const result = h.sessions.find((s) => s.token === token);
  expect(result?.outcome).toBe('ok');
  return result?.epoch ?? 0n;
}

function createStream(h: Harness<MetadataDriver>, client: bigint, session: bigint, request: number): void {
  h.driver(0).onRequest({
    client, request: BigInt(request), session, requestChecksum: 0n, operation: Operation.CreateStream,
    body: createStreamCommand.encodeRequest({ name: `s${request}`, options: [] }), userId: 0, timestamp: 77n, token: 2000 + request,
  });
  h.flush();
  h.tick();
}

/** The byte position of a record's frame in a WAL: where its first 64 bytes occur. */
function positionOf(wal: Uint8Array, frame: Uint8Array): number {
  const needle = frame.subarray(0, 64);
  outer: for (let i = 0; i + needle.length <= wal.length; i++) {
    for (let j = 0; j < needle.length; j++) if (wal[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error('frame not found in the WAL');
}

/** A 3-replica metadata group where `client` created `streams` streams, settled. */
function withStreams(client: bigint, streams: number): Harness<MetadataDriver> {
  const h = metadataHarness(3);
  h.tick(5);
  const epoch = login(h, 0, client);
  for (let r = 1; r <= streams; r++) createStream(h, client, epoch, r);
  h.tick(20);
  return h;
}

/** Flips a stored bit of `frame`'s record in the (crashed) node's WAL, `into` bytes in. */
function damageRecord(h: Harness<MetadataDriver>, node: number, frame: Uint8Array, into: number): { at: number; walSize: number } {
  const disk = h.disks[node]!.inner;
  const fd = disk.open(WAL, 'read');
  const wal = new Uint8Array(disk.stat(WAL)!.size);
  disk.read(fd, wal, 0, wal.length, 0);
  disk.close(fd);
  const at = positionOf(wal, frame);
  disk.corruptAtRest(WAL, at + into);
  return { at, walSize: wal.length };
}

describe('metadata WAL damage outlives a rewrite', () => {
  it('a corrupt record found at boot stays faulty after the WAL is rewritten and the replica restarts again', () => {
    const h = withStreams(41n, 4);
    const head = h.driver(2).status.commitMin;
    expect(head).toBeGreaterThanOrEqual(4);
    const target = head - 2;
    const frame = h.driver(0).journal.read(target);
    if (!frame.ok || frame.value === null) throw new Error(`no op ${target} on replica 0`);

    h.crash(2);
    damageRecord(h, 2, frame.value, 100);

    const first = h.boot(2);
    expect(coreOf(first.replica).journal.faulty.has(target)).toBe(true);
    // A rewrite before anything repairs the op (here a truncation of the top op, as a boot that
    // drops its own unvouched proposal or a reconcile does), then another power loss.
    const cut = first.journal.truncateFrom(head);
    expect(cut.ok).toBe(true);
    h.crash(2);

    const second = h.boot(2);
    const read = second.journal.read(target);
    expect(read.ok && read.value).toBeNull(); // the rewrite dropped the corrupt record
    expect(coreOf(second.replica).journal.faulty.has(target)).toBe(true);
  });

  // Seed 1013767 of 5 (found by the simulator's ack oracle): one flipped bit on the boot read of
  // the last record made a durable, acknowledged prepare look torn; the truncation deleted it and
  // the replica's next DoViewChange nacked that committed op. The boot now reads the WAL again.
  it('a faulty boot read of the last record neither truncates it nor loses the op', () => {
    const h = withStreams(42n, 3);
    const head = h.driver(2).status.op;
    const held = h.driver(2).journal.read(head);
    if (!held.ok || held.value === null) throw new Error(`no op ${head} on replica 2`);
    const frame = held.value;

    h.crash(2);
    const disk = h.disks[2]!.inner;
    const fd = disk.open(WAL, 'read');
    const wal = new Uint8Array(disk.stat(WAL)!.size);
    disk.read(fd, wal, 0, wal.length, 0);
    disk.close(fd);
    const at = positionOf(wal, frame);
    expect(at + frame.length).toBe(wal.length); // the last record
    disk.flipOnRead(WAL, at + frame.length - 1, 0x04); // the first boot read of it, in its body

    const booted = h.boot(2);
    expect(disk.faultLog.some((f) => f.kind === 'read_bit_flip')).toBe(true);
    const again = booted.journal.read(head);
    expect(again.ok && again.value !== null).toBe(true);
    expect(coreOf(booted.replica).journal.has(head)).toBe(true);
    expect(coreOf(booted.replica).journal.faulty.has(head)).toBe(false);
  });
});
