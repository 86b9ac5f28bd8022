export { ACKED_GROUPS_MAX, ACKED_UNKNOWN, AckedFences } from './acked-fences.js';
export type { BoundSession, GatewayConnection } from './connection.js';
export { packConsumerRef, unpackConsumerRef } from './consumer-ref.js';
export type { GatewayContext, GatewayFacts, GatewayOutput, MetadataView } from './context.js';
export { Gateway, type GatewayCounters, TRANSPORT_TCP } from './gateway.js';
export { MemoryConnection, type MemoryConnectionOptions } from './memory-connection.js';
export {
  type ClientRequestMessage, type GatewayMessage, RequestRoute, type SessionKind, type SessionResultMessage, type SessionSubmitMessage, TOKEN_NONE,
} from './messages.js';
export {
  type EchoedRequest, EvictionReason, type ReplyContext, SERVER_VERSION, codeReply, eviction, incompatibleProtocolEviction, loginReply,
  payloadReply, payloadReplyParts, statusReply,
} from './replies.js';
export type { PasswordVerdict } from './sessions.js';
