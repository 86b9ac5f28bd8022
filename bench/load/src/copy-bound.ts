import { type Socket, connect } from 'node:net';
import { ManagedProcess } from './processes.js';

/**
 * The copy bound: loopback TCP throughput between two processes with 64 KiB writes, measured in
 * the same run as the benchmark. A replicated write crosses loopback three times (client →
 * primary → backup → backup, with the two backup sends sharing the primary's copy budget), so
 * one third of it is the most a 3-replica cluster could move on this machine: Shoal's batch-1,000
 * throughput is reported as a percentage of that.
 *
 * The sink is a separate Node process (it reads and discards, counts bytes, and when the sender
 * half-closes it answers with the count); the sender writes 64 KiB chunks for `roundMs`, obeying
 * back-pressure, then waits for the count. Several rounds; the median is the figure.
 */
const CHUNK_BYTES = 64 * 1024;

const SINK_SOURCE = `
const net = require('node:net');
const server = net.createServer((socket) => {
  let bytes = 0;
  socket.on('data', (chunk) => { bytes += chunk.length; });
  socket.on('end', () => { socket.end(String(bytes)); });
});
server.listen(0, '127.0.0.1', () => { process.stdout.write('PORT ' + server.address().port + '\\n'); });
process.on('SIGTERM', () => process.exit(0));
`;

export interface CopyBoundResult {
  /** Median loopback throughput, MB/s (10^6 bytes). */
  readonly loopbackMBps: number;
  /** One third of it: the replicated path's bound. */
  readonly boundMBps: number;
  readonly rounds: readonly number[];
  readonly chunkBytes: number;
}

async function round(port: number, roundMs: number): Promise<number> {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const chunk = Buffer.alloc(CHUNK_BYTES, 0x5a);
  const started = performance.now();
  const deadline = started + roundMs;
  while (performance.now() < deadline) {
    if (!socket.write(chunk)) await new Promise<void>((resolve) => socket.once('drain', () => resolve()));
  }
  const answer = new Promise<number>((resolve, reject) => {
    let text = '';
    socket.on('data', (data: Buffer) => {
      text += data.toString();
    });
    socket.once('end', () => resolve(Number(text)));
    socket.once('error', reject);
  });
  socket.end();
  const bytes = await answer;
  const seconds = (performance.now() - started) / 1000;
  socket.destroy();
  return bytes / seconds / 1e6;
}

export async function measureCopyBound(options: { rounds?: number; roundMs?: number } = {}): Promise<CopyBoundResult> {
  const sink = new ManagedProcess('copy-bound sink', process.execPath, ['-e', SINK_SOURCE]);
  try {
    await sink.waitForOutput(/PORT \d+/, 10_000);
    const port = Number(/PORT (\d+)/.exec(sink.output)?.[1]);
    const rounds: number[] = [];
    for (let i = 0; i < (options.rounds ?? 3); i++) rounds.push(await round(port, options.roundMs ?? 700));
    const sorted = [...rounds].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    return { loopbackMBps: median, boundMBps: median / 3, rounds, chunkBytes: CHUNK_BYTES };
  } finally {
    await sink.stop(1000);
  }
}
