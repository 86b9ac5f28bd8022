import {
  type ClientDetails, type ClusterMetadata, CommandCode, ErrorCode, type Stats, type StreamInfo, describeOptionsCommand,
  getClientCommand, getClientsCommand, getClusterMetadataCommand, getConsumerGroupCommand, getConsumerGroupsCommand,
  getMeCommand, getPersonalAccessTokensCommand, getStatsCommand, getStreamCommand, getStreamsCommand, getTopicCommand,
  getTopicsCommand, getUserCommand, getUsersCommand, syncConsumerGroupCommand,
} from '@shoal/protocol';
import { groupDetails, memberOf, pollablePartitions } from './consumer-groups.js';
import { findGroup, findStream, findTopic, findUser, groupsInOrder } from './lookup.js';
import type { MetadataState } from './metadata-state.js';
import type { Stream } from './model.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';
import { type PartitionCountersSource, ZERO_COUNTERS } from './partitions.js';
import {
  canReadServers, canReadStream, canReadStreams, canReadTopic, canReadTopics, canReadUsers,
} from './permissions.js';
import { tokensOf } from './personal-access-tokens.js';
import { describeOptions } from './topic-options.js';
import { topicDetails, topicInfo } from './topics.js';
import { userDetails, userInfo } from './users.js';

/**
 * Non-replicated commands, answered from local state (any replica). Each returns the exact
 * response payload (after status 0, no result section) or an IggyError code. Node-local facts
 * (connections, process metrics, cluster roster, live partition counters) come from the host.
 *
 * "Get one" reads answer an EMPTY payload when the target does not exist (the SDKs read it as
 * none); a missing parent (the stream of GetTopic) is a not-found code. A target that exists but
 * is not visible to the user is Unauthorized.
 */

/** A connection as the host knows it (node-local; never replicated). */
export interface ClientSession {
  /** The u32 id GetClient addresses and ClientResponse carries. */
  readonly clientId: number;
  /** The VSR client id (u128) of the logged-in session, for consumer-group membership; null before login. */
  readonly vsrClient: bigint | null;
  readonly userId: number | null;
  /** 1 TCP, 2 QUIC, 3 HTTP, 4 WebSocket. */
  readonly transport: number;
  readonly address: string;
}

/** Process and storage metrics GetStats needs that only the host has. */
export type HostStats = Omit<Stats, 'streamsCount' | 'topicsCount' | 'partitionsCount' | 'consumerGroupsCount' | 'segmentsCount' | 'messagesCount' | 'messagesSizeBytes'>;

export interface ReadHost {
  /** Live partition counters (current offset, segments, size, messages). */
  readonly counters?: PartitionCountersSource;
  /** Every connection of this node (GetClients, GetClient). */
  readonly sessions?: () => readonly ClientSession[];
  /** The caller's own connection (GetMe). */
  readonly me?: ClientSession;
  readonly stats?: () => HostStats;
  /**
   * Roster with each node's role and status codes, as the host's consensus view says; `me` (the
   * caller's connection) picks each node's advertised address for the caller's network.
   */
  readonly cluster?: (me: ClientSession | undefined) => ClusterMetadata;
}

export interface ReadRequest {
  readonly code: number;
  readonly body: Uint8Array;
  /** The session's user (null = not logged in: only Ping is served). */
  readonly userId: number | null;
  /** The session's VSR client (SyncConsumerGroup). */
  readonly client: bigint;
  readonly host?: ReadHost;
}

const noCounters: PartitionCountersSource = () => null;

export function answerRead(state: MetadataState, req: ReadRequest): Outcome {
  // The reference's PingRequest reads nothing, so a body is ignored (requests/system/ping.rs).
  if (req.code === CommandCode.Ping) return accepted();
  if (req.userId === null) return rejected(ErrorCode.Unauthenticated);
  const actor = state.user(req.userId);
  const host = req.host ?? {};
  const counters = host.counters ?? noCounters;
  const m = state.model;
  switch (req.code) {
    case CommandCode.GetStreams: {
      if (getStreamsCommand.decodeRequest(req.body).ok === false) return rejected(ErrorCode.InvalidCommand);
      if (!canReadStreams(actor)) return rejected(ErrorCode.Unauthorized);
      return accepted(getStreamsCommand.encodeResponse([...m.streams.values()].map((s) => streamInfo(s, counters))));
    }
    case CommandCode.GetStream: {
      const r = getStreamCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      const stream = findStream(m, r.value.streamId);
      if (stream === undefined) return accepted();
      if (!canReadStream(actor, stream.id)) return rejected(ErrorCode.Unauthorized);
      const topics = [...stream.topics.values()].map((t) => topicInfo(stream, t, counters));
      return accepted(getStreamCommand.encodeResponse({ ...streamInfo(stream, counters), topics }));
    }
    case CommandCode.GetTopics: {
      const r = getTopicsCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      // A missing stream lists as empty, as the reference (server responses.rs build_get_topics_response).
      const stream = findStream(m, r.value.streamId);
      if (stream === undefined) return accepted(getTopicsCommand.encodeResponse([]));
      if (!canReadTopics(actor, stream.id)) return rejected(ErrorCode.Unauthorized);
      return accepted(getTopicsCommand.encodeResponse([...stream.topics.values()].map((t) => topicInfo(stream, t, counters))));
    }
    case CommandCode.GetTopic: {
      const r = getTopicCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      // A missing stream or topic is "none" (an empty reply), as the reference's build_get_topic_response.
      const stream = findStream(m, r.value.streamId);
      if (stream === undefined) return accepted();
      const topic = findTopic(stream, r.value.topicId);
      if (topic === undefined) return accepted();
      if (!canReadTopic(actor, stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
      return accepted(getTopicCommand.encodeResponse(topicDetails(stream, topic, counters)));
    }
    case CommandCode.GetConsumerGroups: {
      const r = getConsumerGroupsCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      const found = state.topic(r.value.streamId, r.value.topicId);
      if (found === undefined) return rejected(findStream(m, r.value.streamId) === undefined ? NotFound.stream : NotFound.topic);
      if (!canReadTopic(actor, found.stream.id, found.topic.id)) return rejected(ErrorCode.Unauthorized);
      const list = groupsInOrder(found.topic).map((g) => {
        const d = groupDetails(found.topic, g);
        return { id: d.id, partitionsCount: d.partitionsCount, membersCount: d.membersCount, name: d.name };
      });
      return accepted(getConsumerGroupsCommand.encodeResponse(list));
    }
    case CommandCode.GetConsumerGroup:
    case CommandCode.SyncConsumerGroup: {
      const r = getConsumerGroupCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      const found = state.topic(r.value.streamId, r.value.topicId);
      if (found === undefined) return rejected(findStream(m, r.value.streamId) === undefined ? NotFound.stream : NotFound.topic);
      const group = findGroup(found.topic, r.value.groupId);
      if (group === undefined) return accepted();
      if (!canReadTopic(actor, found.stream.id, found.topic.id)) return rejected(ErrorCode.Unauthorized);
      if (req.code === CommandCode.GetConsumerGroup) return accepted(getConsumerGroupCommand.encodeResponse(groupDetails(found.topic, group)));
      const member = memberOf(group, req.client);
      if (member === undefined) return accepted();
      return accepted(syncConsumerGroupCommand.encodeResponse({ generation: group.generation, partitions: pollablePartitions(member) }));
    }
    case CommandCode.GetUser: {
      const r = getUserCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      // Not found before permission (the reference's gate_user_scoped): a miss is an empty reply.
      const user = findUser(m, r.value.userId);
      if (user === undefined) return accepted();
      if (user.id !== req.userId && !canReadUsers(actor)) return rejected(ErrorCode.Unauthorized);
      return accepted(getUserCommand.encodeResponse(userDetails(user)));
    }
    case CommandCode.GetUsers: {
      if (!canReadUsers(actor)) return rejected(ErrorCode.Unauthorized);
      return accepted(getUsersCommand.encodeResponse([...m.users.values()].map(userInfo)));
    }
    case CommandCode.GetPersonalAccessTokens:
      if (actor === undefined) return rejected(ErrorCode.Unauthenticated);
      return accepted(getPersonalAccessTokensCommand.encodeResponse(tokensOf(actor)));
    case CommandCode.DescribeOptions: {
      const r = describeOptionsCommand.decodeRequest(req.body);
      if (!r.ok) return rejected(ErrorCode.InvalidCommand);
      return accepted(describeOptionsCommand.encodeResponse(describeOptions(r.value.scope)));
    }
    case CommandCode.GetMe: {
      if (host.me === undefined) return rejected(ErrorCode.FeatureUnavailable);
      return accepted(getMeCommand.encodeResponse(clientDetails(state, host.me)));
    }
    case CommandCode.GetClients: {
      if (!canReadServers(actor)) return rejected(ErrorCode.Unauthorized);
      if (host.sessions === undefined) return rejected(ErrorCode.FeatureUnavailable);
      return accepted(getClientsCommand.encodeResponse(host.sessions().map((s) => {
        const d = clientDetails(state, s);
        return { clientId: d.clientId, userId: d.userId, transport: d.transport, address: d.address, consumerGroupsCount: d.consumerGroupsCount };
      })));
    }
    case CommandCode.GetClient: {
      if (!canReadServers(actor)) return rejected(ErrorCode.Unauthorized);
      if (host.sessions === undefined) return rejected(ErrorCode.FeatureUnavailable);
      // An undecodable body finds no client (an empty reply), as the reference's GET_CLIENT arm.
      const r = getClientCommand.decodeRequest(req.body);
      if (!r.ok) return accepted();
      const session = host.sessions().find((s) => s.clientId === r.value.clientId);
      return session === undefined ? accepted() : accepted(getClientCommand.encodeResponse(clientDetails(state, session)));
    }
    case CommandCode.GetStats: {
      if (!canReadServers(actor)) return rejected(ErrorCode.Unauthorized);
      if (host.stats === undefined) return rejected(ErrorCode.FeatureUnavailable);
      return accepted(getStatsCommand.encodeResponse({ ...host.stats(), ...stateCounts(state, counters) }));
    }
    case CommandCode.GetClusterMetadata:
      if (host.cluster === undefined) return rejected(ErrorCode.FeatureUnavailable);
      return accepted(getClusterMetadataCommand.encodeResponse(host.cluster(host.me)));
    // GetSnapshot builds a diagnostics archive of the host (logs, config, process list): out of
    // scope for a state machine. FlushUnsavedBuffer always fails (commands.mdx).
    case CommandCode.GetSnapshot:
    case CommandCode.FlushUnsavedBuffer:
      return rejected(ErrorCode.FeatureUnavailable);
    default:
      return rejected(ErrorCode.InvalidCommand);
  }
}

function streamInfo(stream: Stream, counters: PartitionCountersSource): StreamInfo {
  let sizeBytes = 0n;
  let messagesCount = 0n;
  for (const topic of stream.topics.values()) {
    for (const p of topic.partitions) {
      const c = counters(stream.id, topic.id, p.id) ?? ZERO_COUNTERS;
      sizeBytes += c.sizeBytes;
      messagesCount += c.messagesCount;
    }
  }
  return { id: stream.id, createdAt: stream.createdAt, topicsCount: stream.topics.size, sizeBytes, messagesCount, name: stream.name, options: [] };
}

/** ClientResponse + the session's consumer-group memberships (from replicated state). */
export function clientDetails(state: MetadataState, session: ClientSession): ClientDetails {
  const consumerGroups = session.vsrClient === null ? [] : state.membershipsOf(session.vsrClient);
  return {
    clientId: session.clientId, userId: session.userId, transport: session.transport, address: session.address,
    consumerGroupsCount: consumerGroups.length, consumerGroups,
  };
}

/** The counts GetStats takes from replicated state (and the partition counters). */
export function stateCounts(state: MetadataState, counters: PartitionCountersSource):
  Pick<Stats, 'streamsCount' | 'topicsCount' | 'partitionsCount' | 'consumerGroupsCount' | 'segmentsCount' | 'messagesCount' | 'messagesSizeBytes'> {
  let topicsCount = 0;
  let partitionsCount = 0;
  let consumerGroupsCount = 0;
  let segmentsCount = 0;
  let messagesCount = 0n;
  let messagesSizeBytes = 0n;
  for (const stream of state.model.streams.values()) {
    for (const topic of stream.topics.values()) {
      topicsCount++;
      consumerGroupsCount += topic.consumerGroups.size;
      for (const p of topic.partitions) {
        partitionsCount++;
        const c = counters(stream.id, topic.id, p.id) ?? ZERO_COUNTERS;
        segmentsCount += c.segmentsCount;
        messagesCount += c.messagesCount;
        messagesSizeBytes += c.sizeBytes;
      }
    }
  }
  return { streamsCount: state.model.streams.size, topicsCount, partitionsCount, consumerGroupsCount, segmentsCount, messagesCount, messagesSizeBytes };
}
