import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, buildBatch, encodeFrame, sealHeader, type BatchMessage } from '@shoal/protocol';
import { PartitionJournal, PartitionStorage, RealDisk } from '@shoal/storage';
import { Prng } from '@shoal/stdx';
import { measureCases, row } from '../measure.js';
import type { Suite } from '../suite.js';

const OP_AT = 176;
const BASE_OFFSET_AT = 8;
const GROUP = (1n << 32n) | 1n;

/**
 * The partition journal's cost per prepare (docs/storage-partition-journal.md), on real files
 * (a temp directory on the machine's disk): `PartitionJournal.append` (record header + the frame
 * in one pwritev, XXH3 of the frame, one fdatasync per 512 appends for the reservation) of a
 * prepare carrying a 1 × 1 KiB batch and one carrying a 1,000 × 1 KiB batch, against what every
 * replica already does per op: `PartitionLog.append` of the same batch to the segment (pwritev +
 * index pwrite, fsync thresholds out of reach). Rounds interleaved; the ratio is the journal's
 * share on top of the segment write.
 */
const suite: Suite = {
  name: 'partition-journal',
  description: 'partition journal append per prepare (1 and 1,000 × 1 KiB) vs the segment append of the same batch',
  run(settings) {
    const root = mkdtempSync(join(tmpdir(), 'shoal-bench-pjournal-'));
    try {
      const disk = new RealDisk();
      const prng = new Prng(3);
      const cases = [1, 1000].flatMap((messages) => {
        const batch = makeBatch(prng, messages);
        const frame = prepareOf(batch);
        const dir = join(root, `p${messages}`);
        const journal = open(disk, dir);
        const storage = PartitionStorage.open(disk, join(root, `s${messages}`), { segmentSize: 1 << 30, messagesRequiredToSave: 1 << 30, sizeOfMessagesRequiredToSave: 2 ** 50 });
        if (!storage.ok) throw new Error('storage open');
        const log = storage.value.log;
        const view = new DataView(frame.buffer);
        const batchView = new DataView(batch.buffer);
        let op = 0;
        return [
          {
            name: `journal append, ${messages} × 1 KiB`,
            bytesPerOp: frame.length,
            op: () => {
              op += 1;
              view.setBigUint64(OP_AT, BigInt(op), true);
              const appended = journal.append(frame);
              if (!appended.ok) throw new Error(appended.error.message);
              if (op % 4096 === 0) journal.compact(op - 1);
            },
          },
          {
            name: `segment append, ${messages} × 1 KiB`,
            bytesPerOp: batch.length,
            op: () => {
              batchView.setBigUint64(BASE_OFFSET_AT, BigInt(log.nextOffset), true);
              const appended = log.append([batch]);
              if (!appended.ok) throw new Error(appended.error.message);
            },
          },
        ];
      });
      const rows = measureCases(cases, settings);
      const notes = [1, 1000].map((m) => {
        const j = row(rows, `journal append, ${m} × 1 KiB`).nsPerOp;
        const s = row(rows, `segment append, ${m} × 1 KiB`).nsPerOp;
        return `${m} × 1 KiB: journal ${(j / 1000).toFixed(1)} µs + segment ${(s / 1000).toFixed(1)} µs per op: the journal adds ${((j / s) * 100).toFixed(0)} % of the segment write`;
      });
      return { rows, notes };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};

function open(disk: RealDisk, dir: string): PartitionJournal {
  const opened = PartitionJournal.open(disk, dir, {}, 0);
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.value.journal;
}

function makeBatch(prng: Prng, count: number): Uint8Array {
  const messages: BatchMessage[] = Array.from({ length: count }, (_, i) => ({
    id: prng.u128(), payload: prng.bytes(1024), originTimestamp: 1_700_000_000_000_000n + BigInt(i),
  }));
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

function prepareOf(body: Uint8Array): Uint8Array {
  return sealHeader(encodeFrame(Command.Prepare, {
    cluster: 1n, view: 1, replica: 0, client: 7n, parent: 0n, requestChecksum: 0n, op: 1n, commit: 0n, timestamp: 1n,
    request: 1n, operation: 160, group: GROUP, userId: 0,
  }, body));
}

export default suite;
