import { Histogram, Registry } from 'prom-client';
import { Command, CommandCode, OFFSET_COMMAND, OFFSET_REPLICA, Operation, PREPARE_LAYOUT, PREPARE_OK_LAYOUT, encodeReplyHeader, encodeRequestHeader } from '@shoal/protocol';
import { CommitTimer, LATENCY_BUCKETS_SECONDS, LatencyHistogram, ReplicationTimer, RequestTiming, ThreadMetrics } from '@shoal/runtime';
import { measureCases, row } from '../measure.js';
import type { Suite } from '../suite.js';

/**
 * What the metrics instrumentation costs per request on the hot path (docs/operations.md "How
 * metrics leave the workers"): the end-to-end request timing of the receiving shard (answered at
 * once, or parked behind 7 others and matched on its reply), the owner's commit timer, the
 * replication round-trip tracker (one Prepare out, two PrepareOk in: a 3-node primary), each
 * with its histogram observation and clock reads; next to prom-client's own Histogram.observe,
 * which the typed-array histogram replaces on these paths.
 */
function replicaFrame(command: number, opAt: number, op: number, replica: number): Uint8Array {
  const frame = new Uint8Array(256);
  frame[OFFSET_COMMAND] = command;
  frame[OFFSET_REPLICA] = replica;
  new DataView(frame.buffer).setBigUint64(opAt, BigInt(op), true);
  return frame;
}

const suite: Suite = {
  name: 'metrics',
  description: 'hot-path instrumentation per request: request timing, commit timer, replication round trips, histograms',
  run(settings) {
    const metrics = new ThreadMetrics();
    const sink = { observe: (command: number, ms: number) => metrics.request(command).observeMs(ms) };
    const requests = Array.from({ length: 8 }, (_, i) => encodeRequestHeader({ size: 256, client: 7n, operation: Operation.SendMessages, timestamp: BigInt(1_700_000_000_000_000 + i), request: 1n }));
    const replies = Array.from({ length: 8 }, (_, i) => encodeReplyHeader({ size: 256, client: 7n, operation: Operation.SendMessages, timestamp: BigInt(1_700_000_000_000_000 + i), request: 1n, op: 42n }));
    const syncTiming = new RequestTiming(sink);
    const parkedTiming = new RequestTiming(sink);
    // Seven requests always in flight ahead of the measured one: its reply is found behind them.
    for (let i = 0; i < 7; i++) {
      parkedTiming.begin(requests[i] as Uint8Array);
      parkedTiming.end(CommandCode.SendMessages, true, i + 1);
    }
    const commit = new CommitTimer(metrics, 'partition');
    const replication = new ReplicationTimer(metrics, 'partition');
    // Frames for 256 consecutive ops, built up front (the tracker keeps 128 slots: each lap reuses them).
    const OPS = 256;
    const prepares = Array.from({ length: OPS }, (_, i) => replicaFrame(Command.Prepare, PREPARE_LAYOUT.op.offset, 1000 + i, 0));
    const oks1 = Array.from({ length: OPS }, (_, i) => replicaFrame(Command.PrepareOk, PREPARE_OK_LAYOUT.op.offset, 1000 + i, 1));
    const oks2 = Array.from({ length: OPS }, (_, i) => replicaFrame(Command.PrepareOk, PREPARE_OK_LAYOUT.op.offset, 1000 + i, 2));
    let op = 0;
    const ours = new LatencyHistogram();
    const registry = new Registry();
    const prom = new Histogram({ name: 'x_seconds', help: 'x', labelNames: ['command'], buckets: [...LATENCY_BUCKETS_SECONDS], registers: [registry] });
    const promChild = prom.labels('send_messages');
    let v = 0;
    const rows = measureCases([
      {
        name: 'request timing, answered during its frame',
        op: () => {
          syncTiming.begin(requests[7] as Uint8Array);
          syncTiming.replied(replies[7] as Uint8Array, CommandCode.SendMessages);
          syncTiming.end(CommandCode.SendMessages, false, 0);
        },
      },
      {
        name: 'request timing, parked behind 7, reply matched',
        op: () => {
          parkedTiming.begin(requests[7] as Uint8Array);
          parkedTiming.end(CommandCode.SendMessages, true, 8);
          parkedTiming.replied(replies[7] as Uint8Array, 0);
        },
      },
      { name: 'commit timer (committed reply, observe)', op: () => commit.replied(replies[0] as Uint8Array, 1) },
      {
        name: 'replication: 1 Prepare out, 2 PrepareOk in',
        op: () => {
          op = (op + 1) % OPS;
          replication.sent(prepares[op] as Uint8Array);
          replication.received(oks1[op] as Uint8Array);
          replication.received(oks2[op] as Uint8Array);
        },
      },
      { name: 'LatencyHistogram.observeMs', op: () => ours.observeMs((v = (v + 0.37) % 20)) },
      { name: 'prom-client Histogram child.observe', op: () => promChild.observe((v = (v + 0.00037) % 0.02)) },
      { name: 'performance.now()', op: () => performance.now() },
    ], settings);
    const ns = (name: string): number => row(rows, name).nsPerOp;
    const perBatch = ns('request timing, parked behind 7, reply matched') + ns('commit timer (committed reply, observe)') + ns('replication: 1 Prepare out, 2 PrepareOk in');
    return {
      rows,
      notes: [
        `per produced batch on a 3-node primary (request parked + commit + replication): ${perBatch.toFixed(0)} ns`,
        `prom-client observe = ${(ns('prom-client Histogram child.observe') / ns('LatencyHistogram.observeMs')).toFixed(1)}× the typed-array histogram`,
      ],
    };
  },
};

export default suite;
