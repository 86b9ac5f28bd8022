/**
 * Single-node shard scaling (issue 6 speed target): one `shoal-server` process, 1 KiB messages,
 * batches of 1,000, 8 partitions; acknowledged msgs/s, MB/s and batch latency p50/p99 with 1
 * shard and with 2 shards, in the same run, and their ratio.
 *
 *   npm run bench:node -- [--shards 1,2] [--sync relaxed,default] [--duration 8] [--warmup 2]
 *                         [--repeat 1] [--producers 8] [--in-flight 2] [--message-size 1024]
 *                         [--batch 1000] [--partitions 8] [--json FILE]
 *
 * `--data-root DIR` is where the data directories go (default the OS temp dir, on disk here);
 * `--data-root /dev/shm` (RAM) takes the disk's write bandwidth out of the measurement.
 *
 * `--repeat N` alternates the shard counts N times (1, 2, 1, 2, …) and reports each run plus the
 * median per configuration and the ratio of the medians: on a shared 2-core machine one run can
 * move by 2× with the neighbours' load.
 *
 * `--sync` picks the topic's fsync thresholds (Shoal writes every committed batch to the segment
 * before replying; fdatasync follows `messages_required_to_save` / `size_of_messages_required_to_save`):
 *   default  the topic defaults, 1,024 messages / 1 MiB: about one fdatasync (plus the partition
 *            frontier superblock) per 1 MB batch, so the disk's flush rate bounds the run;
 *   relaxed  16,777,216 messages / 1 GiB: syncs only on segment seal and shutdown, so the run
 *            measures the CPU path (decode, validate, consensus, stamp, write), which is what
 *            shards scale.
 *
 * Every configuration gets a fresh server and data directory. The client is lean (pre-built
 * frames, see producer.ts) and its CPU is reported beside the server's: on a 2-core machine they
 * compete.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ShoalClient } from '@shoal/client';
import {
  type BatchMessage, buildBatch, numericIdentifier, sendMessagesCommand,
} from '@shoal/protocol';
import { LeanProducer, type ProducerStats } from './producer.js';
import { startServer } from './server.js';

type SyncProfile = 'relaxed' | 'default';

interface Options {
  shards: number[];
  sync: SyncProfile[];
  repeat: number;
  dataRoot: string;
  durationS: number;
  warmupS: number;
  producers: number;
  inFlight: number;
  messageSize: number;
  batch: number;
  partitions: number;
  json: string | null;
}

function parse(argv: readonly string[]): Options {
  const o: Options = { shards: [1, 2], sync: ['relaxed', 'default'], repeat: 1, dataRoot: tmpdir(), durationS: 8, warmupS: 2, producers: 8, inFlight: 2, messageSize: 1024, batch: 1000, partitions: 8, json: null };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1] ?? '';
    switch (argv[i]) {
      case '--shards': o.shards = value.split(',').map(Number); break;
      case '--sync': o.sync = value.split(',').map((v) => {
        if (v !== 'relaxed' && v !== 'default') throw new Error(`--sync ${v}: relaxed or default`);
        return v;
      }); break;
      case '--duration': o.durationS = Number(value); break;
      case '--repeat': o.repeat = Number(value); break;
      case '--data-root': o.dataRoot = value; break;
      case '--warmup': o.warmupS = Number(value); break;
      case '--producers': o.producers = Number(value); break;
      case '--in-flight': o.inFlight = Number(value); break;
      case '--message-size': o.messageSize = Number(value); break;
      case '--batch': o.batch = Number(value); break;
      case '--partitions': o.partitions = Number(value); break;
      case '--json': o.json = value; break;
      default: throw new Error(`unknown flag ${argv[i]}`);
    }
  }
  return o;
}

export interface ConfigResult {
  readonly shards: number;
  readonly sync: SyncProfile;
  readonly messagesPerSecond: number;
  readonly megabytesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly batches: number;
  readonly serverCpuCores: number;
  readonly clientCpuCores: number;
  /** Producer connections each shard accepted (the kernel spreads accepts on the shared socket). */
  readonly connectionsPerShard: readonly number[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function bodiesFor(o: Options): { body: Uint8Array; messages: number; bytes: number }[] {
  const payload = new Uint8Array(o.messageSize).fill(0x61);
  const out: { body: Uint8Array; messages: number; bytes: number }[] = [];
  for (let partition = 0; partition < o.partitions; partition++) {
    const messages: BatchMessage[] = Array.from({ length: o.batch }, (_, i) => ({
      id: BigInt(partition * o.batch + i + 1), payload, originTimestamp: 1_700_000_000_000_000n,
    }));
    const built = buildBatch(messages, { maxMessages: o.batch, maxBytes: 64 * 1024 * 1024 });
    if (!built.ok) throw new Error(`batch: ${built.reason}`);
    const body = sendMessagesCommand.encodeRequest({
      streamId: numericIdentifier(0), topicId: numericIdentifier(0), partitioning: { kind: 'partition_id', partitionId: partition },
      messagesCount: o.batch, batch: built.value,
    });
    out.push({ body, messages: o.batch, bytes: o.batch * o.messageSize });
  }
  return out;
}

/** u64::MAX: a personal access token that never expires. */
const NEVER_EXPIRES = 0xFFFF_FFFF_FFFF_FFFFn;

const RELAXED = { messages_required_to_save: 16_777_216, size_of_messages_required_to_save: '1 GiB' } as const;

async function runConfig(o: Options, shards: number, sync: SyncProfile): Promise<ConfigResult> {
  const server = await startServer(shards, o.dataRoot);
  try {
    const admin = new ShoalClient({ address: `${server.host}:${server.port}`, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
    await admin.stream.create({ name: 'bench' });
    await admin.topic.create({ streamId: 0, name: 'load', partitionsCount: o.partitions, ...(sync === 'relaxed' ? { options: RELAXED } : {}) });
    // The metrics endpoint wants a personal access token (docs/operations.md "HTTP endpoints").
    const scrapeToken = await admin.token.create({ name: 'bench-scrape', expiry: NEVER_EXPIRES });
    await admin.destroy();
    const bodies = bodiesFor(o);
    // One after the other, like independent clients arriving: the kernel hands each accept to
    // whichever shard thread wakes first on the shared listening socket.
    const producers: LeanProducer[] = [];
    for (let k = 0; k < o.producers; k++) producers.push(await LeanProducer.open(server.host, server.port, BigInt(k + 1) << 64n));
    const stats: ProducerStats = { messages: 0, bytes: 0, latenciesMicros: [] };
    let phase: 'warmup' | 'measure' | 'done' = 'warmup';
    const running = producers.map((p, k) => {
      // Producer k cycles over the partitions k, k + producers, ...
      const mine = bodies.filter((_, partition) => partition % o.producers === k);
      return p.run(mine.length > 0 ? mine : bodies, o.inFlight, () => phase !== 'done', () => phase === 'measure', stats);
    });
    await new Promise((resolve) => setTimeout(resolve, o.warmupS * 1000));
    phase = 'measure';
    const cpu0 = server.cpuSeconds();
    const client0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await new Promise((resolve) => setTimeout(resolve, o.durationS * 1000));
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    const metrics = await (await fetch(server.metricsUrl, { headers: { authorization: `Bearer ${scrapeToken}` } })).text();
    const loopMax = metrics.split('\n').filter((l) => l.startsWith('shoal_event_loop_delay_seconds') && l.includes('quantile="max"'))
      .map((l) => `${/thread="([^"]+)"/.exec(l)?.[1]}=${(Number(l.slice(l.lastIndexOf(' ') + 1)) * 1000).toFixed(0)}ms`);
    if (process.env['SHOAL_BENCH_DEBUG'] !== undefined) console.log(`  event-loop delay max: ${loopMax.join(' ')}`);
    const connectionsPerShard = Array.from({ length: shards }, (_, s) => {
      const line = metrics.split('\n').find((l) => l.startsWith(`shoal_thread_connections{thread="shard-${s}"}`));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    });
    const cpu1 = server.cpuSeconds();
    const client1 = process.cpuUsage(client0);
    phase = 'done';
    const snapshot = { messages: stats.messages, bytes: stats.bytes, latencies: [...stats.latenciesMicros] };
    await Promise.all(running);
    for (const p of producers) p.close();
    const sorted = snapshot.latencies.sort((a, b) => a - b);
    return {
      shards,
      sync,
      messagesPerSecond: snapshot.messages / elapsed,
      megabytesPerSecond: snapshot.bytes / elapsed / 1e6,
      p50Ms: percentile(sorted, 50) / 1000,
      p99Ms: percentile(sorted, 99) / 1000,
      batches: sorted.length,
      serverCpuCores: (cpu1 - cpu0) / elapsed,
      clientCpuCores: (client1.user + client1.system) / 1e6 / elapsed,
      connectionsPerShard,
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  console.log(`single node: ${o.messageSize} B messages, batches of ${o.batch}, ${o.partitions} partitions, ${o.producers} producers × ${o.inFlight} in flight, ${o.warmupS}s warm-up + ${o.durationS}s, data in ${o.dataRoot}`);
  const results: ConfigResult[] = [];
  const medians: Record<string, { shards: number; sync: SyncProfile; messagesPerSecond: number; p50Ms: number; p99Ms: number }> = {};
  for (const sync of o.sync) {
    for (let round = 0; round < o.repeat; round++) {
      for (const shards of o.shards) {
        const r = await runConfig(o, shards, sync);
        results.push(r);
        console.log(
          `sync=${r.sync.padEnd(7)} shards=${r.shards}  ${Math.round(r.messagesPerSecond).toLocaleString('en-US')} msg/s  ${r.megabytesPerSecond.toFixed(1)} MB/s  ` +
          `p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${r.batches} batches; server ${r.serverCpuCores.toFixed(2)} cores, client ${r.clientCpuCores.toFixed(2)} cores; connections per shard ${r.connectionsPerShard.join('/')})`,
        );
      }
    }
    for (const shards of o.shards) {
      const runs = results.filter((r) => r.sync === sync && r.shards === shards);
      const median = (pick: (r: ConfigResult) => number): number => {
        const values = runs.map(pick).sort((a, b) => a - b);
        return values[Math.floor(values.length / 2)] as number;
      };
      medians[`${sync}/${shards}`] = { shards, sync, messagesPerSecond: median((r) => r.messagesPerSecond), p50Ms: median((r) => r.p50Ms), p99Ms: median((r) => r.p99Ms) };
      const m = medians[`${sync}/${shards}`];
      if (o.repeat > 1 && m !== undefined) {
        console.log(`sync=${sync.padEnd(7)} shards=${shards}  median of ${runs.length}: ${Math.round(m.messagesPerSecond).toLocaleString('en-US')} msg/s  ${(m.messagesPerSecond * o.messageSize / 1e6).toFixed(1)} MB/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms`);
      }
    }
    const one = medians[`${sync}/1`];
    const two = medians[`${sync}/2`];
    if (one !== undefined && two !== undefined) {
      console.log(`sync=${sync}: ratio 2 shards / 1 shard = ${(two.messagesPerSecond / one.messagesPerSecond).toFixed(2)} (target >= 1.6)`);
    }
  }
  if (o.json !== null) writeFileSync(o.json, `${JSON.stringify({ options: o, results, medians }, null, 2)}\n`);
}

await main();
