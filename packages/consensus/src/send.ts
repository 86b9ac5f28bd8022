/**
 * Every frame leaves through here. Two kinds of sends:
 *
 * - direct: RequestStartView, repair and state-transfer traffic, forwarding frames (not gated);
 * - gated: frames that advertise our view (Prepare, PrepareOk, Commit, StartViewChange,
 *   DoViewChange, StartView). They leave only once the superblock durably holds the (view,
 *   log_view) they were built in, and a PrepareOk or a forwarded/retransmitted Prepare only once
 *   the journal entry it vouches for is durable (§4.14, pitfall 2). Until then they wait in the
 *   outbox; a send whose (view, log_view) or journal entry is gone is discarded (the protocol
 *   retransmits what matters). The local work is never withheld, only the send.
 *
 * `emitGated` re-asserts the gate at the moment of emission: a violation is our bug.
 */
import { assert } from '@shoal/stdx';
import { Command, OFFSET_COMMAND } from '@shoal/protocol';
import type { Core, PendingSend } from './core.js';
import { Mark } from './marks.js';
import type { Op, ReplicaIndex } from './types.js';

/** Commands that advertise the sender's view and so must pass the gate. */
const GATED = new Set<number>([
  Command.Prepare, Command.PrepareOk, Command.Commit, Command.StartViewChange, Command.DoViewChange, Command.StartView,
]);
/** Control frames of which only the newest per destination matters while waiting. */
const LATEST_ONLY = new Set<number>([Command.Commit, Command.StartViewChange, Command.DoViewChange, Command.StartView]);

export function sendDirect(c: Core, to: ReplicaIndex, frame: Uint8Array): void {
  assert(to !== c.self, 'send to self');
  assert(!GATED.has(frame[OFFSET_COMMAND] as number), `command ${frame[OFFSET_COMMAND]} must go through the gate`);
  c.effects.push({ kind: 'send', to, frame });
}

export function sendGated(c: Core, to: ReplicaIndex, frame: Uint8Array, vouch: { op: Op; checksum: bigint } | null = null): void {
  assert(to !== c.self, 'send to self');
  const command = frame[OFFSET_COMMAND] as number;
  assert(GATED.has(command), `command ${command} is not gated`);
  const item: PendingSend = {
    to,
    frame,
    command,
    view: c.view,
    logView: c.logView,
    vouchOp: vouch === null ? null : vouch.op,
    vouchChecksum: vouch === null ? 0n : vouch.checksum,
  };
  if (ready(c, item) === 'send') {
    emitGated(c, item);
    return;
  }
  if (LATEST_ONLY.has(command)) {
    c.outbox = c.outbox.filter((p) => !(p.command === command && p.to === to));
  }
  const cap = 4 * c.config.prepareQueueDepth * c.n + 8 * c.n;
  if (c.outbox.length >= cap) {
    c.outbox.shift(); // oldest withheld send: safe to lose, retransmitted
    c.mark(Mark.OutboxOverflow);
  }
  c.outbox.push(item);
}

export function broadcastGated(c: Core, frame: Uint8Array): void {
  for (const to of c.others()) sendGated(c, to, frame);
}

function ready(c: Core, p: PendingSend): 'send' | 'wait' | 'discard' {
  if (p.view !== c.view || p.logView !== c.logView) return 'discard';
  if (p.vouchOp !== null) {
    const entry = c.journal.get(p.vouchOp);
    if (entry === undefined || entry.checksum !== p.vouchChecksum) return 'discard';
    if (!entry.durable) return 'wait';
  }
  return c.viewDurable() ? 'send' : 'wait';
}

function emitGated(c: Core, p: PendingSend): void {
  // Durable-before-send, asserted at the last moment.
  assert(c.viewDurable(), `gated command ${p.command} emitted before (view, log_view) is durable`);
  if (p.vouchOp !== null) {
    const entry = c.journal.get(p.vouchOp);
    assert(entry !== undefined && entry.durable && entry.checksum === p.vouchChecksum, `command ${p.command} vouches for a non-durable op ${p.vouchOp}`);
  }
  c.effects.push({ kind: 'send', to: p.to, frame: p.frame });
}

/** Releases every withheld send whose conditions now hold; discards stale ones. */
export function flushOutbox(c: Core): void {
  if (c.outbox.length === 0) return;
  const keep: PendingSend[] = [];
  for (const p of c.outbox) {
    const verdict = ready(c, p);
    if (verdict === 'send') emitGated(c, p);
    else if (verdict === 'wait') keep.push(p);
  }
  c.outbox = keep;
}
