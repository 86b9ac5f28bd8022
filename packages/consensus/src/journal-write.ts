/**
 * Taking a prepare into the journal and vouching for it: the append (journal, state machine,
 * the host's write), the forward along the replication chain (§4.6) and the PrepareOk (§4.8).
 * Both sends vouch for the entry, so they pass the durability gate (send.ts).
 */
import { PrepareHeaderView } from '@shoal/protocol';
import type { Core } from './core.js';
import { prepareOkFrame, restampedPrepare } from './frames.js';
import { recordOf, type JournalEntry } from './journal.js';
import type { JournalSource } from './state-machine.js';
import { sendGated } from './send.js';
import type { Op, ReplicaIndex } from './types.js';

/** Puts the entry in the journal, tells the state machine, and asks the host to persist it. */
export function journalAppend(c: Core, entry: JournalEntry, source: Exclude<JournalSource, 'restore'>): void {
  c.journal.put(entry);
  c.sm.journaled(recordOf(entry), source);
  // The effect shares the entry's immutable frame (command 6), never the caller's buffer.
  c.effects.push({ kind: 'journal_append', op: entry.op, checksum: entry.checksum, frame: entry.frame });
}

/** §4.6: forward to the successor unless it is the primary of the prepare's view (pitfall 6). */
export function forwardAlongChain(c: Core, entry: JournalEntry): void {
  if (entry.op <= c.commitMin) return;
  const next = ((c.self + 1) % c.n) as ReplicaIndex;
  if (next === c.self || next === c.primaryIndex(c.view)) return;
  sendGated(c, next, restampedPrepare(entry.frame, c.view), { op: entry.op, checksum: entry.checksum });
}

export function sendPrepareOk(c: Core, entry: JournalEntry): void {
  if (c.status !== 'normal' || c.transferring()) return;
  const primary = c.primaryIndex();
  if (primary === c.self) return;
  const ack = prepareOkFrame(c, entry);
  sendGated(c, primary, ack, { op: entry.op, checksum: entry.checksum });
}

const view = new PrepareHeaderView();

/** Acks a committed prepare this replica applied but no longer holds (nothing to be durable). */
export function sendAppliedAck(c: Core, frame: Uint8Array): void {
  if (c.status !== 'normal' || c.transferring()) return;
  const primary = c.primaryIndex();
  if (primary === c.self) return;
  const h = view.bind(frame, 0);
  const ack = prepareOkFrame(c, { parent: h.parent, checksum: h.checksum, op: h.opNumber, timestamp: h.timestamp, request: h.request, operation: h.operation });
  sendGated(c, primary, ack);
}

/** Re-sends PrepareOks for journaled ops in (from, to] (StartView adoption, §5.7 step 2). */
export function ackJournaled(c: Core, from: Op, to: Op): void {
  for (let op = from + 1; op <= to; op++) {
    const entry = c.journal.get(op);
    if (entry !== undefined) sendPrepareOk(c, entry);
  }
}
