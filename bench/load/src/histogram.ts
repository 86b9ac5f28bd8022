/**
 * A log-linear (HDR-style) histogram of non-negative integer values (the bench records
 * nanoseconds). Why our own rather than `hdr-histogram-js`: ~150 lines with no dependency, exact
 * min / max / mean beside the buckets, cheap merging of the per-connection histograms, and a
 * compact JSON form (non-empty buckets only) that the HTML report embeds and re-plots; the
 * library's WASM build and base64 serialisation buy nothing here. Correctness is pinned by
 * test/histogram.test.ts against a sorted-array oracle.
 *
 * Layout (`SUB_BITS` = 10, so `SUB` = 1024 sub-buckets):
 *
 *   value v < 1024                 index = v                               (exact)
 *   value v in [2^m, 2^(m+1)), m ≥ 10   shift = m − 9, index = shift·512 + (v >> shift)
 *
 *   index:  0 ……… 1023 | 1024 …… 1535 | 1536 …… 2047 | …   (contiguous)
 *           exact        [1024, 2048)   [2048, 4096)    each range split into 512 equal buckets
 *
 * A bucket spans at most 1/512 of its lowest value, so every reported percentile is within
 * 0.2 % above the exact value (it reports the bucket's highest equivalent value, clamped to the
 * exact maximum, as HdrHistogram does).
 */
export const SUB_BITS = 10;
const SUB = 1 << SUB_BITS;
const HALF = SUB >> 1;

/** Largest value accepted: 2^53 − 1 (a safe integer). */
export const HISTOGRAM_VALUE_MAX = Number.MAX_SAFE_INTEGER;

function msb(value: number): number {
  if (value < 0x1_0000_0000) return 31 - Math.clz32(value);
  return 32 + 31 - Math.clz32(Math.floor(value / 0x1_0000_0000));
}

/** Bucket index of a value (see the layout above). */
export function bucketIndex(value: number): number {
  if (value < SUB) return value;
  const shift = msb(value) - SUB_BITS + 1;
  return shift * HALF + Math.floor(value / 2 ** shift);
}

/** Lowest value that lands in bucket `index`. */
export function bucketLow(index: number): number {
  if (index < SUB) return index;
  const shift = Math.floor(index / HALF) - 1;
  const sub = index - shift * HALF;
  return sub * 2 ** shift;
}

/** Highest value that lands in bucket `index`. */
export function bucketHigh(index: number): number {
  if (index < SUB) return index;
  const shift = Math.floor(index / HALF) - 1;
  return bucketLow(index) + 2 ** shift - 1;
}

/** JSON form: exact summary plus the non-empty buckets as [low, high, count]. */
export interface HistogramJson {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly buckets: readonly (readonly [number, number, number])[];
}

export class Histogram {
  #counts = new Float64Array(4 * SUB);
  #count = 0;
  #min = Number.POSITIVE_INFINITY;
  #max = 0;
  #sum = 0;

  get count(): number {
    return this.#count;
  }

  get min(): number {
    return this.#count === 0 ? 0 : this.#min;
  }

  get max(): number {
    return this.#max;
  }

  get mean(): number {
    return this.#count === 0 ? 0 : this.#sum / this.#count;
  }

  /** Records a value `times` times; values are rounded to integers and clamped to [0, 2^53). */
  record(value: number, times = 1): void {
    const v = value <= 0 || Number.isNaN(value) ? 0 : value >= HISTOGRAM_VALUE_MAX ? HISTOGRAM_VALUE_MAX : Math.round(value);
    const index = bucketIndex(v);
    if (index >= this.#counts.length) this.#grow(index);
    this.#counts[index] = (this.#counts[index] as number) + times;
    this.#count += times;
    this.#sum += v * times;
    if (v < this.#min) this.#min = v;
    if (v > this.#max) this.#max = v;
  }

  #grow(index: number): void {
    let size = this.#counts.length;
    while (size <= index) size *= 2;
    const next = new Float64Array(size);
    next.set(this.#counts);
    this.#counts = next;
  }

  /** Adds every value of `other` to this histogram. */
  merge(other: Histogram): void {
    if (other.#count === 0) return;
    if (other.#counts.length > this.#counts.length) this.#grow(other.#counts.length - 1);
    const from = other.#counts;
    for (let i = 0; i < from.length; i++) {
      const c = from[i] as number;
      if (c !== 0) this.#counts[i] = (this.#counts[i] as number) + c;
    }
    this.#count += other.#count;
    this.#sum += other.#sum;
    if (other.#min < this.#min) this.#min = other.#min;
    if (other.#max > this.#max) this.#max = other.#max;
  }

  /**
   * The value at percentile `q` (0 < q ≤ 100) by nearest rank: the smallest recorded value v
   * such that at least q % of the values are ≤ v, reported as its bucket's highest equivalent
   * value (clamped to the maximum). q = 0 gives the minimum; an empty histogram gives 0.
   */
  percentile(q: number): number {
    if (this.#count === 0) return 0;
    if (q <= 0) return this.min;
    const rank = Math.max(1, Math.ceil((Math.min(q, 100) / 100) * this.#count));
    let seen = 0;
    const counts = this.#counts;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i] as number;
      if (seen >= rank) return Math.max(this.min, Math.min(bucketHigh(i), this.#max));
    }
    return this.#max;
  }

  toJSON(): HistogramJson {
    const buckets: [number, number, number][] = [];
    const counts = this.#counts;
    for (let i = 0; i < counts.length; i++) {
      const c = counts[i] as number;
      if (c !== 0) buckets.push([bucketLow(i), bucketHigh(i), c]);
    }
    return { count: this.#count, min: this.min, max: this.#max, mean: this.mean, buckets };
  }

  static fromJSON(json: HistogramJson): Histogram {
    const h = new Histogram();
    for (const [low, , count] of json.buckets) h.record(low, count);
    // Restore the exact summary (bucket lows are not the recorded values).
    h.#min = json.count === 0 ? Number.POSITIVE_INFINITY : json.min;
    h.#max = json.max;
    h.#sum = json.mean * json.count;
    return h;
  }
}

/** The percentiles the report prints. */
export const REPORT_PERCENTILES = [50, 90, 99, 99.9] as const;

export interface LatencySummary {
  readonly count: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  readonly min: number;
}

/** Summary in milliseconds of a histogram of nanoseconds. */
export function latencySummary(h: Histogram): LatencySummary {
  const ms = (ns: number): number => ns / 1e6;
  return {
    count: h.count,
    p50: ms(h.percentile(50)),
    p90: ms(h.percentile(90)),
    p99: ms(h.percentile(99)),
    p999: ms(h.percentile(99.9)),
    max: ms(h.max),
    mean: ms(h.mean),
    min: ms(h.min),
  };
}

/**
 * The classic latency-distribution curve: the value at percentiles 0, 50, 75, 87.5, … (halving
 * the remainder each step) up to the maximum; plotted against 1 / (1 − p) on a log axis.
 */
export function percentileCurve(h: Histogram, stepsMax = 24): { readonly percentile: number; readonly valueMs: number }[] {
  const out: { percentile: number; valueMs: number }[] = [];
  if (h.count === 0) return out;
  for (let step = 0; step <= stepsMax; step++) {
    const p = 100 * (1 - 0.5 ** step);
    // Stop once the remaining tail holds less than one value.
    if ((1 - p / 100) * h.count < 1) break;
    out.push({ percentile: p, valueMs: h.percentile(p === 0 ? 0 : p) / 1e6 });
  }
  out.push({ percentile: 100, valueMs: h.max / 1e6 });
  return out;
}
