import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { CommandCode } from '../command-code.js';
import { type Consumer, readConsumer, writeConsumer } from '../encodings/consumer.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readOptionalPartitionId, writeOptionalPartitionId } from '../encodings/partition-id.js';
import { type BodyParts, defineCommand, nullableWhenEmpty } from './command-codec.js';
import { CONSUMER_OFFSET_INFO, type ConsumerOffsetInfo } from './message-responses.js';

/** Consumer offset commands (commands.mdx "Consumer offsets"). */
export const AckLevel = { NoAck: 0, Quorum: 1 } as const;
export type AckLevel = (typeof AckLevel)[keyof typeof AckLevel];

export interface GetConsumerOffsetRequest {
  readonly consumer: Consumer;
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionId: number | null;
}

export interface StoreConsumerOffsetRequest extends GetConsumerOffsetRequest {
  readonly offset: bigint;
  readonly ack: AckLevel;
}

export interface DeleteConsumerOffsetRequest extends GetConsumerOffsetRequest {
  readonly ack: AckLevel;
}

function writeTarget(w: ByteWriter, req: GetConsumerOffsetRequest): void {
  writeConsumer(w, req.consumer);
  writeIdentifier(w, req.streamId);
  writeIdentifier(w, req.topicId);
  writeOptionalPartitionId(w, req.partitionId);
}

function readTarget(r: ByteReader): GetConsumerOffsetRequest {
  return {
    consumer: readConsumer(r),
    streamId: readIdentifier(r, 'stream_id'),
    topicId: readIdentifier(r, 'topic_id'),
    partitionId: readOptionalPartitionId(r),
  };
}

/** The mandatory trailing ack byte: 0 NoAck, 1 Quorum; a payload without it fails to decode. */
function readAck(r: ByteReader): AckLevel {
  const ack = r.u8('ack');
  if (!r.failed && ack !== AckLevel.NoAck && ack !== AckLevel.Quorum) r.fail('unknown_ack_level');
  return ack === AckLevel.NoAck ? AckLevel.NoAck : AckLevel.Quorum;
}

const TARGET_BODY: BodyParts<GetConsumerOffsetRequest> = { write: writeTarget, read: readTarget };

/** Reply `[partition_id:u32][current_offset:u64][stored_offset:u64]`, empty when none is stored. */
export const getConsumerOffsetCommand = defineCommand<GetConsumerOffsetRequest, ConsumerOffsetInfo | null>(
  CommandCode.GetConsumerOffset, TARGET_BODY, nullableWhenEmpty(CONSUMER_OFFSET_INFO),
);

/** `[consumer][stream_id][topic_id][partition_flag][partition_id][offset:u64][ack:u8]`. */
export const storeConsumerOffsetCommand = defineCommand<StoreConsumerOffsetRequest, null>(
  CommandCode.StoreConsumerOffset,
  {
    write: (w, req) => {
      writeTarget(w, req);
      w.u64(req.offset).u8(req.ack);
    },
    read: (r) => {
      const target = readTarget(r);
      const offset = r.u64('offset');
      return { ...target, offset, ack: readAck(r) };
    },
  },
  null,
);

/** `[consumer][stream_id][topic_id][partition_flag][partition_id][ack:u8]`. */
export const deleteConsumerOffsetCommand = defineCommand<DeleteConsumerOffsetRequest, null>(
  CommandCode.DeleteConsumerOffset,
  {
    write: (w, req) => {
      writeTarget(w, req);
      w.u8(req.ack);
    },
    read: (r) => {
      const target = readTarget(r);
      return { ...target, ack: readAck(r) };
    },
  },
  null,
);
