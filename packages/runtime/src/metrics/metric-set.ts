/** Metric families as prom-client metric objects, collected by name, type, help and samples. */
import type { MetricJson } from './thread-stats.js';

export type Labels = Readonly<Record<string, string>>;

/** A family without samples is left out. */
export class MetricSet {
  readonly #metrics: MetricJson[] = [];

  metric(name: string, type: 'counter' | 'gauge', help: string, samples: readonly (readonly [Labels, number])[]): void {
    if (samples.length === 0) return;
    this.#metrics.push({ name, help, type, aggregator: 'sum', values: samples.map(([labels, value]) => ({ labels, value })) });
  }

  get metrics(): MetricJson[] {
    return this.#metrics;
  }
}
