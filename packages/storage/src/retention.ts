/**
 * Retention (storage-engine.mdx "Retention and cleanup", topic-options.mdx): which sealed
 * segments the cleaner deletes. Only ever SEALED segments, only ever a PREFIX of the log (the
 * oldest first), so a partition stays one contiguous offset range; the active segment is never
 * touched, even when all of its messages have expired.
 *
 * - `message_expiry`: a sealed segment whose newest batch (`lastTimestamp`, the base_timestamp
 *   of its last batch) is older than `now − expiry`, i.e. `lastTimestamp < now − expiry`. The
 *   scan stops at the first segment that has not expired (timestamps are non-decreasing, and a
 *   later expired segment behind a live one would open an offset gap).
 * - `max_topic_size`: like the reference, PER PARTITION: each partition keeps an equal share
 *   `max_topic_size / partition_count` of SEALED bytes, floored at one sealed-segment ceiling
 *   (`segment_size + max frame`, since a sealed segment overshoots by at most one batch), so the
 *   policy always means at least "keep the newest sealed segment". While sealed bytes exceed the
 *   share, the oldest sealed segment goes. No cross-partition coordination is needed (a
 *   partition's replicas can enforce it alone, deterministically).
 * - `DeleteSegments(count)`: the `count` oldest sealed segments.
 *
 * `now` is passed in (µs); storage has no clock.
 */
import { assert } from '@shoal/stdx';
import type { IoResult } from './disk.js';
import type { PartitionLog } from './partition-log.js';

/** `message_expiry` / `max_topic_size` wire sentinels (§9.3): 0 = server default, u64::MAX = never. */
export const RETENTION_NEVER = Number.POSITIVE_INFINITY;

/** Sealed segments (a prefix) whose newest batch is older than `nowMicros − expiryMicros`. */
export function expiredSegmentCount(log: PartitionLog, nowMicros: number, expiryMicros: number): number {
  if (!(expiryMicros > 0) || expiryMicros === RETENTION_NEVER) return 0;
  const cutoff = nowMicros - expiryMicros;
  let count = 0;
  for (const segment of log.segments) {
    if (!segment.sealed) break;
    if (!(segment.lastTimestamp < cutoff)) break;
    count++;
  }
  return count;
}

/**
 * The per-partition share of `max_topic_size` (reference rule, see the header). `frameMax` is the
 * largest batch a segment can overshoot by (`message_bus.max_message_size`).
 */
export function partitionShareOfTopicSize(maxTopicSize: number, partitionCount: number, segmentSize: number, frameMax: number): number {
  assert(partitionCount >= 1, 'retention: partitionCount must be >= 1');
  if (maxTopicSize === RETENTION_NEVER) return RETENTION_NEVER;
  return Math.max(Math.floor(maxTopicSize / partitionCount), segmentSize + frameMax);
}

/** Oldest sealed segments to delete so that sealed bytes fit in `budgetBytes`. */
export function oversizeSegmentCount(log: PartitionLog, budgetBytes: number): number {
  if (budgetBytes === RETENTION_NEVER) return 0;
  let sealed = log.sealedBytes;
  let count = 0;
  for (const segment of log.segments) {
    if (!segment.sealed || sealed <= budgetBytes) break;
    sealed -= segment.size;
    count++;
  }
  return count;
}

export interface RetentionPolicy {
  /** µs; `RETENTION_NEVER` or <= 0 disables. */
  readonly messageExpiryMicros: number;
  /** Per-partition sealed-bytes budget (see `partitionShareOfTopicSize`); `RETENTION_NEVER` disables. */
  readonly sealedBytesBudget: number;
}

export interface RetentionOutcome {
  readonly expired: number;
  readonly oversize: number;
  /** The log's start offset after the deletions. */
  readonly startOffset: number;
}

/** One cleaner pass: expiry first, then size. */
export function applyRetention(log: PartitionLog, policy: RetentionPolicy, nowMicros: number): IoResult<RetentionOutcome> {
  const expired = log.deleteOldestSealed(expiredSegmentCount(log, nowMicros, policy.messageExpiryMicros));
  if (!expired.ok) return expired;
  const oversize = log.deleteOldestSealed(oversizeSegmentCount(log, policy.sealedBytesBudget));
  if (!oversize.ok) return oversize;
  return { ok: true, value: { expired: expired.value, oversize: oversize.value, startOffset: log.startOffset } };
}

/** `DeleteSegments(count)`: the `count` oldest sealed segments (fewer when fewer are sealed). */
export function deleteSegments(log: PartitionLog, count: number): IoResult<number> {
  assert(Number.isInteger(count) && count >= 0, 'deleteSegments: count must be a non-negative integer');
  return log.deleteOldestSealed(count);
}
