/**
 * Child process for crash-real.test.ts: appends to a metadata journal and a partition log on
 * real files as fast as it can, printing each acknowledgement AFTER the API returned:
 *
 *   J <op>           journal.append(op) returned ok (written + fdatasynced)
 *   P <nextOffset>   partition append returned ok (every offset < nextOffset acknowledged)
 *   READY <op> <next> <journal torn bytes> <partition torn bytes>   after its own recovery
 *
 * It resumes from whatever a previous (killed) run left, so kills compound. Usage:
 *   node --conditions=source --import tsx crash-writer.ts <dir> <seed>
 */
import { writeSync } from 'node:fs';
import { Prng } from '@shoal/stdx';
import { MetadataJournal, PartitionStorage, RealDisk, mkdirDurable } from '../../src/index.js';
import { checksumOf, makeBatch, makePrepares } from './fixtures.js';

const [dir, seedText] = process.argv.slice(2);
if (dir === undefined || seedText === undefined) throw new Error('usage: crash-writer <dir> <seed>');
const prng = new Prng(Number(seedText));
const disk = new RealDisk();

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

/** Journal body size of an op: mostly small, every 7th large so kills can land mid-write. */
export function bodyBytesOf(op: number): number {
  return op % 7 === 0 ? 700_000 + (op % 13) * 1000 : 100 + (op % 50);
}

mkdirDurable(disk, `${dir}/metadata`);
const opened = MetadataJournal.open(disk, `${dir}/metadata`, { slots: 1 << 20 });
if (!opened.ok) throw new Error(opened.error.message);
const journal = opened.value;
const recovered = journal.recover(0);
if (!recovered.ok || recovered.value.kind !== 'ok') throw new Error('journal recovery refused');
let op = recovered.value.headOp;
let parent = recovered.value.lastHeader === null ? 0n : checksumOf(recovered.value.lastHeader);

const partition = PartitionStorage.open(disk, `${dir}/partition`, { segmentSize: 8 << 20 });
if (!partition.ok) throw new Error(JSON.stringify(partition.error));
const log = partition.value.log;
const partitionTorn = partition.value.report.segments.reduce((n, seg) => n + seg.truncatedBytes, 0);
say(`READY ${op} ${log.nextOffset} ${recovered.value.truncatedBytes} ${partitionTorn}`);

for (;;) {
  op++;
  const frame = makePrepares(op, op, parent, bodyBytesOf(op), 1, op)[0] as Uint8Array;
  const appended = journal.append(frame);
  if (!appended.ok) throw new Error('journal append failed');
  parent = checksumOf(frame);
  say(`J ${op}`);

  const batches: Uint8Array[] = [];
  let next = log.nextOffset;
  const n = prng.range(1, 3);
  for (let i = 0; i < n; i++) {
    const count = prng.range(1, 120);
    batches.push(makeBatch(next, count, prng.range(16, 4096), 1_000_000 + next, next));
    next += count;
  }
  const out = log.append(batches);
  if (!out.ok) throw new Error('partition append failed');
  say(`P ${out.value.nextOffset}`);
}
