import { assert } from '@shoal/stdx';
import { readNonZero } from '../../codec/body-codec.js';
import { CommandCode } from '../command-code.js';
import { type Consumer, readConsumer, writeConsumer } from '../encodings/consumer.js';
import { type Identifier, identifierByteLength, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readOptionalPartitionId, writeOptionalPartitionId } from '../encodings/partition-id.js';
import { type Partitioning, partitioningByteLength, readPartitioning, writePartitioning } from '../encodings/partitioning.js';
import { type PollingStrategy, readPollingStrategy, writePollingStrategy } from '../encodings/polling-strategy.js';
import { defineCommand } from './command-codec.js';
import {
  POLLED_MESSAGES, SEND_MESSAGES_RESPONSE, type PolledMessages, type SendMessagesResponse,
} from './message-responses.js';

/** Message commands (commands.mdx "Messages"). */
export interface PollMessagesRequest {
  readonly consumer: Consumer;
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  /** null = unset (consumer groups: the server resolves it). */
  readonly partitionId: number | null;
  readonly strategy: PollingStrategy;
  readonly count: number;
  readonly autoCommit: boolean;
}

export interface SendMessagesRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitioning: Partitioning;
  readonly messagesCount: number;
  /**
   * The batch: 256-byte batch header + frames, opaque here (decoded by src/batch). A decode hands
   * back a view into the request body (no copy).
   */
  readonly batch: Uint8Array;
}

export interface FlushUnsavedBufferRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionId: number;
  readonly fsync: boolean;
}

/**
 * The batch header fields this codec knows the position of (messages.mdx; rust_test_values.json
 * `batch.offsets`). Only the length check and `peekBatchMessageCount` use them; the batch codec
 * lives in src/batch.
 */
export const BATCH_PREFIX = Object.freeze({ headerSize: 256, batchChecksumOffset: 40, messageCountOffset: 48, reservedStart: 52 });

/** `message_count` (u32 at 48) of a batch that holds at least its header; null otherwise. */
export function peekBatchMessageCount(batch: Uint8Array): number | null {
  if (batch.length < BATCH_PREFIX.headerSize) return null;
  return new DataView(batch.buffer, batch.byteOffset, batch.byteLength).getUint32(BATCH_PREFIX.messageCountOffset, true);
}

/** `metadata_length`: the bytes from stream_id through messages_count inclusive. */
export function sendMessagesMetadataLength(req: Pick<SendMessagesRequest, 'streamId' | 'topicId' | 'partitioning'>): number {
  return identifierByteLength(req.streamId) + identifierByteLength(req.topicId) + partitioningByteLength(req.partitioning) + 4;
}

/**
 * `[consumer][stream_id][topic_id][partition_flag:u8][partition_id:u32][strategy:9][count:u32]
 * [auto_commit:u8]`; reply `[partition_id:u32][current_offset:u64][messages_count:u32][records]`.
 */
export const pollMessagesCommand = defineCommand<PollMessagesRequest, PolledMessages>(
  CommandCode.PollMessages,
  {
    write: (w, req) => {
      writeConsumer(w, req.consumer);
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      writeOptionalPartitionId(w, req.partitionId);
      writePollingStrategy(w, req.strategy);
      w.u32(req.count).u8(req.autoCommit ? 1 : 0);
    },
    read: (r) => ({
      consumer: readConsumer(r),
      streamId: readIdentifier(r, 'stream_id'),
      topicId: readIdentifier(r, 'topic_id'),
      partitionId: readOptionalPartitionId(r),
      strategy: readPollingStrategy(r),
      count: r.u32('count'),
      autoCommit: readNonZero(r, 'auto_commit'),
    }),
  },
  POLLED_MESSAGES,
);

/**
 * `[metadata_length:u32][stream_id][topic_id][partitioning][messages_count:u32][batch]`.
 * The decoder checks that metadata_length covers the bytes the metadata actually took (extra
 * metadata bytes are skipped, as the reference does) and that a batch header follows; the batch itself is returned as a view. Reply: SendMessages confirmations.
 */
export const sendMessagesCommand = defineCommand<SendMessagesRequest, SendMessagesResponse>(
  CommandCode.SendMessages,
  {
    write: (w, req) => {
      assert(req.batch.length >= BATCH_PREFIX.headerSize, 'SendMessages batch shorter than its header');
      w.u32(sendMessagesMetadataLength(req));
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      writePartitioning(w, req.partitioning);
      w.u32(req.messagesCount).bytes(req.batch);
    },
    read: (r) => {
      const metadataLength = r.u32('metadata_length');
      const start = r.offset;
      const streamId = readIdentifier(r, 'stream_id');
      const topicId = readIdentifier(r, 'topic_id');
      const partitioning = readPartitioning(r);
      const messagesCount = r.u32('messages_count');
      // The reference decodes the header from `body[4 .. 4 + metadata_length]` and ignores what is
      // left of that slice (responses.rs `decode_from`): a longer metadata_length is accepted, a
      // shorter one (the header would overrun it) is not.
      const consumed = r.offset - start;
      if (!r.failed && consumed > metadataLength) r.fail('metadata_length_mismatch');
      if (!r.failed) r.bytesView(metadataLength - consumed, 'metadata_padding');
      const batch = r.rest();
      if (!r.failed && batch.length < BATCH_PREFIX.headerSize) r.fail('batch_header_truncated');
      return { streamId, topicId, partitioning, messagesCount, batch };
    },
  },
  SEND_MESSAGES_RESPONSE,
);

/** `[stream_id][topic_id][partition_id:u32][fsync:u8]`; always answered with FeatureUnavailable. */
export const flushUnsavedBufferCommand = defineCommand<FlushUnsavedBufferRequest, null>(
  CommandCode.FlushUnsavedBuffer,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      w.u32(req.partitionId).u8(req.fsync ? 1 : 0);
    },
    read: (r) => ({
      streamId: readIdentifier(r, 'stream_id'),
      topicId: readIdentifier(r, 'topic_id'),
      partitionId: r.u32('partition_id'),
      fsync: readNonZero(r, 'fsync'),
    }),
  },
  null,
);
