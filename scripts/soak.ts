/**
 * `npm run soak -- [--minutes N] [--fault-every-s S] [--rate R]`: the soak of issue 12 item 8
 * (test/support/soak): a 3-node cluster of real processes under steady produce and consume,
 * one node restarted at a time every S seconds, a line per minute (RSS, event-loop delay and
 * view changes per node, messages produced and consumed), then the verdict. Exit 0 only when
 * no node exited on its own, every acknowledged message is on every node, and no process grew
 * beyond the bound. The nodes run the compiled server: `npm run build` first.
 */
import { GROWTH_FLOOR_MIB, GROWTH_RATIO, WARM_TRAFFIC_MINUTES, runSoak } from '../test/support/soak/run.js';

const USAGE = 'usage: npm run soak -- [--minutes N] [--fault-every-s S] [--rate MSGS_PER_S]';

function parse(argv: readonly string[]): { minutes: number; faultEveryS: number; rate: number } {
  const flags = { minutes: 30, faultEveryS: 0, rate: 1_000 };
  for (let i = 0; i < argv.length; i += 2) {
    const value = Number(argv[i + 1]);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${argv[i]} needs a positive number\n${USAGE}`);
    if (argv[i] === '--minutes') flags.minutes = value;
    else if (argv[i] === '--fault-every-s') flags.faultEveryS = value;
    else if (argv[i] === '--rate') flags.rate = value;
    else throw new Error(`unknown flag ${argv[i]}\n${USAGE}`);
  }
  // Default: a restart every 5 minutes, or three over a short run.
  if (flags.faultEveryS === 0) flags.faultEveryS = Math.min(300, (flags.minutes * 60) / 3);
  return flags;
}

async function main(): Promise<number> {
  const flags = parse(process.argv.slice(2));
  const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  log(`soak: 3 nodes, ${flags.minutes} min, ${flags.rate} msg/s offered, a restart every ${flags.faultEveryS} s; ` +
    `growth bound per process after ${WARM_TRAFFIC_MINUTES} minutes of traffic: +max(${GROWTH_FLOOR_MIB} MiB, ${GROWTH_RATIO * 100} %)`);
  const report = await runSoak({ minutes: flags.minutes, faultEveryMs: flags.faultEveryS * 1000, rate: flags.rate, log });
  const minutes = Math.max(1, report.samples.length);
  log(`produced ${report.produced}, consumed ${report.consumed} (${Math.round(report.produced / minutes / 60)} msg/s), ${report.restarts} restarts`);
  for (const problem of report.problems) log(`PROBLEM ${problem}`);
  for (const growth of report.growth) log(`GROWTH ${growth}`);
  for (const line of report.stalls) console.log(line);
  const worst = Math.max(0, ...report.samples.map((s) => s.longestGapMs));
  log(`longest write gap of the run: ${worst} ms`);
  const failed = [
    ...(report.problems.length > 0 ? [`${report.problems.length} problem(s): node exits, failed restarts or lost/duplicated messages (PROBLEM lines)`] : []),
    ...(report.growth.length > 0 ? [`RSS growth beyond the bound in ${report.growth.length} process lifetime(s) (GROWTH lines)`] : []),
  ];
  log(failed.length === 0 ? 'verdict: PASS (no node exit, no loss, no growth beyond the bound)' : `verdict: FAIL: ${failed.join('; ')}`);
  const ok = failed.length === 0;
  return ok ? 0 : 1;
}

main().then((code) => process.exit(code), (error: unknown) => {
  console.error(error instanceof Error ? error.stack ?? error.message : String(error));
  process.exit(2);
});
