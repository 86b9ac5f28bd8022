/**
 * @shoal/client: the TypeScript SDK for Shoal (Apache Iggy binary protocol 0.11.0).
 *
 *   ShoalClient        typed methods for every command, connection strings, leader redirection
 *   Producer           batching (count, bytes, linger), pipelining, client-side partitioning
 *   Consumer           async iteration, consumer groups, auto-commit
 *   Session            the sans-IO core (request numbering, correlation, evictions, 57 replay)
 *   TcpConnection      the Node transport (window, back-pressure, timeouts, abort, reconnect)
 *   ShoalError & co.   typed errors with the wire code and `retriable`
 */
export { ShoalClient, type ClientOptions, type CallOptions, type TopicSettings, type TopicOptionValue, type PartitioningInput, type PolledBatch, type UserStatusName, partitionRoute, toPartitioning, topicOptionEntries } from './client.js';
export { Producer, type ProducerOptions, type ProducerPartitioning, type SendOptions, type SendResult, type ProducerStats } from './producer.js';
export { Consumer, type ConsumerOptions, type AutoCommit } from './consumer.js';
export {
  ClusterRouter, type ClusterOptions, type RetryOptions, type Route, type ClusterView, type ClusterNodeView, type NodeRoleName,
  type NodeStatusName, type ExecuteOptions, type ConnectionFactory, ClusterNodeRole, ClusterNodeStatus, clusterView,
  decodeClusterMetadata, roleName, statusName,
} from './cluster.js';
export {
  Session, type SessionOptions, type SessionCall, type SessionEvent, type SessionState, type OutgoingFrame, type ReplyInfo,
  type Ticket, type Credentials, type RandomSource, type DropReason, DEFAULT_VERSION_INFO, SDK_NAME, SDK_VERSION,
} from './session.js';
export {
  TcpConnection, type ConnectionOptions, type ConnectionDeps, type ConnectionState, type ReconnectPolicy, type RequestOptions, type TlsOptions,
  type Reply,
} from './transport/tcp.js';
export { nodeScheduler, nodeRandom } from './transport/node-scheduler.js';
export { type Scheduler, type TimerHandle, backoffDelay } from './scheduler.js';
export {
  ShoalError, ShoalResponseError, ShoalEvictionError, ShoalTimeoutError, ShoalAbortError, ShoalConnectionError,
  ShoalConnectionLostError, ShoalClosedError, ShoalProtocolError, ShoalInvalidArgumentError, ShoalRetryExhaustedError,
  type ResponseErrorSource, type RetryExhaustedReason, asShoalError,
} from './errors.js';
export {
  type Message, type ReceivedMessage, type HeaderInput, type MessageHeaders, type EncodeMessagesOptions, type DecodePolledOptions,
  encodeMessageHeaders, decodeMessageHeaders, toBatchMessages, encodeBatch, decodePolledMessages, payloadBytes,
} from './messages.js';
export {
  type Id, type ConsumerInput, type PollingStrategyInput, toIdentifier, toConsumer, toPollingStrategy, consumer, consumerGroup,
} from './identifiers.js';
export { type NodeAddress, parseAddress, formatAddress, addressKey } from './address.js';
export {
  parseConnectionString, isConnectionString, type ParsedConnectionString, type ConnectionStringOptions,
} from './connection-string.js';
export { BalancedPartitioner, loadXxh32, partitionForKey, partitionForKeySync } from './partitioner.js';
