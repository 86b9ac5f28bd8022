/**
 * The `Operation` byte (RequestHeader 176, ReplyHeader 208): the registry of
 * replication-semantics.md §1.1 and framing.mdx "Operation discriminants". Any byte not listed is
 * undeclared and makes the header undecodable on the reference.
 *
 * Planes (framing.mdx table column, plus the reference's finer classification):
 *
 *   value      plane            consensus group   client may send   reply result-framed
 *   0          reserved         -                 no                -
 *   1          session          metadata          yes               yes when the body is non-empty
 *   2          non_replicated   none              yes               no
 *   3          session          metadata          yes               no
 *   64..68     internal         metadata          no (64..127)      yes
 *   128..137   metadata         metadata          yes               yes
 *   138        metadata *       metadata (as 68)  yes               no
 *   139..149   metadata         metadata          yes               yes
 *   160        partition        partition         yes               no
 *   161, 162   partition        partition         yes               yes
 *
 * * DeleteSegments sits in the metadata band but is resolved into a 68 TruncatePartition before it
 *   is proposed; the reference classifies it as partition-routed (`is_partition`) and neither SDK
 *   strips a result section from its reply (core/sdk/src/vsr.rs, foreign/node/src/wire/vsr/reply.ts).
 */
export const Operation = {
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
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

export type OperationPlane = 'reserved' | 'session' | 'non_replicated' | 'internal' | 'metadata' | 'partition';

/** Range refused from clients: 64..127 is reserved for server-internal operations. */
export const INTERNAL_OPERATION_MIN = 64;
export const INTERNAL_OPERATION_MAX = 127;
export const METADATA_OPERATION_MIN = 128;
export const PARTITION_OPERATION_MIN = 160;

const NAME_BY_VALUE: ReadonlyMap<number, string> = new Map(Object.entries(Operation).map(([name, value]) => [value, name]));

// A flat table: this check runs on every inbound header (replication-semantics §1.2 step 3).
const DECLARED: readonly boolean[] = Object.freeze(Array.from({ length: 256 }, (_, value) => NAME_BY_VALUE.has(value)));

/** True for a declared discriminant (bit-pattern check of replication-semantics §1.2 step 3). */
export function isOperation(value: number): value is Operation {
  return DECLARED[value] === true;
}

export function operationName(value: number): string | null {
  return NAME_BY_VALUE.get(value) ?? null;
}

/** The framing.mdx plane column (138 reports `metadata`, as the page lists it). */
export function operationPlane(value: number): OperationPlane | null {
  if (!isOperation(value)) return null;
  if (value === Operation.Reserved) return 'reserved';
  if (value === Operation.Register || value === Operation.Logout) return 'session';
  if (value === Operation.NonReplicated) return 'non_replicated';
  if (value < METADATA_OPERATION_MIN) return 'internal';
  if (value < PARTITION_OPERATION_MIN) return 'metadata';
  return 'partition';
}

/** Server-internal operations (64..68 assigned; the whole 64..127 band is internal). */
export function isInternalOperation(value: number): boolean {
  return value >= INTERNAL_OPERATION_MIN && value <= INTERNAL_OPERATION_MAX;
}

/**
 * Metadata-plane by replication-semantics §1.1: 64..68, 128..137, 139..149, plus Register and
 * Logout (they run on the metadata group). DeleteSegments (138) is excluded.
 */
export function isMetadataPlane(value: number): boolean {
  if (!isOperation(value)) return false;
  if (value === Operation.Register || value === Operation.Logout) return true;
  if (value === Operation.DeleteSegments) return false;
  return (value >= INTERNAL_OPERATION_MIN && value <= Operation.TruncatePartition) ||
    (value >= METADATA_OPERATION_MIN && value <= Operation.LeaveConsumerGroup);
}

/** Partition-plane: >= 160 (at-least-once, no reply cache). */
export function isPartitionPlane(value: number): boolean {
  return isOperation(value) && value >= PARTITION_OPERATION_MIN;
}

/** Operations a client may put in a RequestHeader: declared, not 0, not internal. */
export function isClientAdmissible(value: number): boolean {
  return isOperation(value) && value !== Operation.Reserved && !isInternalOperation(value);
}

/**
 * Whether a reply to `operation` leads with a committed result section (framing.mdx "Result
 * section", as the SDKs apply it): internal and metadata operations except DeleteSegments, the two
 * consumer-offset writes, and Register when its body is non-empty (an empty Register body is a
 * terminal failure without a section). Logout, SendMessages and NonReplicated are not framed.
 */
export function isResultFramed(operation: number, bodyLength: number): boolean {
  if (operation === Operation.Register) return bodyLength > 0;
  if (operation === Operation.StoreConsumerOffset || operation === Operation.DeleteConsumerOffset) return true;
  if (!isOperation(operation) || operation === Operation.DeleteSegments) return false;
  return (operation >= INTERNAL_OPERATION_MIN && operation <= Operation.TruncatePartition) ||
    (operation >= METADATA_OPERATION_MIN && operation <= Operation.LeaveConsumerGroup);
}

/**
 * Whether the Rust SDK stamps `request_checksum = XXH3-64(body)` for this operation: every
 * operation that is neither partition-routed (>= 160 and 138) nor NonReplicated, so Register and
 * Logout too (client_frames.json notes; framing.mdx says metadata-plane only). The Node SDK never
 * stamps. A server accepts both 0 and the stamp.
 */
export function isRequestChecksumStamped(operation: number): boolean {
  if (!isOperation(operation) || operation === Operation.Reserved) return false;
  if (operation === Operation.NonReplicated || operation === Operation.DeleteSegments) return false;
  return operation < PARTITION_OPERATION_MIN;
}
