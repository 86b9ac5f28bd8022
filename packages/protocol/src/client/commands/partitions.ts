import { CommandCode } from '../command-code.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { type BodyParts, defineCommand } from './command-codec.js';

/** Partition and segment commands (commands.mdx "Partitions", "Segments"). */
export interface PartitionsCountRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionsCount: number;
}

export interface DeleteSegmentsRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionId: number;
  readonly segmentsCount: number;
}

const PARTITIONS_COUNT_BODY: BodyParts<PartitionsCountRequest> = {
  write: (w, req) => {
    writeIdentifier(w, req.streamId);
    writeIdentifier(w, req.topicId);
    w.u32(req.partitionsCount);
  },
  read: (r) => ({ streamId: readIdentifier(r, 'stream_id'), topicId: readIdentifier(r, 'topic_id'), partitionsCount: r.u32('partitions_count') }),
};

export const createPartitionsCommand = defineCommand<PartitionsCountRequest, null>(CommandCode.CreatePartitions, PARTITIONS_COUNT_BODY, null);

export const deletePartitionsCommand = defineCommand<PartitionsCountRequest, null>(CommandCode.DeletePartitions, PARTITIONS_COUNT_BODY, null);

/** `[stream_id][topic_id][partition_id:u32][segments_count:u32]`: deletes the oldest sealed segments. */
export const deleteSegmentsCommand = defineCommand<DeleteSegmentsRequest, null>(
  CommandCode.DeleteSegments,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      w.u32(req.partitionId).u32(req.segmentsCount);
    },
    read: (r) => ({
      streamId: readIdentifier(r, 'stream_id'),
      topicId: readIdentifier(r, 'topic_id'),
      partitionId: r.u32('partition_id'),
      segmentsCount: r.u32('segments_count'),
    }),
  },
  null,
);
