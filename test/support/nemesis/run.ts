/**
 * One nemesis run on real processes (issue 12 item 7):
 *
 *   start n `shoal-server` processes, every replica link through a TCP proxy
 *   ─▶ a stream with `partitions` partitions; producers and the metadata worker start
 *   ─▶ the seeded plan, episode by episode (fault, heal, quiet gap)
 *   ─▶ final heal (SIGCONT, links open, dead nodes restarted) and wait for writes to resume
 *   ─▶ stop the workload; wait until every node holds the same copy; check each node separately
 *
 * The report carries the seed, the episodes, the figures (acknowledged batches, unknown outcomes,
 * the longest write gap of the run and of each episode, the time writes took to resume after
 * the last fault), every problem found, and key log lines of the nodes when something is wrong.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestCluster } from '../../integration/support/cluster.js';
import {
  checkCatalog, checkPartitionCopy, compareCatalogs, compareCopies, readCatalog, readCopies, type PartitionCopy,
} from './checks.js';
import { Hands } from './faults.js';
import { startCluster } from './start.js';
import { describeFault, plan, type Fault } from './schedule.js';
import { longestGap, sleep, Workload } from './workload.js';

export interface NemesisOptions {
  readonly seed: number;
  readonly nodes: number;
  /** Planned fault time; the run adds start-up, healing and the checks. */
  readonly durationMs: number;
  readonly kinds?: readonly Fault['kind'][];
  readonly partitions?: number;
  readonly producers?: number;
  readonly batchSize?: number;
  /** Extra `[cluster]` keys for every node (default: none, the shipped defaults). */
  readonly clusterKeys?: readonly string[];
  readonly log?: (line: string) => void;
  /** Keep the report and every node's whole log even when the run is clean (to study its stalls). */
  readonly keepLogs?: boolean;
}

export interface EpisodeReport {
  readonly fault: string;
  readonly startedAt: number;
  /** Longest time without a data acknowledgement from the fault until the next episode. */
  readonly longestGapMs: number;
}

export interface NemesisReport {
  readonly seed: number;
  readonly nodes: number;
  readonly durationMs: number;
  readonly episodes: readonly EpisodeReport[];
  readonly batches: number;
  readonly ackedBatches: number;
  readonly unknownBatches: number;
  readonly resentBatches: number;
  /** SDK retries after an answer 57 (outcome unknown), counted as attempts. */
  readonly sdkResends: number;
  readonly streamsCreated: number;
  readonly streamsDeleted: number;
  readonly longestGapMs: number;
  /** From the final heal to the first acknowledged write after it (null: writes never resumed). */
  readonly resumeAfterHealMs: number | null;
  readonly problems: readonly string[];
  /** Key log lines per node (warnings and errors), only when there are problems. */
  readonly logs: readonly string[];
  readonly wallMs: number;
  /** Where the report and every node's whole log were written (problems, or `keepLogs`; null: not kept). */
  readonly savedTo: string | null;
}

const STREAM = 'nemesis';
const TOPIC = 'events';
/** How long the cluster gets, after the final heal, to take writes again and to converge. */
const RESUME_TIMEOUT_MS = 60_000;
const CONVERGE_TIMEOUT_MS = 90_000;
/** Writes after the heal before the workload stops: the healed cluster carries load. */
const AFTER_HEAL_WRITES_MS = 3_000;
const LOG_LINES_KEPT = 40;

export async function runNemesis(options: NemesisOptions): Promise<NemesisReport> {
  const log = options.log ?? (() => undefined);
  const began = Date.now();
  const partitions = options.partitions ?? 3;
  const episodes = plan({ seed: options.seed, nodes: options.nodes, durationMs: options.durationMs, ...(options.kinds === undefined ? {} : { kinds: options.kinds }) });
  log(`nemesis seed ${options.seed}: ${options.nodes} nodes, ${episodes.length} episodes`);
  const cluster = await startCluster({ nodes: options.nodes, proxies: true, ...(options.clusterKeys === undefined ? {} : { clusterKeys: options.clusterKeys }) });
  const hands = new Hands(cluster, STREAM, log);
  const problems: string[] = [];
  try {
    await setUp(cluster, partitions);
    const workload = new Workload({
      runTag: `n${options.seed}`, seed: options.seed, stream: STREAM, topic: TOPIC, partitions,
      producers: options.producers ?? 3, batchSize: options.batchSize ?? 5, pauseMs: 20, metadataPauseMs: 300,
      client: () => cluster.client({ requestTimeoutMs: 5_000, cluster: { retry: { retryUncertainWrites: false, budgetMs: 10_000, attemptsMax: 50 } } }),
    });
    workload.start();
    const reports: { fault: string; startedAt: number }[] = [];
    for (const episode of episodes) {
      reports.push({ fault: describeFault(episode.fault), startedAt: Date.now() });
      log(`partitions' primary: node ${await hands.primary()}`);
      await hands.apply(episode.fault);
      await hands.healAll();
      await sleep(episode.quietMs);
    }
    await hands.healAll();
    const healedAt = Date.now();
    const ackedAtHeal = workload.acknowledged;
    const resumed = await waitUntil(() => workload.acknowledged > ackedAtHeal, RESUME_TIMEOUT_MS);
    const resumeAfterHealMs = resumed ? (workload.ledger.ackTimes[ackedAtHeal] as number) - healedAt : null;
    if (!resumed) problems.push(`no write acknowledged within ${RESUME_TIMEOUT_MS} ms after the final heal`);
    await sleep(AFTER_HEAL_WRITES_MS);
    await workload.stop();
    const ended = Date.now();
    problems.push(...hands.crashes.map((c) => `node ${c.node} crashed (code ${c.code}, signal ${c.signal})`), ...hands.failedStarts);
    problems.push(...await verify(cluster, partitions, workload));
    const ledger = workload.ledger;
    const episodeReports = reports.map((r, i) => ({
      ...r, longestGapMs: longestGap(ledger.ackTimes, r.startedAt, reports[i + 1]?.startedAt ?? healedAt).ms,
    }));
    const report = {
      seed: options.seed, nodes: options.nodes, durationMs: options.durationMs, episodes: episodeReports,
      batches: ledger.batches.length,
      ackedBatches: ledger.batches.filter((b) => b.ackedAt !== null).length,
      unknownBatches: ledger.batches.filter((b) => b.ackedAt === null).length,
      resentBatches: ledger.batches.filter((b) => b.attempts > 1).length,
      sdkResends: ledger.sdkResends,
      streamsCreated: [...ledger.streams.values()].filter((s) => s.create === 'acked').length,
      streamsDeleted: [...ledger.streams.values()].filter((s) => s.delete === 'acked').length,
      longestGapMs: longestGap(ledger.ackTimes, reports[0]?.startedAt ?? healedAt, ended).ms,
      resumeAfterHealMs,
      problems,
      logs: problems.length === 0 ? [] : keyLines(cluster, hands, ledger.errors),
      wallMs: Date.now() - began,
      savedTo: null,
    };
    return problems.length === 0 && options.keepLogs !== true ? report : { ...report, savedTo: save(cluster, formatReport(report)) };
  } finally {
    hands.releaseAll();
    await cluster.stop();
  }
}

/** A run's report and every node's whole log, kept after the cluster's files are removed. */
function save(cluster: TestCluster, report: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'shoal-nemesis-'));
  writeFileSync(join(dir, 'report.txt'), `${report}\n`);
  for (const node of cluster.nodes) writeFileSync(join(dir, `node-${node.id}.log`), `${node.lines.join('\n')}\n`);
  return dir;
}

async function setUp(cluster: TestCluster, partitions: number): Promise<void> {
  const admin = cluster.client({ requestTimeoutMs: 10_000 });
  try {
    await admin.stream.create({ name: STREAM });
    await admin.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: partitions });
  } finally {
    await admin.destroy();
  }
}

/** Waits for every node to hold the same copy, then checks each against the ledger. */
async function verify(cluster: TestCluster, partitions: number, workload: Workload): Promise<string[]> {
  const ids = cluster.nodes.map((n) => n.id);
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  let copies: PartitionCopy[][] = [];
  let catalogs: string[][] = [];
  let differences: string[] = [];
  for (;;) {
    try {
      copies = await Promise.all(ids.map((id) => readCopies(cluster, id, STREAM, TOPIC, partitions)));
      catalogs = await Promise.all(ids.map((id) => readCatalog(cluster, id)));
      differences = [...compareCopies(ids, copies), ...compareCatalogs(ids, catalogs)];
    } catch (error) {
      differences = [`reading the nodes failed: ${error instanceof Error ? error.message : String(error)}`];
    }
    if (differences.length === 0 || Date.now() > deadline) break;
    await sleep(2_000);
  }
  const problems = [...differences];
  copies.forEach((node, n) => node.forEach((copy, p) => problems.push(...checkPartitionCopy(ids[n] as number, p, copy, workload.ledger))));
  catalogs.forEach((catalog, n) => problems.push(...checkCatalog(ids[n] as number, catalog, workload.ledger, [STREAM])));
  return problems;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Warnings, errors and view changes of every node, the crashes' tails, the client errors. */
function keyLines(cluster: TestCluster, hands: Hands, clientErrors: readonly string[]): string[] {
  const lines: string[] = [];
  for (const node of cluster.nodes) {
    const key = node.lines.filter((l) => /"level":"(warn|error|fatal)"|view_change|start_view|Assertion/.test(l));
    lines.push(`--- node ${node.id}: ${key.length} key lines, last ${LOG_LINES_KEPT}:`, ...key.slice(-LOG_LINES_KEPT));
  }
  for (const crash of hands.crashes) lines.push(`--- node ${crash.node} crash tail:`, crash.tail);
  lines.push('--- client errors (first few):', ...clientErrors);
  return lines;
}

/** The report as text: what a failing test or the CLI prints. */
export function formatReport(report: NemesisReport): string {
  const lines = [
    `nemesis seed ${report.seed} (${report.nodes} nodes): ${report.problems.length === 0 ? 'OK' : `${report.problems.length} PROBLEMS`} in ${(report.wallMs / 1000).toFixed(0)} s`,
    `  batches ${report.batches}: ${report.ackedBatches} acknowledged, ${report.unknownBatches} unknown, ${report.resentBatches} re-sent (${report.sdkResends} of the attempts by the SDK after a 57); streams created ${report.streamsCreated}, deleted ${report.streamsDeleted}`,
    `  longest write gap ${report.longestGapMs} ms; writes resumed ${report.resumeAfterHealMs ?? 'never'} ms after the final heal`,
    ...report.episodes.map((e) => `  - ${e.fault}: longest gap ${e.longestGapMs} ms`),
    ...report.problems.map((p) => `  PROBLEM ${p}`),
    ...(report.problems.length === 0 ? [] : [`  replay: npm run nemesis -- --nodes ${report.nodes} --seed ${report.seed} --minutes ${report.durationMs / 60_000}`]),
    ...(report.savedTo === null ? [] : [`  report and node logs: ${report.savedTo}`]),
  ];
  return [...lines, ...report.logs].join('\n');
}
