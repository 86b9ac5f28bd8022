/**
 * Applying committed ops (§4.10): the one walk every replica uses to apply commit_min + 1 ..=
 * commit_max in op order (only trusted entries; it stops at the first gap), the reply each op
 * produces, and the answers the primary owes for the pipeline heads it applied.
 *
 * `walkCommitted` is the walk alone; `commitWalk` (commit.ts) is the walk followed by the
 * primary's continuation (proposing parked requests into the freed slots).
 */
import { assert } from '@shoal/stdx';
import { Operation, writeReplyFrame } from '@shoal/protocol';
import { answerCommitted } from './answers.js';
import { retainPartitionJournal } from './checkpoint.js';
import type { Core } from './core.js';
import { recordOf, type JournalEntry } from './journal.js';
import type { PipelineEntry } from './pipeline.js';
import { discardBogus, pruneCanon, verify } from './trust.js';

export { recordOf } from './journal.js';


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
  if (table !== null && entry.operation === Operation.Register) {
    reply = replyFrameOf(c, entry, new Uint8Array(0));
    if (entry.client !== 0n && !tableFrozen) table.register(entry.client, entry.userId, BigInt(entry.op), reply);
  } else if (table !== null && entry.operation === Operation.Logout) {
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
 * state transfer runs (the install replaces the state). Returns false when it did not run.
 */
export function walkCommitted(c: Core): boolean {
  if (c.transferring()) return false;
  const replies: { entry: PipelineEntry; reply: Uint8Array; journal: JournalEntry }[] = [];
  while (c.commitMin < c.commitMax) {
    const entry = nextApplicable(c);
    if (entry === null) break;
    const reply = applyOne(c, entry);
    const head = c.pipeline.head();
    if (head !== undefined && head.op === entry.op) {
      assert(head.checksum === entry.checksum, 'pipeline head differs from the applied entry');
      replies.push({ entry: c.pipeline.shift(), reply, journal: entry });
    }
  }
  pruneCanon(c);
  retainPartitionJournal(c);
  for (const { entry, reply, journal } of replies) answerCommitted(c, entry, reply, journal);
  return true;
}
