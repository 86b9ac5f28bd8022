import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Command,
  METADATA_GROUP,
  buildBatch,
  encodeFrame,
  sealHeader,
  stampBatch,
  type BatchMessage,
} from '@shoal/protocol';
import { MetadataJournal, PartitionStorage, RealDisk, mkdirDurable } from '@shoal/storage';
import { Prng } from '@shoal/stdx';
import { measureCases, row, throughputRatio } from '../measure.js';
import type { BenchRow, Suite } from '../suite.js';

const MESSAGES = 1000;
const PAYLOAD = 1024;
const TARGET_RATIO = 0.7;
const JOURNAL_BODY = 512;
const BATCHED_K = 8;
const OP_AT = 176;
const BASE_OFFSET_AT = 8;

/**
 * Storage on real files (a temp directory on the machine's disk, not tmpfs):
 *
 * 1. Partition append of one 1,000 × 1 KiB-message batch (≈1.05 MB) per op through
 *    `PartitionLog.append` (pwritev of the batch + pwrite of its index entry, fsync thresholds
 *    out of reach, 1 GiB segment so no rotation), against raw sequential `fs.writeSync` of the
 *    same bytes to another file, rounds interleaved. Before each op the batch's base_offset is
 *    rewritten in place to the log's next offset (append asserts contiguity; it does not re-hash).
 * 2. Metadata journal: `append` (pwrite + fdatasync) of a 768-byte prepare against a raw
 *    `writeSync` + `fdatasyncSync` loop of the same bytes; then k = 8 appends per fdatasync
 *    (`appendNoSync` × 8 + `sync`) against 8 raw writes + 1 fdatasync.
 * 3. Poll of 1,000 messages from a warm (page-cached) segment through `PartitionReader`:
 *    aligned on a batch (one whole batch, checksums verified) and from mid-batch (two slices).
 */
const suite: Suite = {
  name: 'storage',
  description: `partition append (${MESSAGES} × ${PAYLOAD} B batches) vs raw writeSync; journal fsynced appends vs raw fdatasync; poll`,
  run(settings) {
    const root = mkdtempSync(join(tmpdir(), 'shoal-bench-storage-'));
    try {
      return measure(root, settings);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};

function makeBatch(prng: Prng): Uint8Array {
  const messages: BatchMessage[] = Array.from({ length: MESSAGES }, (_, i) => ({
    id: prng.u128(),
    payload: prng.bytes(PAYLOAD),
    originTimestamp: 1_700_000_000_000_000n + BigInt(i),
  }));
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

function makePrepare(prng: Prng): Uint8Array {
  return sealHeader(
    encodeFrame(
      Command.Prepare,
      {
        cluster: 1n,
        view: 1,
        replica: 0,
        client: 7n,
        parent: 0n,
        requestChecksum: 0n,
        op: 1n,
        commit: 0n,
        timestamp: 1n,
        request: 1n,
        operation: 128,
        group: METADATA_GROUP,
        userId: 1,
      },
      prng.bytes(JOURNAL_BODY),
    ),
  );
}

function measure(root: string, settings: Parameters<Suite['run']>[0]): { rows: BenchRow[]; notes: string[] } {
  const prng = new Prng(11);
  const disk = new RealDisk();
  const batch = makeBatch(prng);
  const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);

  // 3 (run first, before the appends leave GBs of dirty pages behind). poll 1,000 messages from a warm segment
  const pollOpened = PartitionStorage.open(disk, join(root, 'poll'), { segmentSize: 1 << 30, readAheadBytesMax: 4 << 20 });
  if (!pollOpened.ok) throw new Error(JSON.stringify(pollOpened.error));
  const poll = pollOpened.value;
  const BATCHES = 16;
  for (let i = 0; i < BATCHES; i++) {
    const stamped = batch.slice();
    const s = stampBatch(stamped, { partitionId: 0n, baseOffset: BigInt(i * MESSAGES), baseTimestamp: BigInt(1000 + i) });
    if (!s.ok) throw new Error(s.reason);
    const out = poll.log.append([stamped]);
    if (!out.ok) throw new Error(out.error.message);
  }
  let k = 0;
  const pollRows = measureCases(
    [
      {
        name: 'poll 1,000 msgs (one whole batch, verified)',
        bytesPerOp: batch.length,
        op: () => {
          k = (k + 1) % BATCHES;
          const r = poll.reader.byOffset(k * MESSAGES, MESSAGES);
          if (!r.ok || r.value.messageCount !== MESSAGES) throw new Error(`poll failed: ${JSON.stringify(r.ok ? r.value.messageCount : r.error)}`);
          return r;
        },
      },
      {
        name: 'poll 1,000 msgs (mid-batch: 2 slices, verified)',
        bytesPerOp: batch.length,
        op: () => {
          k = (k + 1) % (BATCHES - 1);
          const r = poll.reader.byOffset(k * MESSAGES + 500, MESSAGES);
          if (!r.ok || r.value.messageCount !== MESSAGES) throw new Error(`poll failed: ${JSON.stringify(r.ok ? r.value.messageCount : r.error)}`);
          return r;
        },
      },
    ],
    settings,
  );
  poll.close();

  // 1. partition append vs raw writeSync
  const opened = PartitionStorage.open(disk, join(root, 'partition'), {
    segmentSize: 1 << 30,
    messagesRequiredToSave: 1 << 24,
    sizeOfMessagesRequiredToSave: 1 << 30,
  });
  if (!opened.ok) throw new Error(JSON.stringify(opened.error));
  const log = opened.value.log;
  const rawFd = openSync(join(root, 'raw.bin'), 'w');
  let rawPosition = 0;
  const appendRows = measureCases(
    [
      {
        name: 'PartitionLog.append (no fsync)',
        bytesPerOp: batch.length,
        op: () => {
          view.setBigUint64(BASE_OFFSET_AT, BigInt(log.nextOffset), true);
          const out = log.append([batch]);
          if (!out.ok) throw new Error(out.error.message);
          return out;
        },
      },
      {
        name: 'raw fs.writeSync',
        bytesPerOp: batch.length,
        op: () => {
          const n = writeSync(rawFd, batch, 0, batch.length, rawPosition);
          rawPosition += n;
          return n;
        },
      },
    ],
    settings,
  );
  closeSync(rawFd);
  log.close();
  rmSync(join(root, 'partition'), { recursive: true, force: true });
  rmSync(join(root, 'raw.bin'), { force: true });

  // 2. journal fsynced appends vs raw fdatasync
  mkdirDurable(disk, join(root, 'metadata'));
  const journalOpened = MetadataJournal.open(disk, join(root, 'metadata'), { slots: 1 << 20 });
  if (!journalOpened.ok) throw new Error(journalOpened.error.message);
  const journal = journalOpened.value;
  journal.recover(0);
  const frame = makePrepare(prng);
  const frameView = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  let op = 0;
  const nextFrame = (): Uint8Array => {
    op++;
    if (op % (1 << 20) === 0) {
      const drained = journal.drain(op - 1);
      if (!drained.ok) throw new Error('drain failed');
    }
    frameView.setBigUint64(OP_AT, BigInt(op), true);
    return frame;
  };
  const walFd = openSync(join(root, 'raw.wal'), 'w');
  let walPosition = 0;
  const journalRows = measureCases(
    [
      {
        name: 'MetadataJournal.append (fdatasync)',
        bytesPerOp: frame.length,
        op: () => {
          const out = journal.append(nextFrame());
          if (!out.ok) throw new Error('append failed');
          return out;
        },
      },
      {
        name: 'raw writeSync + fdatasync',
        bytesPerOp: frame.length,
        op: () => {
          walPosition += writeSync(walFd, frame, 0, frame.length, walPosition);
          fdatasyncSync(walFd);
          return walPosition;
        },
      },
      {
        name: `journal ${BATCHED_K} appends / fdatasync`,
        bytesPerOp: frame.length * BATCHED_K,
        op: () => {
          for (let i = 0; i < BATCHED_K; i++) {
            const out = journal.appendNoSync(nextFrame());
            if (!out.ok) throw new Error('append failed');
          }
          return journal.sync();
        },
      },
      {
        name: `raw ${BATCHED_K} writes / fdatasync`,
        bytesPerOp: frame.length * BATCHED_K,
        op: () => {
          for (let i = 0; i < BATCHED_K; i++) walPosition += writeSync(walFd, frame, 0, frame.length, walPosition);
          fdatasyncSync(walFd);
          return walPosition;
        },
      },
    ],
    settings,
  );
  closeSync(walFd);
  journal.close();


  const rows = [...appendRows, ...journalRows, ...pollRows];
  const appendRatio = throughputRatio(row(rows, 'PartitionLog.append (no fsync)'), row(rows, 'raw fs.writeSync'));
  const perSecond = (name: string, per = 1): string => ((1e9 / row(rows, name).nsPerOp) * per).toFixed(0);
  const pollWhole = row(rows, 'poll 1,000 msgs (one whole batch, verified)');
  const pollSliced = row(rows, 'poll 1,000 msgs (mid-batch: 2 slices, verified)');
  const notes = [
    `partition append / raw writeSync throughput: ${(appendRatio * 100).toFixed(0)}% (target >= ${TARGET_RATIO * 100}%): ${appendRatio >= TARGET_RATIO ? 'PASS' : 'BELOW TARGET'}`,
    `journal fsynced appends/s: ${perSecond('MetadataJournal.append (fdatasync)')} vs raw fdatasync loop ${perSecond('raw writeSync + fdatasync')}/s`,
    `journal with ${BATCHED_K} appends per fdatasync: ${perSecond(`journal ${BATCHED_K} appends / fdatasync`, BATCHED_K)} appends/s vs raw ${perSecond(`raw ${BATCHED_K} writes / fdatasync`, BATCHED_K)}/s`,
    `poll 1,000 × 1 KiB from a warm segment: ${(pollWhole.nsPerOp / 1000).toFixed(0)} µs (${(batch.length / pollWhole.nsPerOp * 1000).toFixed(0)} MB/s) whole batch; ${(pollSliced.nsPerOp / 1000).toFixed(0)} µs (${(batch.length / pollSliced.nsPerOp * 1000).toFixed(0)} MB/s) mid-batch`,
  ];
  return { rows, notes };
}

export default suite;
