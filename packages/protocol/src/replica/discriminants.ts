/**
 * One-byte enums carried inside replica-plane headers. Each must hold a declared value or the
 * header is not a valid bit pattern (replication-semantics.md §1.2 step 3).
 */

/**
 * `Operation` (§1.1): 0 Reserved, 1 Register, 2 NonReplicated, 3 Logout, 64..68 server-internal,
 * 128..149 metadata, 160..162 partition. Anything else makes the whole header undecodable.
 */
export const Operation = Object.freeze({
  Reserved: 0,
  Register: 1,
  NonReplicated: 2,
  Logout: 3,
  CreateTopicWithAssignments: 64,
  CreatePartitionsWithAssignments: 65,
  RemoveConsumerGroupMember: 66,
  CompleteConsumerGroupRevocation: 67,
  TruncatePartition: 68,
  CreateStream: 128,
  UpdateStream: 129,
  DeleteStream: 130,
  PurgeStream: 131,
  CreateTopic: 132,
  UpdateTopic: 133,
  DeleteTopic: 134,
  PurgeTopic: 135,
  CreatePartitions: 136,
  DeletePartitions: 137,
  DeleteSegments: 138,
  CreateConsumerGroup: 139,
  DeleteConsumerGroup: 140,
  CreateUser: 141,
  UpdateUser: 142,
  DeleteUser: 143,
  ChangePassword: 144,
  UpdatePermissions: 145,
  CreatePersonalAccessToken: 146,
  DeletePersonalAccessToken: 147,
  JoinConsumerGroup: 148,
  LeaveConsumerGroup: 149,
  SendMessages: 160,
  StoreConsumerOffset: 161,
  DeleteConsumerOffset: 162,
} as const);

export type OperationName = keyof typeof Operation;
export type Operation = (typeof Operation)[OperationName];

const VALID_OPERATION: readonly boolean[] = (() => {
  const valid = new Array<boolean>(256).fill(false);
  for (const value of Object.values(Operation)) valid[value] = true;
  return Object.freeze(valid);
})();

/** True when `value` is a declared `Operation` discriminant (0 included: it is declared). */
export function isOperation(value: number): value is Operation {
  return VALID_OPERATION[value] === true;
}

/** Metadata-plane operations (§1.1): 1, 3, 64..68, 128..137, 139..149. 138 is neither plane. */
export function isMetadataOperation(value: number): boolean {
  return value === 1 || value === 3 || (value >= 64 && value <= 68) || (value >= 128 && value <= 149 && value !== 138);
}

/** Partition-plane operations (§1.1): 160 and above. */
export function isPartitionOperation(value: number): boolean {
  return value >= 160 && isOperation(value);
}

/** `EvictionHeader.reason` at 255 (framing.mdx): 0 is declared (Reserved) but never sent. */
export const EvictionReason = Object.freeze({
  Reserved: 0,
  NoSession: 1,
  ClientReleaseTooLow: 2,
  ClientReleaseTooHigh: 3,
  InvalidRequestOperation: 4,
  InvalidRequestBody: 5,
  InvalidRequestBodySize: 6,
  SessionTooLow: 7,
  SessionReleaseMismatch: 8,
  InvalidCredentials: 9,
  InvalidToken: 10,
  UserInactive: 11,
  SessionError: 12,
  StaleClient: 13,
  IncompatibleProtocol: 14,
  MalformedLogin: 15,
} as const);
export type EvictionReason = (typeof EvictionReason)[keyof typeof EvictionReason];
export const EVICTION_REASON_MAX = 15;

/** `ForwardRegisterResultHeader.outcome` at 255 (cluster.mdx "Session forwarding"). */
export const ForwardRegisterOutcome = Object.freeze({
  Ok: 0,
  NotPrimary: 1,
  NotCaughtUp: 2,
  PipelineFull: 3,
  InProgress: 4,
  Canceled: 5,
  ClientIdOwnedByAnotherUser: 6,
} as const);
export type ForwardRegisterOutcome = (typeof ForwardRegisterOutcome)[keyof typeof ForwardRegisterOutcome];
export const FORWARD_REGISTER_OUTCOME_MAX = 6;

/** `ForwardLogoutResultHeader.outcome` at 255. */
export const ForwardLogoutOutcome = Object.freeze({
  Ok: 0,
  NotPrimary: 1,
  PipelineFull: 2,
  InProgress: 3,
  Canceled: 4,
} as const);
export type ForwardLogoutOutcome = (typeof ForwardLogoutOutcome)[keyof typeof ForwardLogoutOutcome];
export const FORWARD_LOGOUT_OUTCOME_MAX = 4;
