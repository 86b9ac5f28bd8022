import { type CpuUsage, type IdleBaseline, type NodeThreads, cpuBetween, cpuSnapshot, idleBaseline } from './cpu.js';
import { ExactlyOnceChecker, type ExactlyOnceVerdict } from './exactly-once.js';
import type { Workload } from './flags.js';
import { Histogram, type HistogramJson, type LatencySummary, latencySummary } from './histogram.js';
import type { Progress } from './progress.js';
import type { AckInfo, BenchTarget, ConsumerChannel, OutgoingRequest, ProducerChannel, RunSpec } from './target.js';

/**
 * One benchmark run: produce (warmup, then the measured phase), consume everything back, check
 * exactly-once. Shared by every target, so both systems see the same driver, pacing, clocks and
 * accounting.
 *
 * Produce: each producer has `inFlight` lanes; a lane sends one request (`batch` messages to one
 * partition, partitions taken round robin per producer), awaits its quorum acknowledgement, and
 * sends the next: at most `inFlight` requests per producer are outstanding. Latency is per
 * request, from the call until the acknowledgement, for requests sent in the measured phase.
 * Throughput:
 * - `--duration S`: acknowledgements received in the S-second window after the warmup (requests
 *   still in flight at its end are drained and checked, not counted);
 * - `--messages N`: the first N messages sent after the warmup, over the time from the end of the
 *   warmup to the last of their acknowledgements.
 * Consume: after the produce phase, consumers read every partition from the start (partitions
 * split round robin over the consumers) until all acknowledged messages are back; throughput is
 * messages over the wall time of the whole consume phase.
 */
export interface PhaseResult {
  readonly messages: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly msgsPerSec: number;
  readonly mbPerSec: number;
  /** Per request (produce) or per poll (consume), milliseconds. */
  readonly latency: LatencySummary;
  readonly histogram: HistogramJson;
  /** Messages per one-second interval, t relative to the start of the measured phase. */
  readonly timeline: readonly { readonly t: number; readonly msgsPerSec: number }[];
  readonly cpu: CpuUsage;
  readonly requests: number;
}

export interface RunResult {
  readonly system: string;
  readonly path: string;
  readonly description: string;
  readonly status: 'ok' | 'failed';
  readonly error: string | null;
  readonly produce: PhaseResult | null;
  readonly consume: PhaseResult | null;
  readonly warmupMessages: number;
  readonly exactlyOnce: ExactlyOnceVerdict | null;
  readonly failover?: FailoverResult;
}

export interface FailoverResult {
  readonly killedNode: number;
  readonly killedAddress: string;
  /** Milliseconds from SIGKILL to the first acknowledged write after it (on the new primary). */
  readonly firstAckAfterKillMs: number | null;
  readonly newPrimary: string | null;
  readonly resentRequests: number;
}

export interface DriverHooks {
  readonly progress: Progress;
  readonly label: string;
  /** PIDs whose CPU counts as the server's. */
  readonly serverPids: () => readonly number[];
  /** Named threads of those processes (per-thread CPU), when the system names them. */
  readonly serverThreads?: () => readonly NodeThreads[];
  /** Called once per second of the measured produce phase with the elapsed seconds (failover). */
  readonly onMeasuredSecond?: (elapsedS: number) => void;
  /** Observes every acknowledgement (failover timing). */
  readonly onAck?: (ack: AckInfo, at: number) => void;
  readonly idleMs?: number;
  /**
   * Before producing, measure each named thread's CPU with the cluster idle for this long (shard
   * scaling: ticks and timers are a per-second cost, not a per-message one; `netSecondsPerMillion`).
   */
  readonly idleBaselineMs?: number;
}

const MB = 1e6;

class Timeline {
  readonly #start: number;
  readonly #buckets = new Map<number, number>();

  constructor(start: number) {
    this.#start = start;
  }

  add(at: number, messages: number): void {
    const second = Math.floor((at - this.#start) / 1000);
    this.#buckets.set(second, (this.#buckets.get(second) ?? 0) + messages);
  }

  /** Whole seconds only: from the first to the last second with data (a partial last second is dropped when `end` cuts it). */
  samples(endAt: number | null): { t: number; msgsPerSec: number }[] {
    if (this.#buckets.size === 0) return [];
    const keys = [...this.#buckets.keys()];
    const first = Math.min(...keys);
    let last = Math.max(...keys);
    if (endAt !== null) last = Math.min(last, Math.floor((endAt - this.#start) / 1000) - 1);
    const out: { t: number; msgsPerSec: number }[] = [];
    for (let s = first; s <= last; s++) out.push({ t: s + 1, msgsPerSec: this.#buckets.get(s) ?? 0 });
    return out;
  }
}

export class RunAborted extends Error {
  override readonly name = 'RunAborted';
}

export async function runBenchmark(target: BenchTarget, run: RunSpec, hooks: DriverHooks, checker: ExactlyOnceChecker): Promise<RunResult> {
  const w = run.workload;
  const base = { system: target.system, path: target.path, description: target.description };
  const producers: ProducerChannel[] = [];
  const consumers: ConsumerChannel[] = [];
  let produce: PhaseResult | null = null;
  let consume: PhaseResult | null = null;
  let warmupMessages = 0;
  try {
    const idle = await measureIdle(hooks);
    for (let k = 0; k < w.producers; k++) producers.push(await target.openProducer(k));
    const produced = await producePhase(producers, w, checker, hooks, idle);
    produce = produced.result;
    warmupMessages = produced.warmupMessages;
    await Promise.all(producers.map((p) => p.close()));
    producers.length = 0;
    for (let k = 0; k < w.consumers; k++) consumers.push(await target.openConsumer(k));
    consume = await consumePhase(consumers, w, checker, hooks);
    const verdict = checker.verdict();
    return {
      ...base, status: verdict.ok ? 'ok' : 'failed', error: verdict.ok ? null : 'exactly-once check failed',
      produce, consume, warmupMessages, exactlyOnce: verdict,
    };
  } catch (error) {
    return {
      ...base, status: 'failed', error: error instanceof Error ? error.message : String(error), produce, consume, warmupMessages,
      exactlyOnce: produce === null ? null : checker.verdict(),
    };
  } finally {
    hooks.progress.done();
    await Promise.allSettled([...producers, ...consumers].map((c) => c.close()));
  }
}

/** The idle baseline (`hooks.idleBaselineMs`), after a short settle, or null when not asked or no thread is named. */
async function measureIdle(hooks: DriverHooks): Promise<IdleBaseline | null> {
  const ms = hooks.idleBaselineMs ?? 0;
  const table = hooks.serverThreads?.() ?? [];
  if (ms <= 0 || table.length === 0) return null;
  await new Promise((resolve) => setTimeout(resolve, 250));
  const start = cpuSnapshot(hooks.serverPids(), table);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return idleBaseline(start, cpuSnapshot(hooks.serverPids(), table));
}

function rate(messages: number, seconds: number): number {
  return seconds > 0 ? messages / seconds : 0;
}

async function producePhase(
  channels: readonly ProducerChannel[], w: Workload, checker: ExactlyOnceChecker, hooks: DriverHooks, idle: IdleBaseline | null,
): Promise<{ result: PhaseResult; warmupMessages: number }> {
  const start = performance.now();
  const measureStart = start + w.warmupS * 1000;
  const measureEnd = w.durationS === null ? Number.POSITIVE_INFINITY : measureStart + w.durationS * 1000;
  const histogram = new Histogram();
  const timeline = new Timeline(measureStart);
  let stop = false;
  let failure: unknown = null;
  let measuredIssued = 0;
  let measuredAcked = 0;
  let measuredRequests = 0;
  let warmupMessages = 0;
  let lastMeasuredAck = measureStart;
  let cpuStart: ReturnType<typeof cpuSnapshot> | null = null;
  let cpuEnd: ReturnType<typeof cpuSnapshot> | null = null;
  const nextSeq = new Array<number>(channels.length).fill(0);
  const nextPartition = channels.map((_, k) => k % w.partitions);

  const takeRequest = (producer: number): { request: OutgoingRequest; measured: boolean } | null => {
    if (stop) return null;
    const now = performance.now();
    const measured = now >= measureStart;
    if (measured && cpuStart === null) cpuStart = cpuSnapshot(hooks.serverPids(), hooks.serverThreads?.() ?? []);
    if (now >= measureEnd) return null;
    let count = w.batch;
    if (measured && w.messages !== null) {
      const left = w.messages - measuredIssued;
      if (left <= 0) return null;
      count = Math.min(count, left);
    }
    const firstSeq = nextSeq[producer] as number;
    nextSeq[producer] = firstSeq + count;
    const partition = nextPartition[producer] as number;
    nextPartition[producer] = (partition + 1) % w.partitions;
    if (measured) measuredIssued += count;
    checker.sent(producer, firstSeq, count);
    return { request: { producer, firstSeq, count, partition }, measured };
  };

  // Offered load (--rate): one shared schedule of request slots `batch / rate` apart; a lane takes
  // the next slot and waits for it. Falling behind earns no burst: a late slot starts now.
  const slotMs = w.rate > 0 ? (w.batch * 1000) / w.rate : 0;
  let nextSlot = start;
  const pace = async (): Promise<void> => {
    if (slotMs === 0) return;
    const now = performance.now();
    const at = Math.max(nextSlot, now);
    nextSlot = at + slotMs;
    if (at > now + 0.5) await new Promise((resolve) => setTimeout(resolve, at - now));
  };

  const lane = async (producer: number): Promise<void> => {
    const channel = channels[producer] as ProducerChannel;
    for (let next = (await pace(), takeRequest(producer)); next !== null; next = (await pace(), takeRequest(producer))) {
      const { request, measured } = next;
      const sentAt = performance.now();
      let ack: AckInfo;
      try {
        ack = await channel.send(request);
      } catch (error) {
        if (failure === null) failure = error;
        stop = true;
        return;
      }
      const at = performance.now();
      checker.acknowledged(request.producer, request.firstSeq, request.count, ack.partition, ack.offsets);
      hooks.onAck?.(ack, at);
      timeline.add(at, request.count);
      if (!measured) {
        warmupMessages += request.count;
        continue;
      }
      histogram.record((at - sentAt) * 1e6);
      measuredRequests++;
      if (at <= measureEnd) {
        measuredAcked += request.count;
        lastMeasuredAck = Math.max(lastMeasuredAck, at);
      }
    }
  };

  const total = w.durationS !== null ? w.warmupS + w.durationS : null;
  let secondsReported = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    const elapsed = (now - start) / 1000;
    const inWarmup = now < measureStart;
    const fraction = total !== null ? elapsed / total : w.messages === null ? null : inWarmup ? 0 : measuredIssued / w.messages;
    const recent = timeline.samples(now).at(-1)?.msgsPerSec ?? 0;
    hooks.progress.update({
      label: hooks.label,
      phase: inWarmup ? 'warmup' : 'produce',
      fraction,
      detail: `${Math.round(recent).toLocaleString('en-US')} msg/s  ${(measuredAcked + warmupMessages).toLocaleString('en-US')} acked`,
    });
    if (!inWarmup && hooks.onMeasuredSecond !== undefined) {
      const second = Math.floor((now - measureStart) / 1000);
      while (secondsReported < second) hooks.onMeasuredSecond(++secondsReported);
    }
  }, 200);
  try {
    await Promise.all(channels.flatMap((_, k) => Array.from({ length: w.inFlight }, () => lane(k))));
  } finally {
    clearInterval(ticker);
  }
  cpuEnd = cpuSnapshot(hooks.serverPids(), hooks.serverThreads?.() ?? []);
  if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure));
  const end = w.durationS === null ? lastMeasuredAck : Math.min(measureEnd, performance.now());
  const seconds = Math.max(1e-9, (end - measureStart) / 1000);
  const messages = measuredAcked;
  const bytes = messages * w.messageSize;
  return {
    warmupMessages,
    result: {
      messages,
      bytes,
      seconds,
      msgsPerSec: rate(messages, seconds),
      mbPerSec: rate(bytes, seconds) / MB,
      latency: latencySummary(histogram),
      histogram: histogram.toJSON(),
      timeline: timeline.samples(w.durationS === null ? null : measureEnd),
      cpu: cpuBetween(cpuStart ?? cpuEnd, cpuEnd, messages, idle),
      requests: measuredRequests,
    },
  };
}

async function consumePhase(channels: readonly ConsumerChannel[], w: Workload, checker: ExactlyOnceChecker, hooks: DriverHooks): Promise<PhaseResult> {
  const expected = checker.acknowledgedPerPartition();
  const totalExpected = [...expected.values()].reduce((a, b) => a + b, 0);
  const histogram = new Histogram();
  const start = performance.now();
  const timeline = new Timeline(start);
  const cpuStart = cpuSnapshot(hooks.serverPids(), hooks.serverThreads?.() ?? []);
  let messages = 0;
  let bytes = 0;
  let polls = 0;
  const sink = {
    message: (partition: number, offset: number, payload: Uint8Array): void => {
      checker.consumed(partition, offset, payload);
    },
    poll: (latencyNs: number | null, count: number, size: number): void => {
      if (latencyNs !== null) histogram.record(latencyNs);
      polls++;
      messages += count;
      bytes += size;
      timeline.add(performance.now(), count);
    },
  };
  const ticker = setInterval(() => {
    hooks.progress.update({
      label: hooks.label, phase: 'consume', fraction: totalExpected === 0 ? null : messages / totalExpected,
      detail: `${messages.toLocaleString('en-US')} / ${totalExpected.toLocaleString('en-US')} messages`,
    });
  }, 200);
  try {
    await Promise.all(channels.map(async (channel, c) => {
      for (let p = c; p < w.partitions; p += channels.length) {
        await channel.readPartition(p, expected.get(p) ?? 0, sink, hooks.idleMs ?? 10_000);
      }
    }));
  } finally {
    clearInterval(ticker);
  }
  const end = performance.now();
  const cpuEnd = cpuSnapshot(hooks.serverPids(), hooks.serverThreads?.() ?? []);
  const seconds = Math.max(1e-9, (end - start) / 1000);
  return {
    messages,
    bytes: messages * w.messageSize,
    seconds,
    msgsPerSec: rate(messages, seconds),
    mbPerSec: rate(messages * w.messageSize, seconds) / MB,
    latency: latencySummary(histogram),
    histogram: histogram.toJSON(),
    timeline: timeline.samples(null),
    cpu: cpuBetween(cpuStart, cpuEnd, messages),
    requests: polls,
  };
}
