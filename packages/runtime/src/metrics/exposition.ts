/**
 * The Prometheus text of a node: prom-client merges every part and renders it.
 *
 * ```
 *  main thread   DefaultMetrics.all()            process_*, nodejs_* {thread="main"}
 *  each worker   ThreadStats.nodejs              nodejs_* {thread="shard-0"}, …
 *                ThreadStats.histograms ─▶ histogramMetrics ─▶ *_bucket / *_sum / *_count
 *  supervisor    nodeMetrics(...)                shoal_* gauges and counters
 *        └──────────────▶ AggregatorRegistry.aggregate (sums samples with equal labels) ─▶ text
 * ```
 *
 * Histograms carry no thread label: the same series from every shard add up to the node's.
 */
import { AggregatorRegistry } from 'prom-client';
import type { HistogramFamilySnapshot } from './histogram.js';
import type { MetricJson } from './thread-stats.js';

/** `le` as Prometheus clients print it. */
function le(bound: number): string {
  return String(bound);
}

/** One family's snapshot as a prom-client histogram object (cumulative buckets, +Inf, sum, count). */
export function histogramMetric(family: HistogramFamilySnapshot): MetricJson {
  const values: { value: number; labels: Record<string, string>; metricName: string }[] = [];
  for (const series of family.series) {
    let cumulative = 0;
    family.bounds.forEach((bound, i) => {
      cumulative += series.counts[i] ?? 0;
      values.push({ metricName: `${family.name}_bucket`, labels: { ...series.labels, le: le(bound) }, value: cumulative });
    });
    values.push({ metricName: `${family.name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count });
    values.push({ metricName: `${family.name}_sum`, labels: { ...series.labels }, value: series.sumSeconds });
    values.push({ metricName: `${family.name}_count`, labels: { ...series.labels }, value: series.count });
  }
  return { name: family.name, help: family.help, type: 'histogram', aggregator: 'sum', values };
}

/** Merges the parts (samples with the same name and labels are summed) and renders the text. */
export async function renderExposition(parts: readonly (readonly MetricJson[])[]): Promise<string> {
  const registry = AggregatorRegistry.aggregate(parts.map((p) => [...p]));
  return registry.metrics();
}

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
