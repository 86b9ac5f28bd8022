/**
 * Committing (§4.9, §4.10): counting PrepareOks on the primary, advancing commit_max over the
 * consecutive run of quorum entries, and the one commit walk every replica uses to apply
 * commit_min + 1 ..= commit_max in op order (only trusted entries; it stops at the first gap).
 * The primary pops its pipeline heads as they apply and answers clients after the walk.
 */
import { assert } from '@shoal/stdx';
import { PrepareOkHeaderView, writeReplyFrame } from '@shoal/protocol';
import type { Core } from './core.js';
import { entryBody, type JournalEntry } from './journal.js';
import { finishAwaiter } from './forwarding.js';
import type { PipelineEntry } from './pipeline.js';
import type { PrepareRecord } from './state-machine.js';
import { checksumAt, discardBogus, pruneCanon, verify } from './trust.js';
import { commitFrame } from './frames.js';
import { broadcastGated } from './send.js';
import { promoteRequests } from './prepare.js';
import { retainPartitionJournal } from './checkpoint.js';
import type { Op } from './types.js';

export const OPERATION_REGISTER = 1;
export const OPERATION_LOGOUT = 3;

export function recordOf(entry: JournalEntry): PrepareRecord {
  return {
    op: entry.op,
    operation: entry.operation,
    client: entry.client,
    request: entry.request,
    userId: entry.userId,
    timestamp: entry.timestamp,
    body: entryBody(entry),
  };
}

/** §4.10: the reply is built from the prepare header only, so every replica caches the same bytes. */
export function replyFrameOf(c: Core, entry: JournalEntry, body: Uint8Array): Uint8Array {
  return writeReplyFrame(
    {
      cluster: c.config.cluster,
      view: entry.view,
      replica: entry.replica,
      requestChecksum: entry.requestChecksum,
      client: entry.client,
      op: entry.op,
      commit: entry.op,
      timestamp: entry.timestamp,
      request: entry.request,
      operation: entry.operation,
      status: 0,
    },
    body,
  );
}

/** Applies one committed op (exactly once, in order) and returns its reply frame. */
export function applyOne(c: Core, entry: JournalEntry): Uint8Array {
  assert(entry.op === c.commitMin + 1, `apply out of order: ${entry.op} after ${c.commitMin}`);
  assert(entry.trusted, `apply of an untrusted op ${entry.op}`);
  const table = c.clientTable;
  const tableFrozen = entry.op <= c.transfer.tableFrontier;
  let reply: Uint8Array;
  if (table !== null && entry.operation === OPERATION_REGISTER) {
    reply = replyFrameOf(c, entry, new Uint8Array(0));
    if (entry.client !== 0n && !tableFrozen) table.register(entry.client, entry.userId, BigInt(entry.op), reply);
  } else if (table !== null && entry.operation === OPERATION_LOGOUT) {
    reply = replyFrameOf(c, entry, new Uint8Array(0));
    if (!tableFrozen) table.logout(entry.client);
    c.sm.logout(entry.client);
  } else {
    reply = replyFrameOf(c, entry, c.sm.apply(recordOf(entry)));
    if (table !== null && !tableFrozen) table.record(entry.client, entry.request, entry.requestChecksum, reply);
  }
  c.commitMin = entry.op;
  c.effects.push({ kind: 'committed', op: entry.op, operation: entry.operation });
  return reply;
}

/** The next op the walk may apply, or null (gap, unverifiable, or a bogus entry was discarded). */
function nextApplicable(c: Core): JournalEntry | null {
  const x = c.commitMin + 1;
  const { verdict, bogusOp } = verify(c, x);
  if (verdict === 'trusted') return c.journal.get(x) ?? null;
  if (verdict === 'bogus') discardBogus(c, bogusOp);
  return null;
}

/**
 * Applies commit_min + 1 ..= commit_max while the entries are present and trusted. The primary
 * pops each applied pipeline head and answers its client after the loop (§4.10). Not while a
 * state transfer runs (the install replaces the state).
 */
export function commitWalk(c: Core): void {
  if (c.transferring()) return;
  const replies: { entry: PipelineEntry; reply: Uint8Array }[] = [];
  while (c.commitMin < c.commitMax) {
    const entry = nextApplicable(c);
    if (entry === null) break;
    const reply = applyOne(c, entry);
    const head = c.pipeline.head();
    if (head !== undefined && head.op === entry.op) {
      assert(head.checksum === entry.checksum, 'pipeline head differs from the applied entry');
      replies.push({ entry: c.pipeline.shift(), reply });
    }
  }
  pruneCanon(c);
  retainPartitionJournal(c);
  for (const { entry, reply } of replies) answer(c, entry, reply);
  if (c.isActingPrimary()) {
    promoteRequests(c);
    if (c.pipeline.empty) c.timers.prepare.stop();
  }
}

function answer(c: Core, entry: PipelineEntry, reply: Uint8Array): void {
  if (entry.awaiter !== null) {
    finishAwaiter(c, entry.awaiter, entry, 'ok');
    return;
  }
  if (entry.client === 0n) return;
  c.effects.push({ kind: 'client_frame', client: entry.client, token: entry.token, frame: reply });
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

const ackView = new PrepareOkHeaderView();

/** §4.9 PrepareOk on the primary. */
export function onPrepareOk(c: Core, frame: Uint8Array): string | null {
  const h = ackView.bind(frame, 0);
  if (!c.isActingPrimary()) return c.drop(7, h.replica, 'not_acting_primary');
  if (h.view !== c.view) return c.drop(7, h.replica, h.view < c.view ? 'ack_older_view' : 'ack_newer_view');
  if (c.transferring()) return c.drop(7, h.replica, 'transferring');
  const entry = c.pipeline.get(h.opNumber);
  if (entry === undefined) return c.drop(7, h.replica, 'ack_not_in_pipeline');
  if (entry.checksum !== h.prepareChecksum) return c.drop(7, h.replica, 'ack_checksum_mismatch');
  if (!c.pipeline.ack(entry, h.replica, c.quorums.replication)) return null; // duplicate
  if (entry.quorum) advanceCommitMax(c);
  return null;
}
