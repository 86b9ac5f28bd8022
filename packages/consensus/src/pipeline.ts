/**
 * The primary's two queues (§4.3):
 *
 *   prepare queue (≤ depth, consecutive ops, hash-chained)      request queue (request-queue.ts, FIFO)
 *   ┌────────┬────────┬────────┐                               ┌─────┬─────┬─────┐
 *   │ op c+1 │ op c+2 │ op c+3 │ ◀── promoted as heads commit ─│ req │ req │ req │ ◀── admitted
 *   └────────┴────────┴────────┘                               └─────┴─────┴─────┘
 *     head = commit_max + 1 (oldest uncommitted)
 *
 * Each prepare entry tracks its ack set (bitmask of replicas whose PrepareOk matched the entry's
 * checksum) and whether it reached the replication quorum.
 */
import { assert } from '@shoal/stdx';
import { countBits, maskHas, maskWith } from './quorums.js';
import { RequestQueue } from './request-queue.js';
import type { ClientToken, Op } from './types.js';

/** A client request, authenticated and authorised by the host (the session fence is ours). */
export interface ClientRequest {
  readonly client: bigint;
  readonly request: bigint;
  readonly session: bigint;
  readonly requestChecksum: bigint;
  readonly operation: number;
  readonly body: Uint8Array;
  /** The user the host authenticated (Register) or bound to the connection. */
  readonly userId: number;
  /** The request header's timestamp (echoed in pre-commit replies). */
  readonly timestamp: bigint;
  readonly token: ClientToken;
}

export type RequestOutcome = 'proposed' | 'queued' | 'answered' | 'dropped';

/** Who waits for a pipeline entry's outcome besides the client connection. */
export type Awaiter =
  | { readonly kind: 'session_local'; readonly token: ClientToken; readonly session: 'register' | 'logout'; readonly commitMaxBefore: Op }
  | {
      readonly kind: 'session_forwarded';
      readonly origin: number;
      readonly nonce: bigint;
      readonly session: 'register' | 'logout';
      readonly commitMaxBefore: Op;
    };

/** A client request's header fields its answers echo (the operation as the client sent it). */
export interface RequestEcho {
  readonly operation: number;
  readonly timestamp: bigint;
  readonly requestChecksum: bigint;
}

/** One client request of a prepare that joins several (group commit): whom to answer, and how. */
export interface GroupMember {
  readonly client: bigint;
  readonly request: bigint;
  readonly requestChecksum: bigint;
  readonly timestamp: bigint;
  readonly operation: number;
  readonly token: ClientToken;
  /** The state machine's key to this request's part of the op's reply (`memberReply`). */
  readonly share: number;
}

export interface PipelineEntry {
  readonly op: Op;
  readonly checksum: bigint;
  readonly parent: bigint;
  readonly client: bigint;
  readonly request: bigint;
  readonly operation: number;
  /**
   * Host correlation token of the client request (null for rebuilt or server-originated ops, and
   * once the request was answered as dropped: `answerDropped`).
   */
  token: ClientToken | null;
  /** The client request's own echo fields (what a pre-commit answer to it repeats); null: none. */
  readonly echo: RequestEcho | null;
  /** Cleared once answered (a view change cancels it before the entry itself goes). */
  awaiter: Awaiter | null;
  /**
   * Group commit: the requests this prepare joins, in queue order, each answered on commit with
   * its own reply (the header's client/request are the first one's). Null: one request.
   */
  members: readonly GroupMember[] | null;
  acks: number;
  quorum: boolean;
}

/**
 * A request admitted but waiting for a prepare slot: a client's request, or a session proposal
 * made in-process (no client token; answered through its awaiter).
 */
export interface QueuedRequest extends Omit<ClientRequest, 'token'> {
  readonly token: ClientToken | null;
  readonly awaiter: Awaiter | null;
}

export class Pipeline {
  readonly depth: number;
  readonly #prepares: PipelineEntry[] = [];
  readonly requests: RequestQueue<QueuedRequest>;

  /** `requestsMax` / `requestBytesMax`: the request queue's bounds (default 2 × depth, no byte bound). */
  constructor(depth: number, requestsMax = 2 * depth, requestBytesMax = Number.MAX_SAFE_INTEGER) {
    this.depth = depth;
    this.requests = new RequestQueue<QueuedRequest>(requestsMax, requestBytesMax);
  }

  get length(): number {
    return this.#prepares.length;
  }
  get full(): boolean {
    return this.#prepares.length >= this.depth;
  }
  get empty(): boolean {
    return this.#prepares.length === 0;
  }
  head(): PipelineEntry | undefined {
    return this.#prepares[0];
  }
  tail(): PipelineEntry | undefined {
    return this.#prepares[this.#prepares.length - 1];
  }

  entries(): readonly PipelineEntry[] {
    return this.#prepares;
  }

  get(op: Op): PipelineEntry | undefined {
    const head = this.#prepares[0];
    if (head === undefined) return undefined;
    const entry = this.#prepares[op - head.op];
    return entry !== undefined && entry.op === op ? entry : undefined;
  }

  push(entry: PipelineEntry): void {
    assert(!this.full, 'pipeline: push when full');
    const tail = this.tail();
    if (tail !== undefined) {
      assert(entry.op === tail.op + 1, `pipeline: op ${entry.op} does not follow ${tail.op}`);
      assert(entry.parent === tail.checksum, `pipeline: op ${entry.op} does not chain to ${tail.op}`);
    }
    this.#prepares.push(entry);
  }

  /** Records `replica`'s ack; true when the ack was new. */
  ack(entry: PipelineEntry, replica: number, quorum: number): boolean {
    if (maskHas(entry.acks, replica)) return false;
    entry.acks = maskWith(entry.acks, replica);
    if (countBits(entry.acks) >= quorum) entry.quorum = true;
    return true;
  }

  shift(): PipelineEntry {
    const head = this.#prepares.shift();
    assert(head !== undefined, 'pipeline: shift on empty');
    return head;
  }

  /** Drops entries with op >= fromOp (primary write-failure rollback). */
  dropFrom(fromOp: Op): PipelineEntry[] {
    const out: PipelineEntry[] = [];
    while (this.#prepares.length > 0 && (this.tail() as PipelineEntry).op >= fromOp) out.unshift(this.#prepares.pop() as PipelineEntry);
    return out;
  }

  /** Empties both queues; returns what was dropped (so awaiters can be cancelled). */
  clear(): { prepares: PipelineEntry[]; requests: QueuedRequest[] } {
    const prepares = this.#prepares.splice(0);
    const requests: QueuedRequest[] = [];
    for (let r = this.requests.shift(); r !== undefined; r = this.requests.shift()) requests.push(r);
    return { prepares, requests };
  }

  clearRequests(): QueuedRequest[] {
    const requests: QueuedRequest[] = [];
    for (let r = this.requests.shift(); r !== undefined; r = this.requests.shift()) requests.push(r);
    return requests;
  }

  /** Any prepare or queued request from this client (§7.2, §7.3 "in flight"). */
  hasClient(client: bigint): boolean {
    for (const p of this.#prepares) if (p.client === client) return true;
    for (const r of this.requests) if (r.client === client) return true;
    return false;
  }

  /** O(pipeline) structural check. */
  check(): void {
    assert(this.#prepares.length <= this.depth, 'pipeline: over depth');
    for (let i = 1; i < this.#prepares.length; i++) {
      const prev = this.#prepares[i - 1] as PipelineEntry;
      const cur = this.#prepares[i] as PipelineEntry;
      assert(cur.op === prev.op + 1, 'pipeline: ops not consecutive');
      assert(cur.parent === prev.checksum, 'pipeline: hash chain broken');
    }
  }
}
