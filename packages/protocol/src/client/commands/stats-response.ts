import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readLongString, writeLongString } from '../encodings/name.js';
import type { BodyParts } from './command-codec.js';

/**
 * GetStats reply (apache/iggy core/binary_protocol/src/responses/system/get_stats.rs):
 *
 *   [process_id:u32][cpu_usage:f32][total_cpu_usage:f32][memory_usage:u64][total_memory:u64]
 *   [available_memory:u64][run_time:u64][start_time:u64][read_bytes:u64][written_bytes:u64]
 *   [messages_size_bytes:u64][streams_count:u32][topics_count:u32][partitions_count:u32]
 *   [segments_count:u32][messages_count:u64][clients_count:u32][consumer_groups_count:u32]   108 bytes
 *   [hostname:u32 string][os_name:u32 string][os_version:u32 string][kernel_version:u32 string]
 *   [iggy_server_version:u32 string][iggy_server_semver:u32, 0 = none]
 *   [cache_metrics_count:u32] x {stream_id:u32 topic_id:u32 partition_id:u32 hits:u64 misses:u64 hit_ratio:f32}
 *   [threads_count:u32][free_disk_space:u64][total_disk_space:u64]
 *
 * Chosen strictness: every field is required (the reference decoder tolerates a missing semver and
 * tail from older servers; a Shoal server always writes them).
 */
export interface CacheMetric {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  readonly hits: bigint;
  readonly misses: bigint;
  readonly hitRatio: number;
}

export interface Stats {
  readonly processId: number;
  readonly cpuUsage: number;
  readonly totalCpuUsage: number;
  readonly memoryUsage: bigint;
  readonly totalMemory: bigint;
  readonly availableMemory: bigint;
  readonly runTime: bigint;
  readonly startTime: bigint;
  readonly readBytes: bigint;
  readonly writtenBytes: bigint;
  readonly messagesSizeBytes: bigint;
  readonly streamsCount: number;
  readonly topicsCount: number;
  readonly partitionsCount: number;
  readonly segmentsCount: number;
  readonly messagesCount: bigint;
  readonly clientsCount: number;
  readonly consumerGroupsCount: number;
  readonly hostname: string;
  readonly osName: string;
  readonly osVersion: string;
  readonly kernelVersion: string;
  readonly iggyServerVersion: string;
  /** Packed semver; 0 = absent. */
  readonly iggyServerSemver: number;
  readonly cacheMetrics: readonly CacheMetric[];
  readonly threadsCount: number;
  readonly freeDiskSpace: bigint;
  readonly totalDiskSpace: bigint;
}

export const STATS_NUMERIC_PREFIX_SIZE = 108;
export const CACHE_METRIC_SIZE = 32;

export const STATS: BodyParts<Stats> = {
  write: (w: ByteWriter, s: Stats) => {
    w.u32(s.processId).f32(s.cpuUsage).f32(s.totalCpuUsage).u64(s.memoryUsage).u64(s.totalMemory)
      .u64(s.availableMemory).u64(s.runTime).u64(s.startTime).u64(s.readBytes).u64(s.writtenBytes)
      .u64(s.messagesSizeBytes).u32(s.streamsCount).u32(s.topicsCount).u32(s.partitionsCount)
      .u32(s.segmentsCount).u64(s.messagesCount).u32(s.clientsCount).u32(s.consumerGroupsCount);
    for (const text of [s.hostname, s.osName, s.osVersion, s.kernelVersion, s.iggyServerVersion]) writeLongString(w, text);
    w.u32(s.iggyServerSemver).u32(s.cacheMetrics.length);
    for (const m of s.cacheMetrics) w.u32(m.streamId).u32(m.topicId).u32(m.partitionId).u64(m.hits).u64(m.misses).f32(m.hitRatio);
    w.u32(s.threadsCount).u64(s.freeDiskSpace).u64(s.totalDiskSpace);
  },
  read: (r: ByteReader): Stats => {
    const processId = r.u32('process_id');
    const cpuUsage = r.f32('cpu_usage');
    const totalCpuUsage = r.f32('total_cpu_usage');
    const memoryUsage = r.u64('memory_usage');
    const totalMemory = r.u64('total_memory');
    const availableMemory = r.u64('available_memory');
    const runTime = r.u64('run_time');
    const startTime = r.u64('start_time');
    const readBytes = r.u64('read_bytes');
    const writtenBytes = r.u64('written_bytes');
    const messagesSizeBytes = r.u64('messages_size_bytes');
    const streamsCount = r.u32('streams_count');
    const topicsCount = r.u32('topics_count');
    const partitionsCount = r.u32('partitions_count');
    const segmentsCount = r.u32('segments_count');
    const messagesCount = r.u64('messages_count');
    const clientsCount = r.u32('clients_count');
    const consumerGroupsCount = r.u32('consumer_groups_count');
    const hostname = readLongString(r, 'hostname');
    const osName = readLongString(r, 'os_name');
    const osVersion = readLongString(r, 'os_version');
    const kernelVersion = readLongString(r, 'kernel_version');
    // The official Node SDK reads nothing after kernel_version, so a reply that ends there (an
    // older server's) is accepted: what follows is read when present, else its default.
    const more = (): boolean => !r.failed && r.remaining > 0;
    const iggyServerVersion = more() ? readLongString(r, 'iggy_server_version') : '';
    const iggyServerSemver = more() ? r.u32('iggy_server_semver') : 0;
    const count = more() ? r.u32('cache_metrics_count') : 0;
    const cacheMetrics: CacheMetric[] = [];
    if (checkCount(r, count, CACHE_METRIC_SIZE, 'cache_metrics')) {
      for (let i = 0; i < count && !r.failed; i++) {
        cacheMetrics.push({
          streamId: r.u32('stream_id'), topicId: r.u32('topic_id'), partitionId: r.u32('partition_id'),
          hits: r.u64('hits'), misses: r.u64('misses'), hitRatio: r.f32('hit_ratio'),
        });
      }
    }
    const threadsCount = more() ? r.u32('threads_count') : 0;
    const freeDiskSpace = more() ? r.u64('free_disk_space') : 0n;
    const totalDiskSpace = more() ? r.u64('total_disk_space') : 0n;
    return {
      processId, cpuUsage, totalCpuUsage, memoryUsage, totalMemory, availableMemory, runTime, startTime,
      readBytes, writtenBytes, messagesSizeBytes, streamsCount, topicsCount, partitionsCount, segmentsCount,
      messagesCount, clientsCount, consumerGroupsCount, hostname, osName, osVersion, kernelVersion,
      iggyServerVersion, iggyServerSemver, cacheMetrics, threadsCount, freeDiskSpace, totalDiskSpace,
    };
  },
};
