/**
 * Trust: which journaled prepares are known to be on the canonical log, and the journal
 * truncations that remove the ones that are not.
 *
 * A replica applies op X only when its entry is trusted (upstream applies whatever its journal
 * holds, so a prepare left over from an older view below the new commit point would be applied:
 * see docs/internals-repair.md). An entry is trusted when
 *   - a canonical header of the current log names it (the merged log, an adopted StartView body,
 *     a live prepare from the current primary, our own prepare as primary, a Commit heartbeat's
 *     commit_checksum), or
 *   - the trusted entry (or canonical header) one op above names it as `parent`.
 * An entry a trusted successor contradicts is provably not canonical: it is removed by a suffix
 * truncation and its ops are marked faulty (never nacked) until repaired.
 */
import { assert } from '@shoal/stdx';
import { Command, HEADER_SIZE, OFFSET_COMMAND } from '@shoal/protocol';
import type { CanonicalHeader, Core } from './core.js';
import { entryFromFrame, entryHeader, type JournalEntry } from './journal.js';
import { journalAppend } from './journal-write.js';
import { Mark } from './marks.js';
import type { Op } from './types.js';

export function setCanon(c: Core, op: Op, header: CanonicalHeader): void {
  if (op < c.commitMin) return;
  const known = c.canon.get(op);
  if (known !== undefined && known.parent !== null && header.parent === null) return;
  c.canon.set(op, header);
}

/**
 * A new log is being installed: forget every anchor, and every trust mark above `keepThrough` =
 * the commit point known in the OLD log (captured before the new view raises it). An entry that
 * was on the old log at or below its commit point is committed, hence canonical in every later
 * view; anything above may have been discarded by the view change.
 */
export function resetTrust(c: Core, keepThrough: Op): void {
  c.canon.clear();
  c.journal.untrustAbove(Math.max(c.commitMin, keepThrough));
}

/** Forget anchors below the commit point (the one AT it stays: heartbeats and StartViews repeat it). */
export function pruneCanon(c: Core): void {
  if (c.canon.size === 0) return;
  for (const op of c.canon.keys()) if (op < c.commitMin) c.canon.delete(op);
}

/** The 256 header bytes we know for `op` (journal first, then a canonical header), or null. */
export function headerAt(c: Core, op: Op): Uint8Array | null {
  const entry = c.journal.get(op);
  if (entry !== undefined) return entryHeader(entry);
  const header = c.canon.get(op)?.header ?? null;
  if (header !== null && header[OFFSET_COMMAND] !== Command.Prepare) assert(false, `canonical header of op ${op} mutated: command ${header[OFFSET_COMMAND]}`);
  return header;
}

/** The identity checksum we know for `op`, or 0. */
export function checksumAt(c: Core, op: Op): bigint {
  return c.journal.get(op)?.checksum ?? c.canon.get(op)?.checksum ?? 0n;
}

export type Verdict = 'trusted' | 'missing' | 'unverified' | 'bogus';

/** Parent checksum known for op `y` from an anchor, or null. */
function anchorParent(c: Core, y: Op): bigint | null | 'mismatch' {
  const entry = c.journal.get(y);
  const canon = c.canon.get(y);
  // A parent of 0 means "unknown" (a log that starts above a lost commit-point header).
  if (canon !== undefined) {
    if (entry !== undefined && entry.checksum !== canon.checksum) return 'mismatch';
    if (canon.parent !== null && canon.parent !== 0n) return canon.parent;
    if (entry !== undefined) {
      entry.trusted = true;
      return entry.parent === 0n ? null : entry.parent;
    }
    return null;
  }
  if (entry !== undefined && entry.trusted) return entry.parent === 0n ? null : entry.parent;
  return null;
}

/**
 * Establishes whether the entry at `x` (> commit_min) is trusted, marking the chain on the way.
 * 'bogus' means a trusted successor contradicts an entry at some op in [x, …); the caller
 * truncates (see `discardBogus`).
 */
export function verify(c: Core, x: Op): { verdict: Verdict; bogusOp: Op } {
  const entry = c.journal.get(x);
  if (entry === undefined) return { verdict: 'missing', bogusOp: 0 };
  if (entry.trusted) return { verdict: 'trusted', bogusOp: 0 };
  const canon = c.canon.get(x);
  if (canon !== undefined) {
    if (canon.checksum === entry.checksum) {
      entry.trusted = true;
      return { verdict: 'trusted', bogusOp: 0 };
    }
    return { verdict: 'bogus', bogusOp: x };
  }
  // Walk up to the nearest anchor through consecutive untrusted entries.
  let y = x + 1;
  let parent: bigint | null = null;
  for (;;) {
    const anchor = anchorParent(c, y);
    if (anchor === 'mismatch') return { verdict: 'bogus', bogusOp: y };
    if (anchor !== null) {
      parent = anchor;
      break;
    }
    const e = c.journal.get(y);
    if (e === undefined) return { verdict: 'unverified', bogusOp: 0 };
    y++;
  }
  // Walk back down from y - 1 to x, checking each link. A parent of 0 is "unknown" (the first
  // prepare of a log that started above a lost commit-point header), not a checksum: the entries
  // below it stay unverified. Taken as a checksum it proved every entry below bogus, and a
  // replica re-fetched and discarded the same committed ops forever (seed 1009712 of 3).
  for (let k = y - 1; k >= x; k--) {
    if (parent === 0n) return { verdict: 'unverified', bogusOp: 0 };
    const e = c.journal.get(k);
    assert(e !== undefined, 'trust: chain walk met a hole');
    if (e.checksum !== parent) return { verdict: 'bogus', bogusOp: k };
    e.trusted = true;
    parent = e.parent;
  }
  return { verdict: 'trusted', bogusOp: 0 };
}

/**
 * Removes every journaled entry with op >= fromOp. Removed ops this replica may have acked become
 * `faulty` (lost, never nacked in a DoViewChange): every removed op above commit_min for an
 * integrity truncation, the `faulty` ops the caller names for a reconcile. The host records the
 * faulty range durably before it removes the entries (`journal_truncate.faultyThrough`), so a
 * restart still knows them (loss path 2: a replica must never nack what it acknowledged).
 */
export function truncateJournal(
  c: Core, fromOp: Op, reason: 'reconcile' | 'integrity' | 'rollback' | 'install', faulty: readonly Op[] = [],
): Op[] {
  const removed = c.journal.truncateFrom(fromOp);
  if (removed.length === 0) return removed;
  const lost = reason === 'integrity' ? removed.filter((op) => op > c.commitMin) : faulty.filter((op) => op >= fromOp && op > c.commitMin);
  for (const op of lost) c.journal.faulty.add(op);
  const faultyThrough = faultyTopFrom(c, fromOp);
  c.effects.push({ kind: 'journal_truncate', fromOp, faultyThrough });
  c.sm.truncated(fromOp);
  c.event('journal_truncated', `${reason} from ${fromOp} (${removed.length} entries, faulty through ${faultyThrough})`);
  return removed;
}

/** The highest faulty op at or above `fromOp`, or 0: what a truncation from there must keep recorded. */
export function faultyTopFrom(c: Core, fromOp: Op): Op {
  let top = 0;
  for (const op of c.journal.faulty) if (op >= fromOp && op > top) top = op;
  return top;
}

/**
 * A new log view is installed at head `op`: faulty ops above it were lost from older log views
 * and no longer matter (start-view.ts). The host forgets them too (a truncation above the head
 * that removes nothing and records no faulty op).
 */
export function forgetFaultyAbove(c: Core, op: Op): void {
  let forgot = false;
  for (const f of [...c.journal.faulty]) {
    if (f <= op) continue;
    c.journal.faulty.delete(f);
    forgot = true;
  }
  if (forgot) c.effects.push({ kind: 'journal_truncate', fromOp: op + 1, faultyThrough: 0 });
}

/**
 * Removes a provably non-canonical entry so repair can replace it, together with the unverified
 * run of entries right below it (down to commit_min or the first trusted entry or hole). Only the
 * bogus entry is proven wrong, but the run below is no better evidence: it is what the same stale
 * log left behind, and each of its entries would be exposed only once the one above it is
 * repaired, one repair round of the whole suffix per entry (seed 101041 of 5: a replica with ten
 * ops of a truncated view below the canonical suffix refetched 200 ops ten times and did not catch
 * up within the liveness window). Removed entries above commit_min are faulty (never nacked), as
 * every integrity truncation's are.
 *
 * The entries above the bogus one are not implicated (the ones the chain walk just checked are
 * trusted; the rest are judged when reached), so they are journaled again right after the
 * truncation, which clears their faulty mark: the journal is truncated from `from` (the host's
 * WAL only truncates a suffix) and they are re-appended as repairs. Dropping them destroyed ops
 * the replica had acknowledged, sometimes their only surviving copy: seed 1003514 of 3 lost
 * metadata ops 69..72 above a stale op 30 on the survivor of a degraded phase, and the merge
 * waited for a body nobody had.
 */
export function discardBogus(c: Core, op: Op): void {
  assert(op > c.commitMin, 'trust: a bogus entry at or below commit_min was applied');
  let from = op;
  while (from - 1 > c.commitMin && c.journal.get(from - 1)?.trusted === false) from--;
  const kept: JournalEntry[] = [];
  for (let k = op + 1; k <= c.journal.head; k++) {
    const e = c.journal.get(k);
    if (e !== undefined) kept.push(e);
  }
  c.mark(Mark.BogusDiscarded, from === op ? `op ${op}` : `op ${op} (and the unverified ops from ${from})`);
  truncateJournal(c, from, 'integrity');
  for (const e of kept) journalAppend(c, entryFromFrame(e.frame, false, e.trusted, true), 'repair');
}
