/**
 * The soak (issue 12 item 8): a 3-node cluster of real `shoal-server` processes under steady
 * produce and consume for N minutes, one node restarted at a time every `faultEveryMs`
 * (alternately SIGTERM and SIGKILL, round robin, half a minute off the samples), sampled once a
 * minute and at the end:
 *
 *   per node: RSS (`shoal_process_resident_memory_bytes`), the worst event-loop delay of its
 *   workers since the last sample (`shoal_event_loop_delay_seconds`, p99 and max), view changes;
 *   the cluster: messages produced and consumed in the minute, the longest write gap (a stall
 *   of `STALL_MS` or more also prints the nodes' key log lines around it).
 *
 * Verdict: every acknowledged message on every node at the end (read separately, as the nemesis
 * does), no node exit the soak did not cause, and no memory growth beyond the bound within any
 * process lifetime: from its first warm sample to its last one, RSS may grow by at most
 * max(`GROWTH_FLOOR_MIB`, `GROWTH_RATIO` of the first). A sample is warm once the process has
 * served `WARM_TRAFFIC_MINUTES` sampled minutes with traffic: its buffers and pools fill to their
 * caps in the first minutes under load (a 40-minute run: external memory 12 → 62 MiB in three
 * minutes, then flat), and a minute without traffic (a stall) warms nothing.
 */
import type { TestCluster } from '../../integration/support/cluster.js';
import { readPartition } from '../../integration/support/produce.js';
import { metricSum } from '../../integration/support/server.js';
import { Hands } from '../nemesis/faults.js';
import { startCluster } from '../nemesis/start.js';
import { longestGap, sleep } from '../nemesis/workload.js';
import { Traffic, checkSoakCopy } from './traffic.js';

export interface SoakOptions {
  readonly minutes: number;
  readonly faultEveryMs: number;
  readonly rate: number;
  readonly sampleEveryMs?: number;
  readonly log: (line: string) => void;
}

export interface NodeSample {
  readonly node: number;
  /** Which process of this node (0 = the first, +1 per restart). */
  readonly life: number;
  readonly sinceStartMs: number;
  readonly rssMiB: number | null;
  /** V8 heap in use and memory outside it (buffers), summed over the node's threads: a leak shows in one of them, warm-up caches in external. */
  readonly heapMiB: number | null;
  readonly externalMiB: number | null;
  readonly loopP99Ms: number | null;
  readonly loopMaxMs: number | null;
  readonly viewChanges: number | null;
}

export interface Sample {
  readonly minute: number;
  readonly produced: number;
  readonly consumed: number;
  /** Longest time without an acknowledged batch in the minute (ms), and when it ended. */
  readonly longestGapMs: number;
  readonly gapEndedAt: number;
  readonly nodes: readonly NodeSample[];
}

export interface SoakReport {
  readonly samples: readonly Sample[];
  readonly restarts: number;
  readonly produced: number;
  readonly consumed: number;
  readonly problems: readonly string[];
  readonly growth: readonly string[];
  /** Key log lines of every node around each stall longer than `STALL_MS`. */
  readonly stalls: readonly string[];
}

/** The growth bound within one process lifetime (after its warm-up under traffic). */
export const GROWTH_FLOOR_MIB = 64;
export const GROWTH_RATIO = 0.25;
/** Sampled minutes with traffic a process serves before its RSS is the baseline. */
export const WARM_TRAFFIC_MINUTES = 3;
const STREAM = 'soak';
const TOPIC = 'steady';
const PARTITIONS = 3;
const CONVERGE_TIMEOUT_MS = 120_000;
const MIB = 1024 * 1024;
/** A write gap this long is a stall: the report shows the nodes' key log lines around it. */
export const STALL_MS = 5_000;

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log;
  const cluster = await startCluster({ nodes: 3 });
  const hands = new Hands(cluster, STREAM, log);
  const lives = [0, 0, 0];
  const startedAt = [Date.now(), Date.now(), Date.now()];
  const samples: Sample[] = [];
  let restarts = 0;
  try {
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: STREAM });
    await admin.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    await admin.destroy();
    const traffic = new Traffic({
      stream: STREAM, topic: TOPIC, partitions: PARTITIONS, lanes: 2, batchSize: 50, messageSize: 256, rate: options.rate,
      client: () => cluster.client({ requestTimeoutMs: 5_000, cluster: { retry: { retryUncertainWrites: false, budgetMs: 10_000, attemptsMax: 50 } } }),
    });
    traffic.start();
    const began = Date.now();
    const end = began + options.minutes * 60_000;
    const sampleEvery = options.sampleEveryMs ?? 60_000;
    let nextSample = began + sampleEvery;
    // Faults fall between samples (half a period off), so each sample sees a settled minute.
    let nextFault = began + options.faultEveryMs + sampleEvery / 2;
    let last = { produced: 0, consumed: 0, at: began };
    while (Date.now() < end - 1_000 && hands.crashes.length === 0) {
      const now = Date.now();
      if (now >= nextSample) {
        const sample = await takeSample(cluster, samples.length + 1, lives, startedAt, traffic, last);
        last = { produced: traffic.produced, consumed: traffic.consumed, at: Date.now() };
        samples.push(sample);
        log(formatSample(sample));
        nextSample += sampleEvery;
      } else if (now >= nextFault) {
        const node = restarts % 3;
        const signal = restarts % 2 === 0 ? 'SIGTERM' : 'SIGKILL';
        log(`restart node ${node} (${signal})`);
        await hands.kill(node, signal);
        await hands.start(node);
        lives[node] = (lives[node] as number) + 1;
        startedAt[node] = Date.now();
        restarts++;
        nextFault += options.faultEveryMs;
      } else {
        await sleep(Math.min(nextSample, nextFault, end) - now);
      }
    }
    // The last minute is sampled too (the loop ends on the minute it would have sampled).
    if (hands.crashes.length === 0) {
      const sample = await takeSample(cluster, samples.length + 1, lives, startedAt, traffic, last);
      samples.push(sample);
      log(formatSample(sample));
    }
    await traffic.stop();
    const problems = [
      ...hands.crashes.map((c) => `node ${c.node} exited (code ${c.code}, signal ${c.signal}):\n${c.tail}`),
      ...hands.failedStarts,
      ...traffic.consumerProblems,
      ...await verify(cluster, traffic),
    ];
    return {
      samples, restarts, produced: traffic.produced, consumed: traffic.consumed, problems, growth: growthProblems(samples),
      stalls: stallLines(cluster, samples),
    };
  } finally {
    hands.releaseAll();
    await cluster.stop();
  }
}

async function takeSample(
  cluster: TestCluster, minute: number, lives: readonly number[], startedAt: readonly number[], traffic: Traffic,
  last: { produced: number; consumed: number; at: number },
): Promise<Sample> {
  const gap = longestGap(traffic.ackTimes, last.at, Date.now());
  const nodes = await Promise.all(cluster.nodes.map(async (n): Promise<NodeSample> => {
    const base = { node: n.id, life: lives[n.id] as number, sinceStartMs: Date.now() - (startedAt[n.id] as number) };
    try {
      const text = await cluster.metrics(n.id);
      const loop = (quantile: string): number => maxOf(text, 'shoal_event_loop_delay_seconds', { quantile }) * 1000;
      return {
        ...base, rssMiB: metricSum(text, 'shoal_process_resident_memory_bytes') / MIB, loopP99Ms: loop('0.99'), loopMaxMs: loop('max'),
        heapMiB: metricSum(text, 'shoal_thread_heap_used_bytes') / MIB, externalMiB: metricSum(text, 'shoal_thread_external_bytes') / MIB,
        viewChanges: metricSum(text, 'shoal_consensus_events_total', { event: 'view_change' }),
      };
    } catch {
      return { ...base, rssMiB: null, heapMiB: null, externalMiB: null, loopP99Ms: null, loopMaxMs: null, viewChanges: null };
    }
  }));
  return { minute, produced: traffic.produced - last.produced, consumed: traffic.consumed - last.consumed, longestGapMs: gap.ms, gapEndedAt: gap.endsAt, nodes };
}

/** The largest sample of a metric whose labels contain `labels` (per-thread gauges: the worst thread). */
function maxOf(text: string, name: string, labels: Readonly<Record<string, string>>): number {
  let max = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    max = Math.max(max, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return max;
}

/** Every acknowledged message on every node, the nodes identical (after they converge). */
async function verify(cluster: TestCluster, traffic: Traffic): Promise<string[]> {
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  for (;;) {
    const problems: string[] = [];
    try {
      for (const node of cluster.nodes) {
        const client = cluster.nodeClient(node.id, { requestTimeoutMs: 10_000 });
        try {
          for (let p = 0; p < PARTITIONS; p++) problems.push(...checkSoakCopy(node.id, p, await readPartition(client, STREAM, TOPIC, p), traffic));
        } finally {
          await client.destroy().catch(() => undefined);
        }
      }
    } catch (error) {
      problems.push(`reading the nodes failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await sleep(3_000);
  }
}

/** Lifetimes whose RSS grew beyond the bound between their first warm sample and their last. */
export function growthProblems(samples: readonly Sample[]): string[] {
  const lifetimes = new Map<string, NodeSample[]>();
  const trafficMinutes = new Map<string, number>();
  for (const sample of samples) {
    for (const n of sample.nodes) {
      const key = `node ${n.node} process ${n.life}`;
      const warm = trafficMinutes.get(key) ?? 0;
      if (sample.produced > 0) trafficMinutes.set(key, warm + 1);
      if (n.rssMiB === null || warm < WARM_TRAFFIC_MINUTES) continue;
      lifetimes.set(key, [...(lifetimes.get(key) ?? []), n]);
    }
  }
  const problems: string[] = [];
  for (const [key, list] of lifetimes) {
    const first = list[0]?.rssMiB as number;
    const lastRss = list.at(-1)?.rssMiB as number;
    const bound = Math.max(GROWTH_FLOOR_MIB, GROWTH_RATIO * first);
    if (lastRss - first > bound) problems.push(`${key}: RSS ${first.toFixed(0)} → ${lastRss.toFixed(0)} MiB over ${list.length} samples (bound +${bound.toFixed(0)} MiB)`);
  }
  return problems;
}

/** Each node's view, peer and warning lines from 2 s before a stall began to its end. */
function stallLines(cluster: TestCluster, samples: readonly Sample[]): string[] {
  const out: string[] = [];
  for (const sample of samples.filter((s) => s.longestGapMs >= STALL_MS)) {
    const from = sample.gapEndedAt - sample.longestGapMs - 2_000;
    out.push(`--- stall of ${sample.longestGapMs} ms ending ${new Date(sample.gapEndedAt).toISOString()} (minute ${sample.minute}):`);
    for (const node of cluster.nodes) {
      for (const line of node.lines) {
        if (!/view|primary_unreachable|peer (up|down)|"level":"(warn|error)"|ready|abstain|blind/.test(line)) continue;
        const at = Date.parse(line.slice(9, 33));
        if (at >= from && at <= sample.gapEndedAt) out.push(`n${node.id} ${line.slice(0, 400)}`);
      }
    }
  }
  return out;
}

export function formatSample(sample: Sample): string {
  const nodes = sample.nodes.map((n) => `n${n.node}${n.life > 0 ? `.${n.life}` : ''} rss ${n.rssMiB?.toFixed(0) ?? '?'} (heap ${n.heapMiB?.toFixed(0) ?? '?'} ext ${n.externalMiB?.toFixed(0) ?? '?'}) MiB loop p99/max ${n.loopP99Ms?.toFixed(0) ?? '?'}/${n.loopMaxMs?.toFixed(0) ?? '?'} ms vc ${n.viewChanges ?? '?'}`);
  return `minute ${sample.minute}: produced ${sample.produced} consumed ${sample.consumed} longest write gap ${sample.longestGapMs} ms | ${nodes.join(' | ')}`;
}
