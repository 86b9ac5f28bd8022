/**
 * The hot-path metrics pieces: the typed-array histogram and its prom-client rendering (summed
 * over threads), request timing matched by the echoed operation and timestamp (replies out of
 * order, evictions, requests never answered), the replication round-trip tracker on real
 * Prepare / PrepareOk frames, and the committed-reply test of the commit timer.
 */
import { describe, expect, it } from 'vitest';
import {
  Command, ClientCommand, CommandCode, COMMAND_OFFSET, OFFSET_COMMAND, OFFSET_REPLICA, Operation, PREPARE_LAYOUT, PREPARE_OK_LAYOUT,
  encodeEvictionHeader, encodeReplyHeader, encodeRequestHeader,
} from '@shoal/protocol';
import { HistogramFamily, LATENCY_BUCKETS_SECONDS, LatencyHistogram } from '../src/metrics/histogram.js';
import { histogramMetric, renderExposition } from '../src/metrics/exposition.js';
import { ThreadMetrics } from '../src/metrics/thread-metrics.js';
import { ReplicationTimer } from '../src/metrics/replication-timer.js';
import { isCommittedReply } from '../src/metrics/commit-timer.js';
import { RequestTiming } from '../src/client-plane/request-timing.js';

describe('LatencyHistogram', () => {
  it('puts each observation in the first bucket whose bound holds it, the rest in +Inf', () => {
    const h = new LatencyHistogram();
    h.observeMs(0.01); // 10 µs → le 0.00005
    h.observeMs(1); // exactly 1 ms → le 0.001
    h.observeMs(1.0001); // just above → le 0.0025
    h.observeMs(60_000); // above 10 s → +Inf
    h.observeMs(-5); // a clock step back counts as 0
    const at = (seconds: number): number => h.counts[LATENCY_BUCKETS_SECONDS.indexOf(seconds)] as number;
    expect(at(0.00005)).toBe(2);
    expect(at(0.001)).toBe(1);
    expect(at(0.0025)).toBe(1);
    expect(h.counts[LATENCY_BUCKETS_SECONDS.length]).toBe(1);
    expect(h.count).toBe(5);
    expect(h.sumMs).toBeCloseTo(60_002.0101, 6);
  });
});

describe('histogram exposition', () => {
  it('renders cumulative buckets and sums the same series of several threads', async () => {
    const a = new HistogramFamily('x_seconds', 'X.', ['command']);
    const b = new HistogramFamily('x_seconds', 'X.', ['command']);
    a.child('send').observeMs(0.2);
    a.child('send').observeMs(3);
    b.child('send').observeMs(20_000);
    b.child('poll').observeMs(0.2);
    a.child('idle'); // never observed: not exported
    const text = await renderExposition([[histogramMetric(a.snapshot())], [histogramMetric(b.snapshot())]]);
    const line = (s: string): number => Number((text.split('\n').find((l) => l.startsWith(s)) ?? 'x NaN').split(' ').pop());
    expect(text).toContain('# TYPE x_seconds histogram');
    expect(line('x_seconds_bucket{command="send",le="0.00025"}')).toBe(1);
    expect(line('x_seconds_bucket{command="send",le="0.005"}')).toBe(2);
    expect(line('x_seconds_bucket{command="send",le="10"}')).toBe(2);
    expect(line('x_seconds_bucket{command="send",le="+Inf"}')).toBe(3);
    expect(line('x_seconds_count{command="send"}')).toBe(3);
    expect(line('x_seconds_sum{command="send"}')).toBeCloseTo(20.0032, 6);
    expect(line('x_seconds_count{command="poll"}')).toBe(1);
    expect(text).not.toContain('command="idle"');
  });

  it('labels unknown command codes `unknown` (no series per junk code)', () => {
    const m = new ThreadMetrics();
    m.request(CommandCode.SendMessages).observeMs(1);
    m.request(0xdead_beef).observeMs(1);
    m.request(0xbeef).observeMs(1);
    const labels = m.snapshot()[0]?.series.map((s) => [s.labels['command'], s.count]);
    expect(labels).toEqual([['send_messages', 1], ['unknown', 2]]);
  });
});

function request(operation: number, timestamp: bigint): Uint8Array {
  return encodeRequestHeader({ size: 256, client: 7n, operation, timestamp, request: 1n });
}

function reply(operation: number, timestamp: bigint, op = 0n): Uint8Array {
  return encodeReplyHeader({ size: 256, cluster: 1n, view: 0, replica: 0, client: 7n, operation, timestamp, request: 1n, op });
}

describe('RequestTiming', () => {
  const sink = (): { seen: number[]; observe(command: number): void } => {
    const seen: number[] = [];
    return { seen, observe: (command: number) => seen.push(command) };
  };

  it('observes a request answered during its own handling at once', () => {
    const s = sink();
    const t = new RequestTiming(s);
    t.begin(request(Operation.NonReplicated, 5n));
    t.replied(reply(Operation.NonReplicated, 5n), 1);
    t.end(1, false, 0);
    expect(s.seen).toEqual([1]);
    expect(t.parked).toBe(0);
  });

  it('matches later replies to their own requests even out of order', () => {
    const s = sink();
    const t = new RequestTiming(s);
    for (const [code, ts] of [[160, 1n], [132, 2n], [160, 3n]] as const) {
      t.begin(request(code === 160 ? Operation.SendMessages : Operation.CreateTopic, ts));
      t.end(code, true, Number(ts));
    }
    expect(t.parked).toBe(3);
    t.replied(reply(Operation.SendMessages, 3n), 0);
    t.replied(reply(Operation.CreateTopic, 2n), 0);
    // A reply nobody waits for (another timestamp) and an eviction change nothing.
    t.replied(reply(Operation.SendMessages, 99n), 0);
    t.replied(encodeEvictionHeader({ cluster: 1n, view: 0, replica: 0, client: 7n, reason: 1 }), 0);
    expect(s.seen).toEqual([160, 132]);
    t.replied(reply(Operation.SendMessages, 1n), 0);
    expect(s.seen).toEqual([160, 132, 160]);
    expect(t.parked).toBe(0);
  });

  it('grows past its first slots and forgets unanswered requests once nothing is in flight', () => {
    const s = sink();
    const t = new RequestTiming(s);
    for (let i = 0; i < 100; i++) {
      t.begin(request(Operation.SendMessages, BigInt(i)));
      t.end(160, true, 1000);
      if (i % 2 === 0) t.replied(reply(Operation.SendMessages, BigInt(i)), 0);
    }
    expect(s.seen.length).toBe(50);
    expect(t.parked).toBe(50);
    t.settle();
    expect(t.parked).toBe(0);
    t.replied(reply(Operation.SendMessages, 1n), 0);
    expect(s.seen.length).toBe(50);
  });

  it('keeps at most the in-flight count parked on a connection that never drains', () => {
    const s = sink();
    const t = new RequestTiming(s);
    // Request 0 is never answered (an eviction); 10,000 later ones are, with 2 in flight throughout.
    t.begin(request(Operation.SendMessages, 0n));
    t.end(160, true, 1);
    for (let i = 1; i <= 10_000; i++) {
      t.begin(request(Operation.SendMessages, BigInt(i)));
      t.end(160, true, 2);
      t.replied(reply(Operation.SendMessages, BigInt(i)), 0);
      expect(t.parked).toBeLessThanOrEqual(2);
    }
    expect(s.seen.length).toBe(10_000);
    // Once more are in flight than the connection counts, the oldest (request 0) was dropped.
    t.begin(request(Operation.SendMessages, 20_000n));
    t.end(160, true, 1);
    expect(t.parked).toBe(1);
    t.replied(reply(Operation.SendMessages, 0n), 0);
    expect(s.seen.length).toBe(10_000);
    t.replied(reply(Operation.SendMessages, 20_000n), 0);
    expect(s.seen.length).toBe(10_001);
  });

  it('does not observe a request that ends unanswered with nothing in flight', () => {
    const s = sink();
    const t = new RequestTiming(s);
    t.begin(request(Operation.SendMessages, 1n));
    t.end(160, false, 0);
    expect(s.seen).toEqual([]);
    expect(t.parked).toBe(0);
  });
});

function replicaFrame(command: number, opAt: number, op: number, replica: number): Uint8Array {
  const frame = new Uint8Array(256);
  frame[OFFSET_COMMAND] = command;
  frame[OFFSET_REPLICA] = replica;
  new DataView(frame.buffer).setBigUint64(opAt, BigInt(op), true);
  return frame;
}

describe('ReplicationTimer', () => {
  it('times each peer\'s first PrepareOk from the first send of the op', () => {
    const metrics = new ThreadMetrics();
    const timer = new ReplicationTimer(metrics, 'partition');
    const prepare = (op: number): Uint8Array => replicaFrame(Command.Prepare, PREPARE_LAYOUT.op.offset, op, 0);
    const ok = (op: number, from: number): Uint8Array => replicaFrame(Command.PrepareOk, PREPARE_OK_LAYOUT.op.offset, op, from);
    timer.sent(prepare(2 ** 40 + 5)); // a large op: read as a u64, not a u32
    timer.sent(prepare(2 ** 40 + 5)); // a retransmit
    timer.received(ok(2 ** 40 + 5, 1));
    timer.received(ok(2 ** 40 + 5, 1)); // a duplicate ack
    timer.received(ok(2 ** 40 + 5, 2));
    timer.received(ok(6, 1)); // never sent from here
    timer.received(replicaFrame(Command.Commit, PREPARE_OK_LAYOUT.op.offset, 5, 1)); // not an ack
    const series = metrics.snapshot().find((f) => f.name === 'shoal_replication_round_trip_seconds')?.series ?? [];
    expect(series.map((s) => [s.labels['plane'], s.labels['peer'], s.count])).toEqual([['partition', '1', 1], ['partition', '2', 1]]);
  });
});

describe('isCommittedReply', () => {
  it('is true for a Reply of a committed op only', () => {
    expect(isCommittedReply(reply(Operation.SendMessages, 1n, 42n))).toBe(true);
    expect(isCommittedReply(reply(Operation.SendMessages, 1n, 0n))).toBe(false);
    const eviction = encodeEvictionHeader({ cluster: 1n, view: 0, replica: 0, client: 7n, reason: 1 });
    expect(eviction[COMMAND_OFFSET]).toBe(ClientCommand.Eviction);
    expect(isCommittedReply(eviction)).toBe(false);
  });
});
