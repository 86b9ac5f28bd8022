/**
 * One run of the official SDK's own end-to-end suite (`../shared/compat/run-sdk-e2e.sh`, unchanged)
 * against one server address, its output kept in a log file, its TAP summary parsed.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { type TapSummary, parseTap } from './tap.js';

export interface E2eRun {
  readonly label: string;
  readonly address: string;
  readonly summary: TapSummary;
  readonly exitCode: number | null;
  readonly logFile: string;
  readonly seconds: number;
}

export interface E2eOptions {
  readonly runner: string;
  readonly label: string;
  readonly address: string;
  /** Test files relative to the SDK root; empty: the runner's default (`src/e2e/tcp.*.e2e.ts`). */
  readonly files: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  readonly timeoutMs: number;
}

export function runE2e(o: E2eOptions): Promise<E2eRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', [o.runner, o.address, ...o.files], { env: e2eEnv(o.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    const timer = setTimeout(() => {
      output += `\n# compat: killed after ${o.timeoutMs} ms\n`;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      writeFileSync(o.logFile, output);
      resolve({ label: o.label, address: o.address, summary: parseTap(output), exitCode: code, logFile: o.logFile, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/**
 * The runner's environment. `run-sdk-e2e.sh` promises node's TAP output, which is node 20's default
 * reporter off a terminal; from node 23 the default is `spec` everywhere, and every run on node 24
 * parsed as "did not complete". Asking for TAP by NODE_OPTIONS leaves the script and the SDK as
 * they are.
 */
export function e2eEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const options = [env['NODE_OPTIONS'], '--test-reporter=tap'].filter((o) => o !== undefined && o.length > 0);
  return { ...env, NODE_OPTIONS: options.join(' ') };
}
