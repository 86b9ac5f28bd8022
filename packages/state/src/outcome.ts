import { ErrorCode } from '@shoal/protocol';

/**
 * What applying a committed operation, or answering a read, produces: a success with the typed
 * response payload (the bytes after the result section), or an IggyError code. A committed
 * business rejection (name exists, not found, denied) is a code, never an exception: it commits
 * as a deterministic no-op on every replica and the consensus core frames it as the one-entry
 * result section `[1][0][code]`.
 */
export interface Accepted {
  readonly ok: true;
  readonly code: 0;
  readonly payload: Uint8Array;
}

export interface Rejected {
  readonly ok: false;
  /** A non-zero IggyError code. */
  readonly code: number;
}

export type Outcome = Accepted | Rejected;

const EMPTY = new Uint8Array(0);

export function accepted(payload: Uint8Array = EMPTY): Accepted {
  return { ok: true, code: 0, payload };
}

export function rejected(code: number): Rejected {
  return { ok: false, code };
}

/**
 * Codes the reference server returns that the 0.11.0 error table (shared/spec/error-codes.json,
 * protocol's `ErrorCode`) predates. Kept here, named like the reference's `IggyError` variants.
 */
export const StateErrorCode = {
  /** Leaving (or polling/committing as) a consumer group the client is not a member of. */
  ConsumerGroupMemberNotFound: 5006,
} as const;

/** The two not-found codes of an identifier (the VSR reference always reports the Id variant). */
export const NotFound = {
  stream: ErrorCode.StreamIdNotFound,
  topic: ErrorCode.TopicIdNotFound,
  partition: ErrorCode.PartitionNotFound,
  group: ErrorCode.ConsumerGroupIdNotFound,
  user: ErrorCode.ResourceNotFound,
} as const;
