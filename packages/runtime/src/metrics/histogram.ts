/**
 * Latency histograms for the hot paths of a worker thread: fixed bucket bounds, counts in a
 * Float64Array, no allocation and no label hashing per observation. A family maps label values
 * to one histogram each; callers look a child up once (or cache it) and call `observeMs` per
 * event. On a scrape the worker posts `snapshot()` (plain data) to the supervisor, which sums the
 * threads' series and renders them with prom-client (metrics/exposition.ts).
 *
 * Why not prom-client's Histogram on the hot path: its `observe` validates and hashes the labels
 * on every call; measured 365 ns per observation against 38 ns here (docs/operations.md
 * "How metrics leave the workers"). prom-client still renders, aggregates and collects the
 * standard process / nodejs metrics.
 */

/** Upper bounds in seconds of every latency histogram: 50 µs .. 10 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

/** Bounds in milliseconds (what `performance.now()` differences are in). */
const LATENCY_BUCKETS_MS = LATENCY_BUCKETS_SECONDS.map((s) => s * 1000);

export class LatencyHistogram {
  /** Per bucket (not cumulative); the last one counts what exceeded every bound (+Inf). */
  readonly counts: Float64Array;
  /** Sum of the observations, milliseconds. */
  sumMs = 0;
  count = 0;
  readonly #boundsMs: readonly number[];

  constructor(boundsMs: readonly number[] = LATENCY_BUCKETS_MS) {
    this.#boundsMs = boundsMs;
    this.counts = new Float64Array(boundsMs.length + 1);
  }

  observeMs(ms: number): void {
    // A clock that went backwards (or NaN from a bad start) counts as 0, never corrupts the sum.
    const value = ms > 0 ? ms : 0;
    const bounds = this.#boundsMs;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sumMs += value;
    this.count += 1;
  }
}

/** One label set's histogram, as posted on a scrape. */
export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Per bucket, not cumulative; length = bounds + 1 (the last is +Inf). */
  readonly counts: readonly number[];
  readonly sumSeconds: number;
  readonly count: number;
}

export interface HistogramFamilySnapshot {
  readonly name: string;
  readonly help: string;
  /** Upper bounds in seconds. */
  readonly bounds: readonly number[];
  readonly series: readonly HistogramSeries[];
}

export class HistogramFamily {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #children = new Map<string, { readonly labels: Readonly<Record<string, string>>; readonly histogram: LatencyHistogram }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** The histogram of one label set (created on first use). Values in `labelNames` order. */
  child(...values: string[]): LatencyHistogram {
    if (values.length !== this.labelNames.length) throw new RangeError(`${this.name}: expected ${this.labelNames.length} label values`);
    const key = values.join('\u0000');
    const found = this.#children.get(key);
    if (found !== undefined) return found.histogram;
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => {
      labels[name] = values[i] as string;
    });
    const histogram = new LatencyHistogram();
    this.#children.set(key, { labels, histogram });
    return histogram;
  }

  snapshot(): HistogramFamilySnapshot {
    const series: HistogramSeries[] = [];
    for (const { labels, histogram } of this.#children.values()) {
      if (histogram.count === 0) continue;
      series.push({ labels, counts: Array.from(histogram.counts), sumSeconds: histogram.sumMs / 1000, count: histogram.count });
    }
    return { name: this.name, help: this.help, bounds: LATENCY_BUCKETS_SECONDS, series };
  }
}
