/**
 * Our DoViewChange (§5.3): view, log_view, op = sequencer, commit = min(commit_max, op), and the
 * suffix from op down to max(commit, 1) (at most 128 entries), head first:
 *
 *   journal holds the op          → its header, present bit
 *   else a canonical header known → that header; nack bit above our commit point unless faulty
 *                                   ("I know it, never acked it, cannot serve it")
 *   else                          → a blank; nack bit only above our commit point and only
 *                                   when the op is not faulty (a lost entry is not "never
 *                                   prepared", pitfall 3)
 *
 * A LOST TAIL (faulty ops above the sequencer: a restarted replica whose journal lost ops it may
 * have acked, restore.ts) is reported the same way, but exactly: op = the top faulty op (within
 * one suffix window of the commit point), its entries blank without nack bits. A lost tail above
 * that window cannot be shown (an op more than 127 above the commit would claim commits): the
 * head entry is then a blank without a nack bit, as when voting blind, so the log end is unknown.
 *
 * Voting BLIND (an incomplete journal: a restarted partition replica that may have acked ops it
 * no longer holds, after its abstain bound): no nack bit at all, and the reported op is raised to
 * the top of the suffix window (commit + 127) so that `op < merged op` never counts as a nack by
 * omission either. Its head entry is always a blank without a nack bit (even where it holds that
 * op), which is how the merge knows its log end is unknown. Ops only this replica could vouch for
 * then need every DVC (§5.5: awaiting repair with fewer than n), and the others' own nacks decide
 * what is truncated.
 */
import { assert } from '@shoal/stdx';
import { PREPARE_LAYOUT, packSuffix, type SuffixEntryInput } from '@shoal/protocol';
import type { Core } from './core.js';
import { doViewChangeFrame } from './frames.js';
import { entryHeader } from './journal.js';
import { Mark } from './marks.js';
import { SUFFIX_MAX, type Op } from './types.js';
import { suffixEntries, type DvcRecord } from './view-change-state.js';

/**
 * Receivers check a suffix (§5.4): each valid header's timestamp is below the nearest valid
 * header above it, and an adjacent one above names it as parent. A sender fills entries head
 * first and blanks any header that would break those rules (say nothing rather than be dropped).
 */
export class SuffixChain {
  #above: { op: number; parent: bigint; timestamp: bigint } | null = null;

  fits(op: number, checksum: bigint, timestamp: bigint): boolean {
    const above = this.#above;
    if (above === null) return true;
    if (!(timestamp < above.timestamp)) return false;
    return above.op !== op + 1 || checksum === 0n || above.parent === checksum;
  }

  push(op: number, parent: bigint, timestamp: bigint): void {
    this.#above = { op, parent, timestamp };
  }
}

export interface OwnDvc {
  readonly frame: Uint8Array;
  readonly record: DvcRecord;
}

/** The highest faulty op above the sequencer (a lost tail), or 0. */
function lostTailTop(c: Core): number {
  let top = 0;
  for (const op of c.journal.faulty) if (op > c.op && op > top) top = op;
  return top;
}

/**
 * The commit point a DoViewChange reports: commit_max, or the one the superblock last recorded
 * when higher. A restart resets commit_max to what replay confirms (partition: the flushed state),
 * while the journal may still hold, below the commit point of the StartView it installed, entries
 * left from an older view that nothing reconciled (the StartView's headers start at its commit
 * point). Reported above a lower commit, they read as headers of this replica's log view, and a
 * merge whose commit point landed on one took it over the committed op (orphans of view 0's
 * primary replaced committed ops 7 and 8: restart-safety.test.ts). The recorded commit is a fact
 * (commit_max only grows), and the window starts there, so no such entry is shown.
 */
function reportedCommit(c: Core): Op {
  return Math.min(Math.max(c.commitMax, c.sb.durable?.commitMax ?? 0), c.op);
}

export function buildSuffix(c: Core): { op: number; commit: number; entries: SuffixEntryInput[] } {
  const commit = reportedCommit(c);
  const blind = c.journalIncomplete && c.votesBlind;
  const lostTop = blind ? 0 : lostTailTop(c);
  // A lost tail (ops this replica may have acked, above what it holds): the log is reported as
  // ending at its top, blanks without nack bits, so no op it acked is nacked by omission.
  const op = blind ? Math.max(c.op, commit + SUFFIX_MAX - 1) : lostTop > 0 ? Math.max(c.op, Math.min(lostTop, commit + SUFFIX_MAX - 1)) : c.op;
  if (op > c.op && !blind) c.mark(Mark.VoteLostTail, `op ${c.op} reported as ${op}`);
  const entries: SuffixEntryInput[] = [];
  if (op === 0) return { op, commit, entries };
  let low = Math.max(commit, 1);
  if (low > op) return { op, commit, entries };
  if (op - low + 1 > SUFFIX_MAX) low = op - (SUFFIX_MAX - 1);
  const chain = new SuffixChain();
  let blanked = 0;
  const fits = (entryOp: number, checksum: bigint, timestamp: bigint): boolean => chain.fits(entryOp, checksum, timestamp);
  let top = op;
  // A lost tail above what one window from the commit point can show (a power loss emptied more
  // of the journal than the suffix reaches: restored with commit 0, op 514, faulty through 1538):
  // reported as ending at its held head, the log read as KNOWN to end there, and as the canonical
  // log view's primary it bounded the merge (`canonicalLogEnd`), which cut op 762 it had
  // committed (seed 1026552 of 3, a pipeline of 4). Its log end is unknown: a blank head, no nack.
  const hidesLostTail = !blind && lostTop > op;
  if ((blind || hidesLostTail) && op > commit) {
    // A blind voter does not know where its log ends (it may have acked ops it lost), and its
    // head entry is how the merge learns that (merge.ts `logEndUnknown`): a blank without a nack
    // bit, even where it holds the op there (ops a primary-elect repaired into an emptied
    // journal). A held head read as a known log end, and a primary of the canonical log view
    // whose log "ended" at commit + 127 cut committed ops above it (seed 1012772 of 3).
    entries.push({ header: null, op: BigInt(op), nack: false });
    top = op - 1;
  }
  for (let entryOp = top; entryOp >= low; entryOp--) {
    const entry = c.journal.get(entryOp);
    if (entry !== undefined) {
      if (fits(entryOp, entry.checksum, entry.timestamp)) {
        entries.push({ header: entryHeader(entry).slice(), op: BigInt(entryOp), present: true });
        chain.push(entryOp, entry.parent, entry.timestamp);
      } else {
        // A stale entry that does not chain: say nothing about this op (blank, no nack).
        blanked++;
        entries.push({ header: null, op: BigInt(entryOp) });
      }
      continue;
    }
    const canon = c.canon.get(entryOp);
    if (canon !== undefined && canon.header !== null) {
      const h = canon.header;
      const dv = new DataView(h.buffer, h.byteOffset, h.byteLength);
      const timestamp = dv.getBigUint64(PREPARE_LAYOUT.timestamp.offset, true);
      if (fits(entryOp, canon.checksum, timestamp)) {
        // Known (a StartView's header) but never journaled here, so never acked: nacked like a
        // blank (deviation 23; upstream sets no bit). Else two replicas that both know the
        // header of an op only a dead replica ever held could never truncate it (seed 265 of 3).
        entries.push({ header: h.slice(), op: BigInt(entryOp), nack: !blind && entryOp > commit && !c.journal.faulty.has(entryOp) });
        chain.push(entryOp, canon.parent ?? 0n, timestamp);
        continue;
      }
    }
    // At a commit point that only the superblock recorded (`reportedCommit`), a hole is an op this
    // replica never journaled, so never acked (losses are faulty): nacked, it lets the merge find
    // the committed op among the other senders' headers (merge.ts `olderViewCandidate`).
    const nackable = entryOp > commit || (entryOp === commit && commit > c.commitMax);
    const nack = !blind && nackable && !c.journal.faulty.has(entryOp) && !c.journal.has(entryOp);
    entries.push({ header: null, op: BigInt(entryOp), nack });
  }
  if (blanked > 0) c.mark(Mark.SuffixBlankedStale, `do view change: ${blanked} entries`);
  return { op, commit, entries };
}

export function buildOwnDvc(c: Core): OwnDvc {
  const { op, commit, entries } = buildSuffix(c);
  const packed = packSuffix(entries);
  const frame = doViewChangeFrame(c, op, commit, packed);
  const decoded = suffixEntries(frame);
  assert(typeof decoded !== 'string', `own DoViewChange suffix does not decode: ${String(decoded)}`);
  return { frame, record: { replica: c.self, logView: c.logView, op, commit, entries: decoded } };
}
