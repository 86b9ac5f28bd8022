import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';

/** Facts about the machine and the code, recorded in every report. */
export interface MachineFacts {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly kernel: string;
  readonly gitCommit: string | null;
  /** Uncommitted changes in the work tree when the run started. */
  readonly gitDirty: boolean | null;
  readonly loadAverage: readonly number[];
  readonly hostname: string;
}

function git(root: string, args: readonly string[]): string | null {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function hostname(): string {
  try {
    return readFileSync('/etc/hostname', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

export function machineFacts(repoRoot: string): MachineFacts {
  const commit = git(repoRoot, ['rev-parse', 'HEAD']);
  const status = git(repoRoot, ['status', '--porcelain']);
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    kernel: release(),
    gitCommit: commit,
    gitDirty: status === null ? null : status.length > 0,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    hostname: hostname(),
  };
}
