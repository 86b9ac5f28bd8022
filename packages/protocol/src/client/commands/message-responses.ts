import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import type { BodyParts } from './command-codec.js';

/**
 * Message-plane replies.
 *
 *   PollMessages       [partition_id:u32][current_offset:u64][messages_count:u32][batch records to end]
 *                      (commands.mdx; the records are opaque here: decoded by src/batch)
 *   SendMessages       [confirmations_count:u32] x {stream_id:u32 topic_id:u32 partition_id:u32 base_offset:u64}
 *                      (core/binary_protocol/src/responses/messages/send_messages.rs; the 20-byte
 *                      entry is frozen; trailing bytes are rejected)
 *   GetConsumerOffset  [partition_id:u32][current_offset:u64][stored_offset:u64]  20 bytes (commands.mdx),
 *                      an empty payload when the consumer has no stored offset (pre-VSR server)
 */
export interface PolledMessages {
  readonly partitionId: number;
  readonly currentOffset: bigint;
  readonly messagesCount: number;
  /** The batch records as served, a view (no copy). */
  readonly batches: Uint8Array;
}

export interface SendMessagesConfirmation {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  readonly baseOffset: bigint;
}

export interface SendMessagesResponse {
  readonly confirmations: readonly SendMessagesConfirmation[];
}

export interface ConsumerOffsetInfo {
  readonly partitionId: number;
  readonly currentOffset: bigint;
  readonly storedOffset: bigint;
}

export const POLL_RESPONSE_PREFIX_SIZE = 16;
export const SEND_MESSAGES_CONFIRMATION_SIZE = 20;
export const CONSUMER_OFFSET_INFO_SIZE = 20;

export const POLLED_MESSAGES: BodyParts<PolledMessages> = {
  write: (w: ByteWriter, p: PolledMessages) => {
    w.u32(p.partitionId).u64(p.currentOffset).u32(p.messagesCount).bytes(p.batches);
  },
  read: (r: ByteReader) => ({
    partitionId: r.u32('partition_id'),
    currentOffset: r.u64('current_offset'),
    messagesCount: r.u32('messages_count'),
    batches: r.rest(),
  }),
};

export const SEND_MESSAGES_RESPONSE: BodyParts<SendMessagesResponse> = {
  write: (w, res) => {
    w.u32(res.confirmations.length);
    for (const c of res.confirmations) w.u32(c.streamId).u32(c.topicId).u32(c.partitionId).u64(c.baseOffset);
  },
  read: (r) => {
    const count = r.u32('confirmations_count');
    const confirmations: SendMessagesConfirmation[] = [];
    if (checkCount(r, count, SEND_MESSAGES_CONFIRMATION_SIZE, 'confirmations')) {
      for (let i = 0; i < count && !r.failed; i++) {
        confirmations.push({ streamId: r.u32('stream_id'), topicId: r.u32('topic_id'), partitionId: r.u32('partition_id'), baseOffset: r.u64('base_offset') });
      }
    }
    return { confirmations };
  },
};

export const CONSUMER_OFFSET_INFO: BodyParts<ConsumerOffsetInfo> = {
  write: (w, o) => {
    w.u32(o.partitionId).u64(o.currentOffset).u64(o.storedOffset);
  },
  read: (r) => ({ partitionId: r.u32('partition_id'), currentOffset: r.u64('current_offset'), storedOffset: r.u64('stored_offset') }),
};
