import { ErrorCode, type PollingStrategy, pollMessagesCommand } from '@shoal/protocol';
import type { ConsumerRef } from './consumer-offsets.js';
import { type Outcome, accepted } from './outcome.js';
import type { PartitionState } from './partition-state.js';

/**
 * PollMessages on one partition: resolve the polling strategy into a read of storage, build the
 * reply from the batch records storage returns (no re-encoding: the records are copied into the
 * payload once, or handed out as parts for a gathered write), and auto-commit on the primary.
 *
 * Strategies (encodings.mdx; reference semantics):
 *   Offset(v)     start at v
 *   Timestamp(t)  start at the first message whose batch timestamp is >= t
 *   First         start at the first retained offset
 *   Last          the last `count` messages: max(first, last - count + 1)
 *   Next          stored consumer offset + 1, or 0 when none is stored (clamped up to the first
 *                 retained offset)
 * A start past the newest offset (or an empty log) answers an empty poll. count = 0 is
 * InvalidMessagesCount.
 */
export interface MessageLog {
  /** Lowest retained offset, or null when the partition holds no message. */
  firstOffset(): bigint | null;
  /** Newest committed offset, or null when empty. */
  lastOffset(): bigint | null;
  /** First offset whose batch base_timestamp is >= `timestamp` (µs), or null. */
  offsetAtTimestamp(timestamp: bigint): bigint | null;
  /**
   * Batch records holding messages [from, from + count) (fewer at the end of the log), the first
   * one sliced so it starts at `from` (protocol's sliceBatchParts), as parts whose concatenation
   * is the records: a whole record is one part (the stored bytes), a sliced one a new 256-byte
   * header and a view of its frames. Offsets are contiguous. The parts stay valid after later
   * reads (a reply holds them until the socket has written them).
   */
  read(from: bigint, count: number): MessageRead;
}

export interface MessageRead {
  readonly parts: readonly Uint8Array[];
  readonly messageCount: number;
  /** Gives the parts' read buffers back for reuse once nothing references them (idempotent; absent: nothing to give back). */
  readonly release?: () => void;
}

export type PollStart = { readonly kind: 'read'; readonly from: bigint } | { readonly kind: 'empty' };

export function resolvePollStart(strategy: PollingStrategy, count: number, stored: bigint | undefined, log: MessageLog): PollStart {
  const first = log.firstOffset();
  const last = log.lastOffset();
  if (first === null || last === null) return { kind: 'empty' };
  let from: bigint;
  switch (strategy.kind) {
    case 'offset': from = strategy.value; break;
    case 'timestamp': {
      const at = log.offsetAtTimestamp(strategy.value);
      if (at === null) return { kind: 'empty' };
      from = at;
      break;
    }
    case 'first': from = first; break;
    case 'last': {
      const back = last - BigInt(count) + 1n;
      from = back > first ? back : first;
      break;
    }
    case 'next': from = stored === undefined ? 0n : stored + 1n; break;
  }
  if (from < first) from = first;
  return from > last ? { kind: 'empty' } : { kind: 'read', from };
}

export interface PollRequest {
  readonly consumer: ConsumerRef;
  readonly strategy: PollingStrategy;
  readonly count: number;
  readonly autoCommit: boolean;
}

export interface PollReply {
  /** `[partition_id u32][current_offset u64][messages_count u32]`. */
  readonly prefix: Uint8Array;
  /**
   * The batch records as parts (`MessageRead.parts`: stored bytes, and a new header for a sliced
   * record), sent after the prefix as they are: nothing decoded or re-encoded.
   */
  readonly batches: readonly Uint8Array[];
  readonly messagesCount: number;
  /**
   * Call once the batches' bytes are no longer referenced (the socket wrote them, or they were
   * copied): their read buffers are reused (storage read-buffer-pool.ts). Never calling it is
   * safe; calling it early is not. Idempotent.
   */
  readonly release: () => void;
  /** Offset of the last message polled, or null when none. */
  readonly lastOffset: bigint | null;
  /** The whole payload (prefix + batches joined: one copy). */
  payload(): Uint8Array;
}

/**
 * Polls one partition. On the partition primary (`primary`), auto-commit stores the last polled
 * offset locally (NoAck, keeping the maximum); a follower serves the read but never advances the
 * durable offset (client-failover.mdx).
 */
export function pollPartition(partition: PartitionState, log: MessageLog, req: PollRequest, primary: boolean): { ok: true; reply: PollReply } | { ok: false; code: number } {
  if (req.count === 0) return { ok: false, code: ErrorCode.InvalidMessagesCount };
  const start = resolvePollStart(req.strategy, req.count, partition.offsets.get(req.consumer), log);
  const read = start.kind === 'read' ? log.read(start.from, req.count) : null;
  const batches = read?.parts ?? [];
  const messagesCount = read?.messageCount ?? 0;
  const lastOffset = start.kind === 'read' && messagesCount > 0 ? start.from + BigInt(messagesCount) - 1n : null;
  if (primary && req.autoCommit && lastOffset !== null) partition.autoCommit(req.consumer, lastOffset);
  const prefix = pollMessagesCommand.encodeResponse({
    partitionId: partition.identity.partitionId, currentOffset: partition.currentOffset, messagesCount, batches: new Uint8Array(0),
  });
  return {
    ok: true,
    reply: {
      prefix, batches, messagesCount, lastOffset, release: read?.release ?? noop,
      payload: () => {
        const total = batches.reduce((n, b) => n + b.length, prefix.length);
        const out = new Uint8Array(total);
        out.set(prefix, 0);
        let at = prefix.length;
        for (const b of batches) {
          out.set(b, at);
          at += b.length;
        }
        return out;
      },
    },
  };
}

function noop(): void {}

/** The empty poll reply (a group member with no partition assigned). */
export function emptyPollReply(): Outcome {
  return accepted(pollMessagesCommand.encodeResponse({ partitionId: 0, currentOffset: 0n, messagesCount: 0, batches: new Uint8Array(0) }));
}

