/**
 * Crash consistency on REAL files: a child process appends to a metadata journal (fdatasync per
 * entry) and a partition log (page-cache writes, fdatasync by threshold) and reports every
 * acknowledgement as soon as the API returned; it is killed with SIGKILL at a random point; the
 * test process then recovers: every acknowledged journal op and partition offset must be there
 * and verify, nothing torn may be believed (torn tails are classified and truncated), and the
 * next run continues on top of the recovered files.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { MetadataJournal, PartitionStorage, RealDisk } from '../src/index.js';
import { appendFileSync, readdirSync } from 'node:fs';
import { makeBatch, makePrepares, tempDir } from './support/fixtures.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const WRITER = fileURLToPath(new URL('./support/crash-writer.ts', import.meta.url));
const RUNS = 10;

interface Acks {
  journal: number;
  partition: number;
  /** Torn bytes the writer's own boot recovery truncated (journal, partition). */
  tornAtBoot: [number, number];
}

function runAndKill(dir: string, seed: number, killAfterMs: number): Promise<Acks & { killed: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', WRITER, dir, String(seed)], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: Acks = { journal: 0, partition: 0, tornAtBoot: [0, 0] };
    let buffered = '';
    let stderr = '';
    let timer: NodeJS.Timeout | null = null;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const [kind, value, , tornJournal, tornPartition] = line.split(' ');
        if (kind === 'J') acks.journal = Number(value);
        else if (kind === 'P') acks.partition = Number(value);
        else if (kind === 'READY' && timer === null) {
          acks.tornAtBoot = [Number(tornJournal), Number(tornPartition)];
          timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (timer !== null) clearTimeout(timer);
      resolve({ ...acks, killed: signal === 'SIGKILL', stderr });
    });
  });
}

describe('crash consistency on real files (SIGKILL)', () => {
  it(`${RUNS} kill points: every acknowledged entry survives intact, torn tails are truncated`, async () => {
    const dir = tempDir('crash');
    const prng = new Prng(20_260_101);
    const disk = new RealDisk();
    let maxJournalAck = 0;
    let maxPartitionAck = 0;
    let tornJournal = 0;
    let tornPartition = 0;
    try {
      for (let run = 0; run < RUNS; run++) {
        const result = await runAndKill(dir.path, run + 1, prng.range(80, 600));
        expect(result.killed, result.stderr).toBe(true);
        maxJournalAck = Math.max(maxJournalAck, result.journal);
        maxPartitionAck = Math.max(maxPartitionAck, result.partition);
        if (result.tornAtBoot[0] > 0) tornJournal++;
        if (result.tornAtBoot[1] > 0) tornPartition++;

        const opened = MetadataJournal.open(disk, `${dir.path}/metadata`, { slots: 1 << 20 });
        if (!opened.ok) throw new Error(opened.error.message);
        const r = opened.value.recover(0);
        if (!r.ok || r.value.kind !== 'ok') throw new Error(`journal recovery refused after run ${run}`);
        const ops = r.value.entries.map((e) => e.op);
        expect(r.value.headOp).toBeGreaterThanOrEqual(maxJournalAck);
        expect(ops).toEqual(Array.from({ length: r.value.headOp }, (_, i) => i + 1));
        if (r.value.truncatedBytes > 0) tornJournal++;
        opened.value.close();

        const p = PartitionStorage.open(disk, `${dir.path}/partition`, { segmentSize: 8 << 20 });
        if (!p.ok) throw new Error(`partition refused after run ${run}: ${JSON.stringify(p.error)}`);
        const log = p.value.log;
        expect(log.nextOffset).toBeGreaterThanOrEqual(maxPartitionAck);
        if (p.value.report.segments.some((s) => s.truncatedBytes > 0)) tornPartition++;
        let expected = 0;
        for (;;) {
          const poll = p.value.reader.byOffset(expected, 5000);
          if (!poll.ok) throw new Error(`read failed: ${JSON.stringify(poll.error)}`);
          if (poll.value.messageCount === 0) break;
          expect(poll.value.firstOffset).toBe(expected);
          expected = poll.value.nextOffset;
        }
        expect(expected).toBe(log.nextOffset);
        p.value.close();

        // Every other run, leave a torn write behind as a kill mid-write would (a prefix of a
        // valid next entry / batch): the next recovery must classify and truncate it.
        if (run % 2 === 0) {
          const frame = makePrepares(r.value.headOp + 1, r.value.headOp + 1, 0n, 5000)[0] as Uint8Array;
          appendFileSync(`${dir.path}/metadata/journal.wal`, frame.subarray(0, prng.range(1, frame.length - 1)));
          const batch = makeBatch(log.nextOffset, 50, 1000);
          const active = readdirSync(`${dir.path}/partition`).filter((n) => n.endsWith('.log')).sort().at(-1) as string;
          appendFileSync(`${dir.path}/partition/${active}`, batch.subarray(0, prng.range(1, batch.length - 1)));
        }
      }
      expect(tornJournal).toBeGreaterThanOrEqual(RUNS / 2 - 1);
      expect(tornPartition).toBeGreaterThanOrEqual(RUNS / 2 - 1);
      expect(maxJournalAck).toBeGreaterThan(RUNS);
      expect(maxPartitionAck).toBeGreaterThan(RUNS);
      // Informational: how often a kill landed mid-write (torn tail classified and truncated).
      console.log(`crash-real: ${RUNS} kills, journal head ${maxJournalAck}, partition ${maxPartitionAck}, torn tails: journal ${tornJournal}, partition ${tornPartition}`);
    } finally {
      dir.remove();
    }
  }, 90_000);
});
