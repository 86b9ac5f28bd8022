import { CommandCode } from '../command-code.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readName, writeName } from '../encodings/name.js';
import { type OptionEntry, readOptionsToEnd, writeOptionsBlock } from '../encodings/options-block.js';
import { type BodyParts, defineCommand, nullableWhenEmpty } from './command-codec.js';
import { STREAM_ID_BODY, type StreamIdRequest } from './streams.js';
import { TOPIC_DETAILS, TOPIC_LIST, type TopicDetails, type TopicInfo } from './stream-response.js';

/** Topic commands (commands.mdx "Topics"). */
export interface TopicIdRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
}

export interface CreateTopicRequest {
  readonly streamId: Identifier;
  readonly partitionsCount: number;
  readonly name: string;
  readonly options: readonly OptionEntry[];
}

export interface UpdateTopicRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly name: string;
  readonly options: readonly OptionEntry[];
}

export const TOPIC_ID_BODY: BodyParts<TopicIdRequest> = {
  write: (w, req) => {
    writeIdentifier(w, req.streamId);
    writeIdentifier(w, req.topicId);
  },
  read: (r) => ({ streamId: readIdentifier(r, 'stream_id'), topicId: readIdentifier(r, 'topic_id') }),
};

export const getTopicCommand = defineCommand<TopicIdRequest, TopicDetails | null>(CommandCode.GetTopic, TOPIC_ID_BODY, nullableWhenEmpty(TOPIC_DETAILS));

/** `[stream_id]`; reply: `[topics_count:u32][TopicHeader x count]`. */
export const getTopicsCommand = defineCommand<StreamIdRequest, TopicInfo[]>(CommandCode.GetTopics, STREAM_ID_BODY, TOPIC_LIST);

/** `[stream_id][partitions_count:u32][name:Name][options block to end]`; reply: GetTopic layout. */
export const createTopicCommand = defineCommand<CreateTopicRequest, TopicDetails>(
  CommandCode.CreateTopic,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      w.u32(req.partitionsCount);
      writeName(w, req.name);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => ({
      streamId: readIdentifier(r, 'stream_id'),
      partitionsCount: r.u32('partitions_count'),
      name: readName(r, 'topic_name'),
      options: readOptionsToEnd(r),
    }),
  },
  TOPIC_DETAILS,
);

export const deleteTopicCommand = defineCommand<TopicIdRequest, null>(CommandCode.DeleteTopic, TOPIC_ID_BODY, null);

/** `[stream_id][topic_id][name:Name][options block to end]`. */
export const updateTopicCommand = defineCommand<UpdateTopicRequest, null>(
  CommandCode.UpdateTopic,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      writeName(w, req.name);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => ({
      streamId: readIdentifier(r, 'stream_id'),
      topicId: readIdentifier(r, 'topic_id'),
      name: readName(r, 'topic_name'),
      options: readOptionsToEnd(r),
    }),
  },
  null,
);

export const purgeTopicCommand = defineCommand<TopicIdRequest, null>(CommandCode.PurgeTopic, TOPIC_ID_BODY, null);
