/**
 * The log file (`system.logging.file_enabled`): `<system.path>/<logging.path>/shoal.log`, appended
 * to by every thread with `O_APPEND` writes of whole lines (atomic for lines below PIPE_BUF, and
 * ordered by the kernel), rotated by the main thread.
 *
 * Rotation without a lock: the main thread renames `shoal.log` to `shoal.<ms>.log` and bumps a
 * generation word in shared memory; every writer compares the word with the generation it opened
 * and reopens `shoal.log` when it moved. Lines written between the rename and a writer's reopen
 * land at the end of the rotated file, which is harmless.
 *
 *   rotation (main, every rotation_check_interval):
 *     size(shoal.log) >= max_file_size → rename → generation += 1
 *     delete rotated files older than retention, then the oldest until the total <= max_total_size
 */
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { LogSink } from './logger.js';

export const LOG_FILE_NAME = 'shoal.log';
const ROTATED_RE = /^shoal\.(\d+)\.log$/;

export class LogFile implements LogSink {
  readonly path: string;
  readonly #generation: Int32Array;
  readonly #word: number;
  #fd: number;
  #opened: number;
  #failed = false;

  /** `generation[word]` is the shared rotation counter (status table). */
  constructor(dir: string, generation: Int32Array, word: number) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, LOG_FILE_NAME);
    this.#generation = generation;
    this.#word = word;
    this.#opened = Atomics.load(generation, word);
    this.#fd = openSync(this.path, 'a');
  }

  write(line: string): void {
    if (this.#failed) return;
    try {
      const current = Atomics.load(this.#generation, this.#word);
      if (current !== this.#opened) {
        closeSync(this.#fd);
        this.#fd = openSync(this.path, 'a');
        this.#opened = current;
      }
      writeSync(this.#fd, line);
    } catch {
      // A full disk or a removed directory must not take the node down through its logger;
      // stdout still carries every line.
      this.#failed = true;
    }
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // already closed
    }
  }
}

export interface RotationPolicy {
  /** 0: never rotate by size. */
  readonly maxFileSizeBytes: number;
  /** 0: keep every rotated file (retention still applies). */
  readonly maxTotalSizeBytes: number;
  readonly retentionMs: number;
}

/** Main thread: rotate when due, prune old files. Returns whether it rotated. */
export function rotateLogs(dir: string, policy: RotationPolicy, generation: Int32Array, word: number, nowMs: number): boolean {
  let rotated = false;
  const active = join(dir, LOG_FILE_NAME);
  try {
    const size = statSync(active).size;
    if (policy.maxFileSizeBytes > 0 && size >= policy.maxFileSizeBytes) {
      renameSync(active, join(dir, `shoal.${nowMs}.log`));
      Atomics.add(generation, word, 1);
      rotated = true;
    }
  } catch {
    return false;
  }
  pruneRotated(dir, policy, nowMs);
  return rotated;
}

function pruneRotated(dir: string, policy: RotationPolicy, nowMs: number): void {
  const files = readdirSync(dir)
    .map((name) => ({ name, match: ROTATED_RE.exec(name) }))
    .filter((f): f is { name: string; match: RegExpExecArray } => f.match !== null)
    .map((f) => ({ name: f.name, at: Number(f.match[1]), size: statSync(join(dir, f.name)).size }))
    .sort((a, b) => a.at - b.at);
  let total = files.reduce((sum, f) => sum + f.size, 0);
  for (const file of files) {
    const expired = nowMs - file.at > policy.retentionMs;
    const overBudget = policy.maxTotalSizeBytes > 0 && total > policy.maxTotalSizeBytes;
    if (!expired && !overBudget) continue;
    unlinkSync(join(dir, file.name));
    total -= file.size;
  }
}
