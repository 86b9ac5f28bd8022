import type { BenchRow, BenchSettings } from './suite.js';

export interface BenchCase {
  readonly name: string;
  /** One operation. Its result goes to a sink so the JIT cannot drop the work. */
  readonly op: () => unknown;
  readonly bytesPerOp?: number;
}

let sink: unknown;

/** Keeps the last result alive (read by nobody; defeats dead-code elimination). */
export function blackhole(): unknown {
  return sink;
}

function timeOps(op: () => unknown, count: number): number {
  const start = performance.now();
  for (let i = 0; i < count; i++) sink = op();
  return (performance.now() - start) * 1e6;
}

/** Operations per round so that a round lasts about `roundMillis`. */
function calibrate(op: () => unknown, roundMillis: number): number {
  let count = 1;
  for (;;) {
    const ns = timeOps(op, count);
    if (ns >= (roundMillis * 1e6) / 8 || count >= 1 << 28) return Math.max(1, Math.round((count * roundMillis * 1e6) / ns));
    count *= 2;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Measures cases together: calibration and warmup per case, then `rounds` rounds in which the
 * cases take turns (A B C, A B C, ...), so a ratio between two cases compares rounds that ran
 * under the same conditions (this machine moves up to 2× between runs). Reports the median.
 */
export function measureCases(cases: readonly BenchCase[], settings: BenchSettings): BenchRow[] {
  const counts = cases.map((c) => calibrate(c.op, settings.roundMillis));
  for (let w = 0; w < settings.warmupRounds; w++) cases.forEach((c, i) => timeOps(c.op, counts[i] as number));
  const samples: number[][] = cases.map(() => []);
  for (let r = 0; r < settings.rounds; r++) {
    cases.forEach((c, i) => {
      const count = counts[i] as number;
      samples[i]?.push(timeOps(c.op, count) / count);
    });
  }
  return cases.map((c, i) => {
    const values = samples[i] ?? [];
    const med = median(values);
    const spread = (Math.max(...values) - Math.min(...values)) / med;
    return c.bytesPerOp === undefined
      ? { name: c.name, nsPerOp: med, spread }
      : { name: c.name, nsPerOp: med, bytesPerOp: c.bytesPerOp, spread };
  });
}

export function gbPerSecond(row: BenchRow): number | null {
  return row.bytesPerOp === undefined ? null : row.bytesPerOp / row.nsPerOp;
}

/** Throughput of `a` over throughput of `b` (same bytes per op): b.ns / a.ns. */
export function throughputRatio(a: BenchRow, b: BenchRow): number {
  return b.nsPerOp / a.nsPerOp;
}

export function row(rows: readonly BenchRow[], name: string): BenchRow {
  const found = rows.find((r) => r.name === name);
  if (found === undefined) throw new Error(`no bench row ${name}`);
  return found;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}
