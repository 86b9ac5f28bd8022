/**
 * `npm run bench -- [flags]` (and `shoal bench [flags]`): the Shoal load benchmark, with a NATS
 * JetStream R3 cluster measured side by side (`--compare nats`). See bench/README.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EXIT, exitCodeFor, runBench, summaryLine } from './bench.js';
import { FAILOVER_DEFAULT_DURATION_S, runFailover } from './failover.js';
import { type BenchOptions, USAGE, UsageError, commandLine, parseFlags } from './flags.js';
import { machineFacts } from './machine.js';
import { runNatsFailover } from './nats/failover.js';
import { NatsLauncher } from './nats/launcher.js';
import { describeWorkload } from './plan.js';
import { createProgress } from './progress.js';
import { renderHtml } from './report/html.js';
import { type BenchReport, REPORT_SCHEMA } from './report/model.js';
import { formatReport } from './report/terminal.js';
import { installSignalCleanup, runCleanups } from './processes.js';
import { repoRoot } from './shoal/launcher.js';
import { TargetUnavailableError } from './target.js';

function writeOutput(path: string, text: string): string {
  const absolute = resolve(process.env['INIT_CWD'] ?? process.cwd(), path);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, text);
  return absolute;
}

async function failoverReport(options: BenchOptions, argv: readonly string[], io: Parameters<typeof runFailover>[1]): Promise<BenchReport> {
  const startedAt = new Date().toISOString();
  const { workload, run } = await runFailover(options, io);
  io.log(summaryLine('failover · shoal/lean', run));
  const f = run.failover;
  if (f !== undefined) {
    io.log(f.firstAckAfterKillMs === null
      ? `failover: no write was acknowledged by another node after the kill (killed node ${f.killedNode})`
      : `failover: first acknowledged write ${f.firstAckAfterKillMs.toFixed(0)} ms after SIGKILL of node ${f.killedNode}, by ${f.newPrimary ?? '?'}; ${f.resentRequests} request(s) re-sent`);
  }
  const notes: string[] = [];
  if (options.compare === 'nats') notes.push(await natsFailoverNote(workload, f?.firstAckAfterKillMs ?? null, io.log));
  const scenarios = [{ id: 'failover', title: `SIGKILL of the primary during a steady produce (${FAILOVER_DEFAULT_DURATION_S} s unless --duration)`, workload, sweep: null, runs: [run] }];
  return {
    schema: REPORT_SCHEMA, startedAt, finishedAt: new Date().toISOString(), command: commandLine(argv), argv: [...argv],
    machine: machineFacts(repoRoot()), plan: 'failover', systems: {}, copyBound: null, scenarios, sweeps: [], comparisons: [], scaling: null, targets: [],
    exitCode: exitCodeFor(scenarios), notes,
  };
}

/** `--failover --compare nats`: NATS's failover in the same run, and the ratio (Shoal ÷ NATS, lower is better). */
async function natsFailoverNote(workload: { readonly producers: number; readonly inFlight: number; readonly messageSize: number },
  shoalMs: number | null, log: (line: string) => void): Promise<string> {
  const nats = await runNatsFailover(new NatsLauncher(), {
    producers: workload.producers, window: workload.inFlight, messageSize: workload.messageSize, killAtMs: 3000, afterKillMs: 30_000, log,
  });
  const natsMs = nats.firstAckAfterKillMs;
  const line = natsMs === null
    ? `failover: NATS JetStream R3: no publish acknowledged within 30 s of SIGKILL of its stream leader (node ${nats.killedNode})`
    : `failover: NATS JetStream R3: first acknowledged publish ${natsMs.toFixed(0)} ms after SIGKILL of its stream leader (node ${nats.killedNode}; `
      + `${nats.failedPublishes} publish(es) retried)${shoalMs === null ? '' : `; Shoal ÷ NATS = ${(shoalMs / natsMs).toFixed(2)}`}`;
  log(line);
  return line;
}

async function main(argv: readonly string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseFlags(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`bench: ${error.message}\n\n${USAGE}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (options.failover && options.target !== null) {
    process.stderr.write('bench: --failover kills a node: it needs the cluster the bench starts (no --target)\n');
    return EXIT.usage;
  }
  const progress = createProgress();
  const io = { progress, log: (line: string) => progress.log(line) };
  installSignalCleanup(io.log);
  let report: BenchReport;
  try {
    report = options.failover ? await failoverReport(options, argv, io) : await runBench(options, argv, io);
  } catch (error) {
    progress.done();
    if (error instanceof TargetUnavailableError) {
      process.stderr.write(`bench: ${error.message}\n`);
      return EXIT.unavailable;
    }
    throw error;
  } finally {
    await runCleanups();
  }
  process.stdout.write(`${formatReport(report)}\n`);
  if (options.failover) {
    const f = report.scenarios[0]?.runs[0];
    if (f !== undefined && 'failover' in f && f.failover !== undefined) {
      process.stdout.write(`\nfailover: ${f.failover.firstAckAfterKillMs === null ? 'no acknowledged write after the kill' : `${f.failover.firstAckAfterKillMs.toFixed(0)} ms from SIGKILL to the first acknowledged write on the new primary`}\n`);
    }
  }
  if (options.jsonPath !== null) process.stderr.write(`JSON report: ${writeOutput(options.jsonPath, `${JSON.stringify(report, null, 2)}\n`)}\n`);
  if (options.htmlPath !== null) process.stderr.write(`HTML report: ${writeOutput(options.htmlPath, renderHtml(report))}\n`);
  if (report.exitCode === EXIT.failed) process.stderr.write('bench: FAILED (a run failed or acknowledged data was lost or duplicated)\n');
  if (report.exitCode === EXIT.unavailable) process.stderr.write('bench: incomplete (a target could not run; see "skipped" above)\n');
  return report.exitCode;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await runCleanups();
    process.exitCode = EXIT.failed;
  },
);
