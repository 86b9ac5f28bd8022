import { CommandCode } from '../command-code.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readName, writeName } from '../encodings/name.js';
import { type BodyParts, defineCommand, nullableWhenEmpty, sequenceToEnd } from './command-codec.js';
import {
  CONSUMER_GROUP_ASSIGNMENT, CONSUMER_GROUP_DETAILS, CONSUMER_GROUP_INFO,
  type ConsumerGroupAssignment, type ConsumerGroupDetails, type ConsumerGroupInfo,
} from './consumer-group-response.js';
import { TOPIC_ID_BODY, type TopicIdRequest } from './topics.js';

/** Consumer group commands (commands.mdx "Consumer groups"). */
export interface GroupIdRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly groupId: Identifier;
}

export interface CreateConsumerGroupRequest {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly name: string;
}

export const GROUP_ID_BODY: BodyParts<GroupIdRequest> = {
  write: (w, req) => {
    writeIdentifier(w, req.streamId);
    writeIdentifier(w, req.topicId);
    writeIdentifier(w, req.groupId);
  },
  read: (r) => ({ streamId: readIdentifier(r, 'stream_id'), topicId: readIdentifier(r, 'topic_id'), groupId: readIdentifier(r, 'group_id') }),
};

export const getConsumerGroupCommand = defineCommand<GroupIdRequest, ConsumerGroupDetails | null>(
  CommandCode.GetConsumerGroup, GROUP_ID_BODY, nullableWhenEmpty(CONSUMER_GROUP_DETAILS),
);

export const getConsumerGroupsCommand = defineCommand<TopicIdRequest, ConsumerGroupInfo[]>(
  CommandCode.GetConsumerGroups, TOPIC_ID_BODY, sequenceToEnd(CONSUMER_GROUP_INFO),
);

/** `[stream_id][topic_id][name:Name]`; reply: the group details (no members yet). */
export const createConsumerGroupCommand = defineCommand<CreateConsumerGroupRequest, ConsumerGroupDetails>(
  CommandCode.CreateConsumerGroup,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      writeIdentifier(w, req.topicId);
      writeName(w, req.name);
    },
    read: (r) => ({ streamId: readIdentifier(r, 'stream_id'), topicId: readIdentifier(r, 'topic_id'), name: readName(r, 'group_name') }),
  },
  CONSUMER_GROUP_DETAILS,
);

export const deleteConsumerGroupCommand = defineCommand<GroupIdRequest, null>(CommandCode.DeleteConsumerGroup, GROUP_ID_BODY, null);

export const joinConsumerGroupCommand = defineCommand<GroupIdRequest, null>(CommandCode.JoinConsumerGroup, GROUP_ID_BODY, null);

export const leaveConsumerGroupCommand = defineCommand<GroupIdRequest, null>(CommandCode.LeaveConsumerGroup, GROUP_ID_BODY, null);

/** Read-only: the member's generation and assignment; empty reply = not a member (null). */
export const syncConsumerGroupCommand = defineCommand<GroupIdRequest, ConsumerGroupAssignment | null>(
  CommandCode.SyncConsumerGroup, GROUP_ID_BODY, nullableWhenEmpty(CONSUMER_GROUP_ASSIGNMENT),
);
