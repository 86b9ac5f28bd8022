/**
 * A benchmark suite is a file in src/suites/ whose default export is a `Suite`. main.ts finds
 * every such file (no registry to edit): add `src/suites/<name>.ts` and run
 * `npm run bench:micro -- <name>`.
 */
export interface BenchRow {
  readonly name: string;
  /** Median nanoseconds per operation. */
  readonly nsPerOp: number;
  /** Bytes one operation processes (for GB/s), when meaningful. */
  readonly bytesPerOp?: number;
  /** (max - min) / median over the rounds. */
  readonly spread: number;
}

export interface SuiteResult {
  readonly rows: readonly BenchRow[];
  /** Conclusions computed from the rows (ratios, crossovers), printed under the table. */
  readonly notes: readonly string[];
}

export interface BenchSettings {
  /** Measured rounds per case (the median is reported). */
  readonly rounds: number;
  /** Target duration of one round, in milliseconds. */
  readonly roundMillis: number;
  readonly warmupRounds: number;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  run(settings: BenchSettings): Promise<SuiteResult> | SuiteResult;
}
