/**
 * `invariants()` runs after every entry point: O(pipeline) always, O(journal) behind
 * `deepInvariants` (tests). A failure is our bug: an assertion.
 */
import { assert } from '@shoal/stdx';
import type { Core } from './core.js';

export interface Watermarks {
  view: number;
  commitMin: number;
  commitMax: number;
}

export function checkInvariants(c: Core, previous: Watermarks): void {
  if (c.stopped !== null) return;
  assert(c.view >= previous.view, `view went back: ${previous.view} -> ${c.view}`);
  assert(c.commitMin >= previous.commitMin, `commit_min went back: ${previous.commitMin} -> ${c.commitMin}`);
  assert(c.commitMax >= previous.commitMax, `commit_max went back: ${previous.commitMax} -> ${c.commitMax}`);
  assert(c.logView <= c.view, 'log_view above view');
  assert(c.commitMin <= c.commitMax, 'commit_min above commit_max');
  assert(c.commitMin <= c.op, `commit_min ${c.commitMin} above op ${c.op}`);
  if (c.status === 'normal') assert(c.logView === c.view, 'Normal status outside its own log view');
  if (c.status === 'recovering') assert(c.pipeline.empty, 'recovering with a pipeline');
  c.pipeline.check();
  const head = c.pipeline.head();
  if (head !== undefined) {
    assert(c.isPrimaryByIndex() || c.status === 'view_change', 'a backup holds a pipeline outside a view change');
    assert(head.op > c.commitMin, 'pipeline head already applied');
    if (c.isActingPrimary()) {
      const tail = c.pipeline.tail();
      assert(tail !== undefined && tail.op === c.op, 'pipeline tail is not the sequencer');
      assert(c.pipeline.length <= c.config.prepareQueueDepth, 'pipeline over depth');
      for (const p of c.pipeline.entries()) {
        const entry = c.journal.get(p.op);
        assert(entry !== undefined && entry.checksum === p.checksum, `pipeline op ${p.op} not journaled`);
      }
    }
  }
  if (c.isActingPrimary()) assert(c.lastPrepareChecksum === (c.journal.get(c.op)?.checksum ?? c.lastPrepareChecksum), 'chain head mismatch');
  assert(c.pipeline.requests.length <= c.pipeline.requests.capacity, 'request queue over capacity');
  assert(c.pipeline.requests.bytes <= c.pipeline.requests.bytesMax, 'request queue over its byte bound');
  const sb = c.sb.durable;
  if (sb !== null) assert(sb.logView <= sb.view, 'durable log_view above view');
  if (c.transfer.stage === 'idle') assert(c.transfer.session === null, 'idle transfer with a session');
  if (c.config.deepInvariants) {
    c.journal.checkDeep();
    c.clientTable?.checkStructure();
    for (let op = c.commitMin + 1; op <= c.journal.head; op++) {
      const e = c.journal.get(op);
      if (e === undefined) continue;
      if (e.trusted) {
        const canon = c.canon.get(op);
        if (canon !== undefined) assert(canon.checksum === e.checksum, `trusted op ${op} contradicts its anchor`);
      }
    }
  }
}
