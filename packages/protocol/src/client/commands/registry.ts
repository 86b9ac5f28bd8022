import type { AnyCommandCodec } from './command-codec.js';
import { deleteConsumerOffsetCommand, getConsumerOffsetCommand, storeConsumerOffsetCommand } from './consumer-offsets.js';
import {
  createConsumerGroupCommand, deleteConsumerGroupCommand, getConsumerGroupCommand, getConsumerGroupsCommand,
  joinConsumerGroupCommand, leaveConsumerGroupCommand, syncConsumerGroupCommand,
} from './consumer-groups.js';
import { flushUnsavedBufferCommand, pollMessagesCommand, sendMessagesCommand } from './messages.js';
import { createPartitionsCommand, deletePartitionsCommand, deleteSegmentsCommand } from './partitions.js';
import {
  createPersonalAccessTokenCommand, deletePersonalAccessTokenCommand, getPersonalAccessTokensCommand,
} from './personal-access-tokens.js';
import {
  loginRegisterCommand, loginRegisterWithPatCommand, loginUserCommand, loginWithPersonalAccessTokenCommand, logoutUserCommand,
} from './session.js';
import {
  createStreamCommand, deleteStreamCommand, getStreamCommand, getStreamsCommand, purgeStreamCommand, updateStreamCommand,
} from './streams.js';
import {
  describeOptionsCommand, getClientCommand, getClientsCommand, getClusterMetadataCommand, getMeCommand, getSnapshotCommand,
  getStatsCommand, pingCommand,
} from './system.js';
import {
  createTopicCommand, deleteTopicCommand, getTopicCommand, getTopicsCommand, purgeTopicCommand, updateTopicCommand,
} from './topics.js';
import {
  changePasswordCommand, createUserCommand, deleteUserCommand, getUserCommand, getUsersCommand, updatePermissionsCommand,
  updateUserCommand,
} from './users.js';

/** Every command of commands.mdx, by code (51 entries, the same set as COMMANDS). */
export const CLIENT_COMMANDS: ReadonlyMap<number, AnyCommandCodec> = new Map(
  ([
    pingCommand, getStatsCommand, getSnapshotCommand, getClusterMetadataCommand, describeOptionsCommand, getMeCommand,
    getClientCommand, getClientsCommand,
    getUserCommand, getUsersCommand, createUserCommand, deleteUserCommand, updateUserCommand, updatePermissionsCommand,
    changePasswordCommand, loginUserCommand, logoutUserCommand, loginRegisterCommand, loginRegisterWithPatCommand,
    getPersonalAccessTokensCommand, createPersonalAccessTokenCommand, deletePersonalAccessTokenCommand,
    loginWithPersonalAccessTokenCommand,
    pollMessagesCommand, sendMessagesCommand, flushUnsavedBufferCommand,
    getConsumerOffsetCommand, storeConsumerOffsetCommand, deleteConsumerOffsetCommand,
    getStreamCommand, getStreamsCommand, createStreamCommand, deleteStreamCommand, updateStreamCommand, purgeStreamCommand,
    getTopicCommand, getTopicsCommand, createTopicCommand, deleteTopicCommand, updateTopicCommand, purgeTopicCommand,
    createPartitionsCommand, deletePartitionsCommand, deleteSegmentsCommand,
    getConsumerGroupCommand, getConsumerGroupsCommand, createConsumerGroupCommand, deleteConsumerGroupCommand,
    joinConsumerGroupCommand, leaveConsumerGroupCommand, syncConsumerGroupCommand,
  ] as AnyCommandCodec[]).map((codec) => [codec.code, codec]),
);

export function commandCodec(code: number): AnyCommandCodec | null {
  return CLIENT_COMMANDS.get(code) ?? null;
}
