/**
 * prom-client's standard metrics (`process_*`, `nodejs_*`) for a process with several threads.
 * `process_*` and `nodejs_version_info` describe the process: only the main thread reports them.
 * The other `nodejs_*` (heap, heap spaces, event-loop lag, GC, active handles / requests /
 * resources) describe one isolate: every thread reports its own, labelled `thread`.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricJson } from './thread-stats.js';

function perIsolate(name: string): boolean {
  return name.startsWith('nodejs_') && name !== 'nodejs_version_info';
}

/** One thread's default-metrics registry. */
export class DefaultMetrics {
  readonly #registry = new Registry();
  readonly #thread: string;

  constructor(thread: string) {
    this.#thread = thread;
    collectDefaultMetrics({ register: this.#registry });
  }

  /** A worker: its per-isolate metrics, labelled with the thread. */
  async isolate(): Promise<MetricJson[]> {
    const all = (await this.#registry.getMetricsAsJSON()) as unknown as MetricJson[];
    return all.filter((m) => perIsolate(m.name)).map((m) => this.#labelled(m));
  }

  /** The main thread: the process metrics as they are, its per-isolate ones labelled `main`. */
  async all(): Promise<MetricJson[]> {
    const all = (await this.#registry.getMetricsAsJSON()) as unknown as MetricJson[];
    // prom-client marks the start time 'omit' (meaningless summed over cluster workers); here it
    // comes from one thread only, so it is kept as it is.
    return all.map((m) => (perIsolate(m.name) ? this.#labelled(m) : m.aggregator === 'omit' ? { ...m, aggregator: 'first' } : m));
  }

  #labelled(metric: MetricJson): MetricJson {
    return { ...metric, values: metric.values.map((v) => ({ ...v, labels: { ...v.labels, thread: this.#thread } })) };
  }
}
