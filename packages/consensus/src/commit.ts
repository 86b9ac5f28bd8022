/**
 * The primary's pipeline in motion (§4.3–§4.5, §4.9): admitting requests, proposing them into
 * free prepare slots, counting its own acks, advancing commit_max over the consecutive run of
 * quorum entries, and `commitWalk`: the walk every replica uses (apply.ts) followed, on the
 * primary, by proposing parked requests into the slots the walk freed.
 *
 * These live together because they are one recursion: a commit frees a slot, the proposal that
 * fills it may be acked at once (a memory journal is durable on append; n = 1 needs no one
 * else), and that ack commits again.
 */
import { assert } from '@shoal/stdx';
import { Operation } from '@shoal/protocol';
import { walkCommitted } from './apply.js';
import { cancelAwaiter, evict } from './answers.js';
import { journalHasRoom, maybeCheckpoint } from './checkpoint.js';
import type { Core } from './core.js';
import { commitFrame, prepareFrame } from './frames.js';
import { entryFromFrame } from './journal.js';
import { forwardAlongChain, journalAppend } from './journal-write.js';
import { Mark } from './marks.js';
import { groupStillOpen, takeGroup } from './group-commit.js';
import { handBackDraining } from './hand-back-state.js';
import type { GroupMember, QueuedRequest, RequestOutcome } from './pipeline.js';
import { broadcastGated } from './send.js';
import { checksumAt, setCanon } from './trust.js';
import type { Op } from './types.js';

/** Applies what is committed; the primary then proposes parked requests into the freed slots. */
export function commitWalk(c: Core): void {
  if (!walkCommitted(c)) return;
  if (c.isActingPrimary()) {
    promoteRequests(c);
    if (c.pipeline.empty) c.timers.prepare.stop();
  }
}

/** Primary: commit_max advances over the consecutive run of quorum entries after it. */
export function advanceCommitMax(c: Core): void {
  let moved = false;
  for (const entry of c.pipeline.entries()) {
    if (entry.op <= c.commitMax) continue;
    if (entry.op !== c.commitMax + 1 || !entry.quorum) break;
    c.commitMax = entry.op;
    moved = true;
  }
  if (!moved) return;
  commitWalk(c);
  if (!c.pipeline.empty) c.timers.prepare.start();
  else announceIdleCommit(c);
}

/**
 * The pipeline drained: no further Prepare will carry this commit point to the backups, which
 * would otherwise learn it only at the next heartbeat (500 ms). Announce it now, so that a read
 * served by a backup right after an acknowledged write (a SendMessages to a partition primary on
 * another node just after its CreateTopic) sees it. Under load the pipeline is rarely empty, so
 * this costs one Commit per idle period, not one per op.
 */
function announceIdleCommit(c: Core): void {
  if (c.status !== 'normal' || !c.isPrimaryByIndex() || c.ceded || c.observedNewerView > c.view) return;
  c.heartbeatTimestamp += 1n;
  broadcastGated(c, commitFrame(c, checksumAt(c, c.commitMin)));
  c.timers.commitMessage.reset();
}

/** Primary: our own journal write of a pipeline op is durable; count our ack. */
export function selfAck(c: Core, op: Op, checksum: bigint): void {
  if (!c.isActingPrimary()) return;
  const entry = c.pipeline.get(op);
  if (entry === undefined || entry.checksum !== checksum) return;
  const journaled = c.journal.get(op);
  if (journaled === undefined || !journaled.durable || journaled.checksum !== checksum) return;
  c.pipeline.ack(entry, c.self, c.quorums.replication);
  advanceCommitMax(c);
}

/** Every tick: re-count self-acks the pipeline lacks for durable entries (§4.12 last sentence). */
export function repairSelfAcks(c: Core): void {
  if (!c.isActingPrimary()) return;
  for (const entry of [...c.pipeline.entries()]) {
    if (((entry.acks >>> c.self) & 1) === 1) continue;
    const journaled = c.journal.get(entry.op);
    if (journaled !== undefined && journaled.durable && journaled.checksum === entry.checksum) selfAck(c, entry.op, entry.checksum);
  }
}

// ---------------------------------------------------------------------------------------------
// Admission and proposal (primary).

/**
 * Parks the request when no prepare slot is free (or the primary is catching up, or it waits to be
 * joined: group-commit.ts `groupStillOpen`), else proposes.
 */
export function admit(c: Core, q: QueuedRequest): RequestOutcome {
  if (c.pipeline.full || !c.isCaughtUpPrimary() || !journalHasRoom(c, c.op + 1) || c.pipeline.requests.length > 0
    || handBackDraining(c.handBack, c.view) || groupStillOpen(c, q)) {
    // Parked: the caller may reuse the body's buffer once this call returns.
    if (c.pipeline.requests.push(q.body.length === 0 ? q : { ...q, body: q.body.slice() })) {
      // Parked to be joined, it may have closed its group (the count or byte bound): propose that now.
      if (!c.pipeline.full) promoteRequests(c);
      return 'queued';
    }
    if (q.awaiter !== null) cancelAwaiter(c, q.awaiter, 'pipeline_full', q.client);
    return 'dropped';
  }
  return propose(c, q) ? 'proposed' : 'answered';
}

/**
 * Moves parked requests into free prepare slots (FIFO) while this is a caught-up primary; each
 * slot takes a group of them where the state machine can join them (group-commit.ts).
 */
export function promoteRequests(c: Core): void {
  let grouped = 0;
  while (!c.pipeline.full && c.pipeline.requests.length > 0 && c.isCaughtUpPrimary() && journalHasRoom(c, c.op + 1)
    && !handBackDraining(c.handBack, c.view) && !groupStillOpen(c)) {
    const group = takeGroup(c);
    if (group.members !== null) grouped += group.members.length;
    propose(c, group.request, group.members);
  }
  if (grouped > 0) c.mark(Mark.GroupCommit, `${grouped} requests`);
}

/** §4.4 + §4.5: build the prepare for op + 1, journal it, start replicating. False if rejected. */
function propose(c: Core, q: QueuedRequest, members: readonly GroupMember[] | null = null): boolean {
  assert(c.isActingPrimary() && !c.pipeline.full, 'propose: not an acting primary with a free slot');
  maybeCheckpoint(c);
  const op = c.op + 1;
  const now = c.time.realtimeMicros();
  const timestamp = now > c.lastTimestamp ? now : c.lastTimestamp + 1n;
  let operation = q.operation;
  let body: Uint8Array = new Uint8Array(0);
  let userId = 0;
  if (c.clientTable !== null) {
    // The acting user is stamped from the client table, never trusted from the wire (§4.4).
    userId = q.operation === Operation.Register ? q.userId : (c.clientTable.get(q.client)?.userId ?? q.userId);
  }
  if (q.operation !== Operation.Register && q.operation !== Operation.Logout) {
    const verdict = c.sm.prepare({ operation: q.operation, body: q.body, client: q.client, userId, op, timestamp });
    if (!verdict.ok) {
      if (members !== null) for (const m of members) evict(c, m.client, m.token, verdict.eviction);
      else if (q.awaiter === null && q.token !== null) evict(c, q.client, q.token, verdict.eviction);
      return false;
    }
    operation = verdict.operation;
    body = verdict.body;
  }
  const frame = prepareFrame(c, {
    client: q.client,
    parent: c.lastPrepareChecksum,
    requestChecksum: q.requestChecksum,
    op,
    commit: c.commitMax,
    timestamp,
    request: q.request,
    operation,
    userId,
  }, body);
  const entry = entryFromFrame(frame, false, true, true);
  c.pipeline.push({
    op, checksum: entry.checksum, parent: entry.parent, client: q.client, request: q.request, operation,
    token: q.token, awaiter: q.awaiter, members, acks: 0, quorum: false,
    echo: { operation: q.operation, timestamp: q.timestamp, requestChecksum: q.requestChecksum },
  });
  // Pre-advance the sequencer, the chain and the timestamp floor with the append (pitfall 1).
  c.op = op;
  c.lastPrepareChecksum = entry.checksum;
  c.lastTimestamp = timestamp;
  setCanon(c, op, { checksum: entry.checksum, parent: entry.parent, header: null });
  journalAppend(c, entry, 'primary');
  forwardAlongChain(c, entry);
  if (!c.timers.prepare.running) c.timers.prepare.start();
  if (entry.durable) selfAck(c, op, entry.checksum);
  return true;
}
