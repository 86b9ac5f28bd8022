/**
 * Per-partition and consumer-group series, labelled by name: `stream` and `topic` are the names
 * (as the catalog has them now), `partition` the partition id, `group` the consumer group's
 * name. Every node reports its own replica of each partition (the owner shard's figures); a
 * backup's counters trail its primary's by the commits it has not applied yet.
 */
import type { Labels, MetricSet } from './metric-set.js';
import type { ThreadStats } from './thread-stats.js';

export function partitionMetrics(e: MetricSet, threads: readonly ThreadStats[]): void {
  const partitions = threads.flatMap((t) => t.partitions ?? []);
  const pl = (p: (typeof partitions)[number]): Labels => ({ stream: p.stream, topic: p.topic, partition: String(p.partition) });
  e.metric('shoal_partition_messages', 'gauge', 'Messages retained in the segments of a partition.', partitions.map((p) => [pl(p), p.messages] as const));
  e.metric('shoal_partition_messages_appended_total', 'counter', 'Messages appended to a partition since it was created or last purged (its next offset).',
    partitions.map((p) => [pl(p), p.appended] as const));
  e.metric('shoal_partition_current_offset', 'gauge', 'Offset of the newest committed message of a partition (0 when empty).', partitions.map((p) => [pl(p), p.currentOffset] as const));
  e.metric('shoal_partition_bytes', 'gauge', 'Bytes in the segments of a partition.', partitions.map((p) => [pl(p), p.bytes] as const));
  e.metric('shoal_partition_segments', 'gauge', 'Segments of a partition.', partitions.map((p) => [pl(p), p.segments] as const));
  e.metric('shoal_partition_primary', 'gauge', '1 when this node holds the acting primary of the partition, else 0.', partitions.map((p) => [pl(p), p.primary ? 1 : 0] as const));
  e.metric('shoal_partition_uncommitted_ops', 'gauge', 'Ops in the partition journal of this replica above its commit point (commit lag).',
    partitions.map((p) => [pl(p), Math.max(0, p.op - p.commit)] as const));

  const lags = threads.flatMap((t) => t.consumerGroups ?? []);
  const gl = (g: (typeof lags)[number]): Labels => ({ stream: g.stream, topic: g.topic, group: g.group, partition: String(g.partition) });
  e.metric('shoal_consumer_group_lag', 'gauge', 'Messages of a partition after the consumer group\'s stored offset (all retained messages when it stored none).',
    lags.map((g) => [gl(g), g.lag] as const));
  e.metric('shoal_consumer_group_offset', 'gauge', 'The consumer group\'s stored offset on a partition (absent when it stored none).',
    lags.filter((g) => g.storedOffset !== null).map((g) => [gl(g), g.storedOffset as number] as const));

  const catalog = threads.find((t) => t.catalog !== undefined)?.catalog;
  if (catalog === undefined) return;
  const topics = catalog.streams.flatMap((s) => s.topics.map((t) => ({ stream: s.name, ...t })));
  e.metric('shoal_streams', 'gauge', 'Streams in the catalog.', [[{}, catalog.streams.length]]);
  e.metric('shoal_topic_partitions', 'gauge', 'Partitions of a topic.', topics.map((t) => [{ stream: t.stream, topic: t.name }, t.partitions] as const));
  e.metric('shoal_consumer_group_members', 'gauge', 'Members of a consumer group.',
    topics.flatMap((t) => t.consumerGroups.map((g) => [{ stream: t.stream, topic: t.name, group: g.name }, g.members] as const)));
}
