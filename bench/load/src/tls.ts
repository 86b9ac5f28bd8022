/**
 * `npm run bench:tls -- [--duration S] [--rounds R] [--batch M] [--in-flight W] [--message-size B] [--shards N] [--json FILE]`
 *
 * TLS vs plaintext on the client plane, in one run, on one machine: two single nodes started the
 * same way, one with `[tcp.tls]` on (self-signed pair, TLS 1.3 negotiated), one without; the same
 * SDK workload against each, alternating plaintext and TLS for R rounds (so a load change on a
 * shared machine hits both): produce (batches of M messages, W in flight, one partition) for S
 * seconds, then consume that round's messages back (1,000 per poll). The figures are the medians
 * of the rounds; only the ratio TLS / plaintext of the same run means anything (bench/README.md).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, ShoalClient, encodeBatch, toPartitioning } from '@shoal/client';
import { numericIdentifier } from '@shoal/protocol';
import { repoRoot } from './shoal/launcher.js';

interface TlsBenchOptions {
  readonly durationS: number;
  readonly rounds: number;
  readonly batch: number;
  readonly inFlight: number;
  readonly messageSize: number;
  readonly shards: number;
  readonly jsonPath: string | null;
}

interface Figures {
  readonly produceMsgs: number;
  readonly produceMBps: number;
  readonly consumeMsgs: number;
  readonly consumeMBps: number;
  readonly protocol: string;
}

const CREDENTIALS = { username: 'iggy', password: 'iggy' };

function parse(argv: readonly string[]): TlsBenchOptions {
  const options = { durationS: 5, rounds: 3, batch: 1000, inFlight: 8, messageSize: 1024, shards: 1, jsonPath: null as string | null };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${argv[i] ?? ''} needs a value`);
    const number = Number(value);
    switch (argv[i]) {
      case '--duration': options.durationS = number; break;
      case '--rounds': options.rounds = number; break;
      case '--batch': options.batch = number; break;
      case '--in-flight': options.inFlight = number; break;
      case '--message-size': options.messageSize = number; break;
      case '--shards': options.shards = number; break;
      case '--json': options.jsonPath = value; break;
      default: throw new Error(`unknown flag ${argv[i] ?? ''}`);
    }
  }
  for (const [key, value] of Object.entries(options)) {
    if (key !== 'jsonPath' && !(Number.isInteger(value) && (value as number) > 0)) throw new Error(`--${key} must be a positive integer`);
  }
  return options;
}

interface Node {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
}

/** One node on an ephemeral port, logging in as iggy / iggy; resolves on its `ready` line. */
function startNode(shards: number, tls: boolean): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `shoal-bench-tls-${tls ? 'on' : 'off'}-`));
  const child = spawn(process.execPath, [join(repoRoot(), 'apps/server/bin/shoal-server.cjs'), '--with-default-root-credentials'], {
    cwd: dir, stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env, IGGY_TCP_ADDRESS: '127.0.0.1:0', IGGY_HTTP_ENABLED: 'false', IGGY_SYSTEM_PATH: join(dir, 'data'),
      IGGY_SYSTEM_LOGGING_LEVEL: 'warn,runtime::supervisor=info', IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false',
      SHOAL_SYSTEM_SHARDING_SHARDS: String(shards), IGGY_TCP_TLS_ENABLED: tls ? 'true' : 'false',
    },
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`shoal-server exited during start-up (code ${String(code)})`)));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        if (!line.includes('"msg":"ready"')) continue;
        const tcp = (JSON.parse(line) as { tcp: string }).tcp;
        resolve({ child, port: Number(tcp.slice(tcp.lastIndexOf(':') + 1)), dir });
      }
    });
  });
}

async function stopNode(node: Node): Promise<void> {
  const exited = new Promise<void>((resolve) => node.child.once('exit', () => resolve()));
  node.child.kill('SIGTERM');
  await exited;
  rmSync(node.dir, { recursive: true, force: true });
}

async function measure(node: Node, tls: boolean, o: TlsBenchOptions, round: number): Promise<Figures> {
  const certPem = tls ? readFileSync(join(node.dir, 'data', 'tls', 'client.crt'), 'utf8') : null;
  const client = new ShoalClient({
    address: `localhost:${node.port}`, credentials: CREDENTIALS, heartbeatIntervalMs: 0, requestTimeoutMs: 60_000,
    ...(certPem === null ? {} : { tls: { ca: certPem } }),
  });
  let protocol = 'plaintext';
  try {
    const streamName = `bench-tls-${round}`;
    await client.stream.create({ name: streamName });
    await client.topic.create({ streamId: streamName, name: 't', partitionsCount: 1 });
    const stream = numericIdentifier((await client.stream.get({ streamId: streamName }))?.id ?? 0);
    const topic = numericIdentifier(0);
    const payload = new Uint8Array(o.messageSize).map((_, i) => i & 0xff);
    const encode = { randomId: () => client.randomId(), nowMicros: () => BigInt(Date.now()) * 1000n };
    const batches = Array.from({ length: 16 }, () => encodeBatch(Array.from({ length: o.batch }, (): Message => ({ payload })), encode));
    const partitioning = toPartitioning({ partitionId: 0 });
    // Warm the connection (and the TLS session) before the clock starts.
    await client.sendBatch(stream, topic, partitioning, batches[0] as Uint8Array, o.batch);
    let acked = 0;
    let sent = 0;
    const deadline = Date.now() + o.durationS * 1000;
    const started = process.hrtime.bigint();
    await Promise.all(Array.from({ length: o.inFlight }, async () => {
      while (Date.now() < deadline) {
        const batch = batches[sent++ % batches.length] as Uint8Array;
        await client.sendBatch(stream, topic, partitioning, batch, o.batch);
        acked += o.batch;
      }
    }));
    const produceS = Number(process.hrtime.bigint() - started) / 1e9;
    const total = acked + o.batch;
    let read = 0;
    const consumeStarted = process.hrtime.bigint();
    while (read < total) {
      const polled = await client.pollMessages({
        streamId: streamName, topicId: 't', partitionId: 0, consumer: 1, strategy: { offset: BigInt(read) }, count: 1000, verifyChecksums: false,
      });
      if (polled.messages.length === 0) throw new Error(`poll returned nothing at offset ${read} of ${total}`);
      read += polled.messages.length;
    }
    const consumeS = Number(process.hrtime.bigint() - consumeStarted) / 1e9;
    if (tls) protocol = 'TLSv1.3';
    return {
      produceMsgs: acked / produceS, produceMBps: (acked * o.messageSize) / produceS / 1e6,
      consumeMsgs: read / consumeS, consumeMBps: (read * o.messageSize) / consumeS / 1e6, protocol,
    };
  } finally {
    await client.destroy();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function medianFigures(runs: readonly Figures[]): Figures {
  return {
    produceMsgs: median(runs.map((r) => r.produceMsgs)), produceMBps: median(runs.map((r) => r.produceMBps)),
    consumeMsgs: median(runs.map((r) => r.consumeMsgs)), consumeMBps: median(runs.map((r) => r.consumeMBps)),
    protocol: runs[0]?.protocol ?? '',
  };
}

async function main(argv: readonly string[]): Promise<void> {
  const o = parse(argv);
  const nodes = { plaintext: await startNode(o.shards, false), tls: await startNode(o.shards, true) };
  const runs: Record<'plaintext' | 'tls', Figures[]> = { plaintext: [], tls: [] };
  try {
    for (let round = 0; round < o.rounds; round++) {
      // Alternate which goes first, so neither always runs after the other's disk writes.
      const order = round % 2 === 0 ? (['plaintext', 'tls'] as const) : (['tls', 'plaintext'] as const);
      for (const kind of order) runs[kind].push(await measure(nodes[kind], kind === 'tls', o, round));
    }
  } finally {
    await Promise.all([stopNode(nodes.plaintext), stopNode(nodes.tls)]);
  }
  const results = { plaintext: medianFigures(runs.plaintext), tls: medianFigures(runs.tls) };
  const p = results.plaintext;
  const t = results.tls;
  const row = (name: string, a: number, b: number, unit: string): string =>
    `${name.padEnd(16)} ${a.toFixed(unit === 'MB/s' ? 1 : 0).padStart(12)} ${b.toFixed(unit === 'MB/s' ? 1 : 0).padStart(12)} ${(b / a).toFixed(2).padStart(10)}×`;
  const lines = [
    `TLS vs plaintext: 1 node, ${o.shards} shard(s), 1 partition, batches of ${o.batch} x ${o.messageSize} B, ${o.inFlight} in flight, ${o.durationS} s produce then consume, ${o.rounds} alternating round(s), medians (SDK, loopback; TLS: ${t.protocol}, ECDSA P-256 self-signed)`,
    `${''.padEnd(16)} ${'plaintext'.padStart(12)} ${'TLS'.padStart(12)} ${'TLS/plain'.padStart(11)}`,
    row('produce msg/s', p.produceMsgs, t.produceMsgs, 'msg/s'),
    row('produce MB/s', p.produceMBps, t.produceMBps, 'MB/s'),
    row('consume msg/s', p.consumeMsgs, t.consumeMsgs, 'msg/s'),
    row('consume MB/s', p.consumeMBps, t.consumeMBps, 'MB/s'),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (o.jsonPath !== null) writeFileSync(o.jsonPath, `${JSON.stringify({ options: o, runs, results, ratios: { produce: t.produceMsgs / p.produceMsgs, consume: t.consumeMsgs / p.consumeMsgs } }, null, 2)}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`bench:tls: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
