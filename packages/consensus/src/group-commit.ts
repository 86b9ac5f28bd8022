/**
 * Group commit (primary): the requests parked in the request queue while the prepare pipeline was
 * full are proposed as ONE prepare when a slot frees, instead of one prepare each.
 *
 *   request queue: [r1 r2 r3 r4 …]  ─ slot frees ─▶  takeGroup: r1..rk joinable, within the bounds
 *                                                   ─▶ sm.combine(bodies) ─▶ one prepare, members r1..rk
 *   commit of that op ─▶ one reply per member (memberReplyFrame), in member order
 *
 * Only what is already queued is joined, and no timer runs: a request that finds fewer than
 * `groupWaitDepth` ops in the pipeline is proposed at once (alone, it adds no latency); from that
 * depth on it waits in the queue for the next commit, which frees a slot and takes it with every
 * request queued behind it (`groupStillOpen`). A group is consecutive requests from the queue's
 * head, so the order of proposal (and of offsets, and of replies) is the queue order. Bounds:
 * `groupRequestsMax` requests and `groupBytesMax` body bytes (config.ts). Only requests a client
 * waits on (a token, no in-process awaiter) of an operation the machine can combine join.
 */
import { writeReplyFrame } from '@shoal/protocol';
import type { Core } from './core.js';
import type { JournalEntry } from './journal.js';
import type { GroupMember, QueuedRequest } from './pipeline.js';
import type { ClientToken } from './types.js';

export interface ProposedGroup {
  /** The request to propose: the first member's header fields with the joined body. */
  readonly request: QueuedRequest;
  readonly members: readonly GroupMember[] | null;
}

function joinable(c: Core, q: QueuedRequest, operation: number): boolean {
  return q.awaiter === null && q.token !== null && q.operation === operation && c.sm.combinable?.(q.operation) === true;
}

/**
 * True when the group the queue's head (then `extra`, a request not yet queued) would form should
 * wait for company: group commit is on, the pipeline holds `groupWaitDepth` ops or more (so a
 * commit, and with it a slot, is coming), and the group is still open: the head is joinable, and
 * the run behind it ends with the queue before reaching `groupRequestsMax` requests or
 * `groupBytesMax` bytes or a request it cannot join. A closed group gains nothing by waiting.
 */
export function groupStillOpen(c: Core, extra: QueuedRequest | null = null): boolean {
  const config = c.config;
  if (config.groupRequestsMax <= 1 || c.sm.combine === undefined || c.pipeline.length < config.groupWaitDepth) return false;
  const queue = c.pipeline.requests;
  const at = (i: number): QueuedRequest | undefined => (i < queue.length ? queue.at(i) : i === queue.length && extra !== null ? extra : undefined);
  const head = at(0);
  if (head === undefined || !joinable(c, head, head.operation)) return false;
  let bytes = 0;
  for (let i = 0; i < config.groupRequestsMax; i++) {
    const q = at(i);
    if (q === undefined) return true;
    if (!joinable(c, q, head.operation)) return false;
    bytes += q.body.length;
    if (bytes >= config.groupBytesMax) return false;
  }
  return false;
}

/** Takes the next proposal off the request queue's head: one request, or a group of them. */
export function takeGroup(c: Core): ProposedGroup {
  const queue = c.pipeline.requests;
  const head = queue.shift() as QueuedRequest;
  const max = c.config.groupRequestsMax;
  if (max <= 1 || c.sm.combine === undefined || !joinable(c, head, head.operation)) return { request: head, members: null };
  const candidates: QueuedRequest[] = [head];
  let bytes = head.body.length;
  for (let i = 0; candidates.length < max; i++) {
    const next = queue.at(i);
    if (next === undefined || !joinable(c, next, head.operation) || bytes + next.body.length > c.config.groupBytesMax) break;
    candidates.push(next);
    bytes += next.body.length;
  }
  if (candidates.length === 1) return { request: head, members: null };
  const verdict = c.sm.combine(head.operation, candidates.map((q) => q.body));
  if (!verdict.ok) return { request: head, members: null };
  for (let i = 1; i < candidates.length; i++) queue.shift();
  const members = candidates.map((q, i): GroupMember => ({
    client: q.client, request: q.request, requestChecksum: q.requestChecksum, timestamp: q.timestamp, operation: q.operation,
    token: q.token as ClientToken, share: verdict.shares[i] as number,
  }));
  return { request: { ...head, body: verdict.body }, members };
}

/**
 * The reply one member of a committed group gets: the op's reply header as for a lone request,
 * with the member's own client, request, request checksum, timestamp and operation echoed, and
 * its part of the reply payload (`sm.memberReply`).
 */
export function memberReplyFrame(c: Core, journal: JournalEntry, member: GroupMember, payload: Uint8Array): Uint8Array {
  const body = c.sm.memberReply === undefined ? payload : c.sm.memberReply(payload, member.share);
  return writeReplyFrame({
    cluster: c.config.cluster,
    view: journal.view,
    replica: journal.replica,
    requestChecksum: member.requestChecksum,
    client: member.client,
    op: journal.op,
    commit: journal.op,
    timestamp: member.timestamp,
    request: member.request,
    operation: member.operation,
    status: 0,
  }, body);
}
