/**
 * `npm run nemesis -- [--minutes N] [--seed S] [--nodes 3|5] [--runs R] [--kinds a,b] [--keep-logs]`: the
 * nemesis of issue 12 item 7 on real `shoal-server` processes (test/support/nemesis), for long
 * runs. Each run plans N minutes of faults from its seed (run i of R uses seed S + i), heals,
 * checks every node, and prints its report; the exit code is 1 when any run found a problem.
 * A failing run's node logs are kept in a temporary directory; `--keep-logs` keeps a clean run's too.
 * The nodes run the compiled server: `npm run build` first (npm test does).
 */
import { ALL_KINDS, type Fault } from '../test/support/nemesis/schedule.js';
import { formatReport, runNemesis } from '../test/support/nemesis/run.js';

interface Flags {
  minutes: number;
  seed: number;
  nodes: number;
  runs: number;
  kinds: readonly Fault['kind'][];
  keepLogs: boolean;
}

const USAGE = 'usage: npm run nemesis -- [--minutes N] [--seed S] [--nodes 3|5] [--runs R] [--kinds kill,pause,...] [--keep-logs]';

function parse(argv: readonly string[]): Flags {
  const flags: Flags = { minutes: 2, seed: Math.floor(Date.now() % 1_000_000), nodes: 3, runs: 1, kinds: ALL_KINDS, keepLogs: false };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--keep-logs') {
      flags.keepLogs = true;
      i--;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${argv[i]} needs a value\n${USAGE}`);
    switch (argv[i]) {
      case '--minutes': flags.minutes = positive(value); break;
      case '--seed': flags.seed = Math.floor(positive(value, true)); break;
      case '--nodes': flags.nodes = Math.floor(positive(value)); break;
      case '--runs': flags.runs = Math.floor(positive(value)); break;
      case '--kinds': flags.kinds = kinds(value); break;
      default: throw new Error(`unknown flag ${argv[i]}\n${USAGE}`);
    }
  }
  if (flags.nodes % 2 === 0 || flags.nodes < 3) throw new Error(`--nodes must be odd and at least 3\n${USAGE}`);
  return flags;
}

function positive(text: string, zero = false): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (!zero && value === 0)) throw new Error(`not a positive number: ${text}\n${USAGE}`);
  return value;
}

function kinds(text: string): Fault['kind'][] {
  const list = text.split(',');
  for (const kind of list) if (!(ALL_KINDS as readonly string[]).includes(kind)) throw new Error(`unknown fault kind ${kind} (${ALL_KINDS.join(', ')})`);
  return list as Fault['kind'][];
}

async function main(): Promise<number> {
  const flags = parse(process.argv.slice(2));
  let failed = 0;
  for (let run = 0; run < flags.runs; run++) {
    const seed = flags.seed + run;
    const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 23)} seed ${seed}] ${line}`);
    const report = await runNemesis({ seed, nodes: flags.nodes, durationMs: flags.minutes * 60_000, kinds: flags.kinds, log, keepLogs: flags.keepLogs });
    console.log(formatReport(report));
    if (report.problems.length > 0) failed++;
  }
  console.log(`${flags.runs - failed} of ${flags.runs} runs clean (seeds ${flags.seed}..${flags.seed + flags.runs - 1}, ${flags.nodes} nodes, ${flags.minutes} min each)`);
  return failed === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
});
