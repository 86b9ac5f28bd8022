import { MessageChannel } from 'node:worker_threads';
import { type RingHandle, createRing, recordBytes } from '@shoal/ring';
import type { ConsumeMode } from '../ring/commands.js';
import { Peer } from '../ring/spawn.js';
import { formatBytes } from '../measure.js';
import type { BenchRow, BenchSettings, Suite } from '../suite.js';

/**
 * One SPSC ring between two worker threads against `MessagePort.postMessage` between the same
 * two threads (structured clone, and transfer of a fresh ArrayBuffer per message), at 256 B,
 * 1 KiB and 64 KiB; then the wake-up latency of a parked thread (ring vs MessagePort).
 *
 * Throughput: the sender stamps its start, the receiver its end (one process-wide monotonic
 * clock); ns/op is (end − start) / frames, so it includes filling and draining the pipe. Both
 * pipes are bounded alike: the ring holds RING_CAPACITY_BYTES, the MessagePort sender keeps at
 * most that many bytes (≤ 4096 messages) unacknowledged. Cases take turns round by round.
 *
 * Ring cases: the producer flushes every FRAMES_PER_FLUSH frames (one store, one notify only if
 * the consumer is parked); the consumer reads in batches and either touches each frame's view
 * (`view`), does the same without allocating a view (`in-place`), or copies each frame out to a
 * pooled buffer (`copy`).
 */

const SIZES = [256, 1024, 65536] as const;
const RING_CAPACITY_BYTES = 2 << 20;
const FRAMES_PER_FLUSH = 64;

interface ThroughputCase {
  readonly name: string;
  readonly frameBytes: number;
  /** Runs `frames` frames through; returns ns per frame. */
  run(frames: number): Promise<number>;
}

interface PaddingTally {
  padding: number;
  records: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function micros(ns: number): string {
  return `${(ns / 1000).toFixed(1)} µs`;
}

const suite: Suite = {
  name: 'ring',
  description: 'SPSC SharedArrayBuffer ring vs MessagePort between two workers: frames/s, GB/s, wake-up latency',
  async run(settings) {
    const sender = new Peer('ring-bench-sender');
    const receiver = new Peer('ring-bench-receiver');
    try {
      return await measure(sender, receiver, settings);
    } finally {
      await Promise.all([sender.stop(), receiver.stop()]);
    }
  },
};

async function measure(sender: Peer, receiver: Peer, settings: BenchSettings): Promise<{ rows: BenchRow[]; notes: string[] }> {
  // Rings: one per ring case, then the two directions of the ping-pong.
  const rings: RingHandle[] = [];
  const ringIndex = (): number => rings.push(createRing({ capacityBytes: RING_CAPACITY_BYTES })) - 1;
  const padding = new Map<number, PaddingTally>();

  const ringCase = (frameBytes: number, mode: ConsumeMode, framesPerFlush: number): ThroughputCase => {
    const ring = ringIndex();
    const flushNote = framesPerFlush === 1 ? ', flush/frame' : '';
    return {
      name: `ring ${mode}${flushNote}`,
      frameBytes,
      async run(frames) {
        receiver.send({ kind: 'ring-receive', ring, frames, mode });
        await receiver.next('ready');
        sender.send({ kind: 'ring-send', ring, frameBytes, frames, framesPerFlush });
        const sent = await sender.next('sent');
        const received = await receiver.next('received');
        const tally = padding.get(frameBytes) ?? { padding: 0, records: 0 };
        tally.padding += sent.paddingBytes;
        tally.records += sent.recordBytes;
        padding.set(frameBytes, tally);
        return (received.endNs - sent.startNs) / frames;
      },
    };
  };
  const portCase = (frameBytes: number, transfer: boolean): ThroughputCase => {
    const window = Math.max(16, Math.min(4096, Math.floor(RING_CAPACITY_BYTES / frameBytes)));
    return {
      name: transfer ? 'port transfer' : 'port clone',
      frameBytes,
      async run(frames) {
        receiver.send({ kind: 'port-receive', frames, ackEvery: window / 2 });
        await receiver.next('ready');
        sender.send({ kind: 'port-send', frameBytes, frames, transfer, window });
        const sent = await sender.next('sent');
        const received = await receiver.next('received');
        return (received.endNs - sent.startNs) / frames;
      },
    };
  };

  const cases: ThroughputCase[] = [];
  for (const size of SIZES) {
    cases.push(ringCase(size, 'view', FRAMES_PER_FLUSH));
    if (size === 256) cases.push(ringCase(size, 'in-place', FRAMES_PER_FLUSH), ringCase(size, 'view', 1));
    cases.push(ringCase(size, 'copy', FRAMES_PER_FLUSH), portCase(size, false), portCase(size, true));
  }
  const pingOut = ringIndex();
  const pingBack = ringIndex();

  sender.send({ kind: 'attach-rings', produce: rings.filter((_, i) => i !== pingBack), consume: [rings[pingBack] as RingHandle] });
  receiver.send({ kind: 'attach-rings', produce: [rings[pingBack] as RingHandle], consume: rings.filter((_, i) => i !== pingBack) });
  const channel = new MessageChannel();
  sender.send({ kind: 'attach-port', port: channel.port1 }, [channel.port1]);
  receiver.send({ kind: 'attach-port', port: channel.port2 }, [channel.port2]);
  for (let i = 0; i < 2; i++) await Promise.all([sender.next('attached'), receiver.next('attached')]);

  // Calibrate: frames per round so that one round lasts about 4 × roundMillis.
  const roundNs = Math.max(40, settings.roundMillis * 4) * 1e6;
  const frameCounts: number[] = [];
  for (const testCase of cases) {
    const probe = Math.max(500, Math.min(200_000, Math.floor((16 << 20) / testCase.frameBytes)));
    const nsPerFrame = await testCase.run(probe);
    frameCounts.push(Math.max(500, Math.round(roundNs / nsPerFrame)));
  }
  for (let w = 0; w < settings.warmupRounds; w++) {
    for (const [i, testCase] of cases.entries()) await testCase.run(frameCounts[i] as number);
  }
  padding.clear();
  const samples: number[][] = cases.map(() => []);
  for (let r = 0; r < settings.rounds; r++) {
    for (const [i, testCase] of cases.entries()) samples[i]?.push(await testCase.run(frameCounts[i] as number));
  }
  const rows: BenchRow[] = cases.map((testCase, i) => {
    const values = samples[i] ?? [];
    const nsPerOp = median(values);
    return {
      name: `${testCase.name.padEnd(22)} ${formatBytes(testCase.frameBytes).padStart(6)}`,
      nsPerOp,
      bytesPerOp: testCase.frameBytes,
      spread: (Math.max(...values) - Math.min(...values)) / nsPerOp,
    };
  });

  // Wake-up latency: ping-pong, every sample a frame that found its reader parked.
  const rounds = settings.rounds * 1000;
  receiver.send({ kind: 'ring-ping', out: 0, in: pingOut, rounds, serve: true });
  await receiver.next('ready');
  sender.send({ kind: 'ring-ping', out: pingOut, in: 0, rounds, serve: false });
  await sender.next('ready');
  const ringLatency = await collectLatencies(sender, receiver);
  receiver.send({ kind: 'port-ping', rounds, serve: true });
  await receiver.next('ready');
  sender.send({ kind: 'port-ping', rounds, serve: false });
  await sender.next('ready');
  const portLatency = await collectLatencies(sender, receiver);

  return { rows, notes: notes(cases, rows, padding, ringLatency, portLatency) };
}

async function collectLatencies(sender: Peer, receiver: Peer): Promise<{ sorted: Float64Array; rounds: number }> {
  const [a, b] = await Promise.all([sender.next('latencies'), receiver.next('latencies')]);
  const all = new Float64Array(a.samples.length + b.samples.length);
  all.set(a.samples);
  all.set(b.samples, a.samples.length);
  return { sorted: all.sort(), rounds: a.rounds + b.rounds };
}

function notes(
  cases: readonly ThroughputCase[],
  rows: readonly BenchRow[],
  padding: ReadonlyMap<number, PaddingTally>,
  ringLatency: { sorted: Float64Array; rounds: number },
  portLatency: { sorted: Float64Array; rounds: number },
): string[] {
  const find = (name: string, size: number): BenchRow | undefined => {
    const i = cases.findIndex((c) => c.name === name && c.frameBytes === size);
    return i < 0 ? undefined : rows[i];
  };
  const ratio = (a: BenchRow | undefined, b: BenchRow | undefined): string =>
    a === undefined || b === undefined ? '?' : `${(b.nsPerOp / a.nsPerOp).toFixed(1)}×`;
  const lines: string[] = [];
  for (const size of SIZES) {
    const view = find('ring view', size);
    const copy = find('ring copy', size);
    const clone = find('port clone', size);
    const transfer = find('port transfer', size);
    lines.push(
      `${formatBytes(size).padStart(6)}: frames/s ring view / port clone = ${ratio(view, clone)}, / port transfer = ${ratio(view, transfer)}; ` +
        `ring copy / port clone = ${ratio(copy, clone)}, / port transfer = ${ratio(copy, transfer)}`,
    );
  }
  const perFrameFlush = find('ring view, flush/frame', 256);
  lines.push(`256 B: flushing every frame instead of every ${FRAMES_PER_FLUSH}: ${ratio(find('ring view', 256), perFrameFlush)} the cost per frame`);
  lines.push(`256 B: in-place visitor (no view per frame) is ${ratio(find('ring in-place', 256), find('ring view', 256))} the view visitor`);
  for (const size of SIZES) {
    const tally = padding.get(size);
    const view = find('ring view', size);
    const copy = find('ring copy', size);
    const framesPerLap = RING_CAPACITY_BYTES / recordBytes(size);
    const copyNs = view !== undefined && copy !== undefined ? Math.max(0, copy.nsPerOp - view.nsPerOp) : Number.NaN;
    lines.push(
      `${formatBytes(size).padStart(6)}: padding = ${tally === undefined ? '?' : ((100 * tally.padding) / (tally.padding + tally.records)).toFixed(2)}% of ring bytes; ` +
        `a split-copy ring would instead copy ~1 frame per lap (${framesPerLap.toFixed(0)} frames): ${copyNs.toFixed(0)} ns per copy, ` +
        `${(copyNs / framesPerLap).toFixed(2)} ns/frame amortized`,
    );
  }
  const describe = (what: string, latency: { sorted: Float64Array; rounds: number }): string =>
    `wake-up latency, ${what}: p50 ${micros(percentile(latency.sorted, 50))}, p99 ${micros(percentile(latency.sorted, 99))} ` +
    `(${latency.sorted.length} of ${latency.rounds} frames found the reader parked)`;
  lines.push(describe('ring (publish → parked waitAsync consumer runs)', ringLatency));
  lines.push(describe('MessagePort (postMessage → idle receiver runs)', portLatency));
  return lines;
}

export default suite;
