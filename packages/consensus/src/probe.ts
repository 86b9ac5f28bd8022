/**
 * RequestStartView probing (§5.9): a replica that restarted, or that saw a newer view, asks the
 * current primary for a StartView instead of trusting its own stale view. The probe carries this
 * boot's incarnation, echoed by the answer, so a StartView addressed to a previous boot is ignored
 * (§5.7 guard 3). With `view_probe_attempts_max = N`, N − 1 probes go out and the Nth timer fire
 * starts an election (pitfall 5). `startProbing` itself is a status transition (view-change.ts).
 */
import { Command, RequestStartViewHeaderView } from '@shoal/protocol';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { requestStartViewFrame } from './frames.js';
import { Mark } from './marks.js';
import { sendDirect } from './send.js';
import { sendProbeAnswer } from './start-view.js';
import { setStage } from './state-transfer.js';
import { asView, type ReplicaIndex } from './types.js';
import { enterViewChange } from './view-change.js';

function broadcastProbe(c: Core): void {
  const frame = requestStartViewFrame(c);
  for (const to of c.others()) sendDirect(c, to, frame.slice());
}

export function onRequestStartViewTimeout(c: Core): void {
  const t = c.timers.requestStartViewMessage;
  if (c.status === 'recovering') {
    c.probeAttempts += 1;
    if (c.probeAttempts >= c.config.viewProbeAttemptsMax) {
      t.stop();
      if (c.transfer.stage === 'awaiting_target' && c.transfer.session === null) setStage(c, 'idle');
      c.mark(Mark.ProbeGiveUp, `view ${c.view}`);
      c.event('probe', `exhausted after ${c.probeAttempts} fires; electing`);
      enterViewChange(c, asView(c.view + 1));
      return;
    }
    broadcastProbe(c);
    t.reset();
    return;
  }
  if (c.status === 'view_change' && c.primaryIndex() !== c.self) {
    broadcastProbe(c);
    t.reset();
    return;
  }
  t.stop();
}

const rsvView = new RequestStartViewHeaderView();

export function onRequestStartView(c: Core, frame: Uint8Array): string | null {
  const h = rsvView.bind(frame, 0);
  const from = h.replica as ReplicaIndex;
  if (c.status !== 'normal') return c.drop(Command.RequestStartView, from, Drop.NotNormal);
  if (from === c.primaryIndex()) {
    // The current view's primary-by-index is probing: it cannot lead this view.
    if (h.view === c.view) {
      c.mark(Mark.ProbeFromPrimary, `view ${c.view}`);
      enterViewChange(c, asView(c.view + 1));
      return null;
    }
    return c.drop(Command.RequestStartView, from, Drop.ProbeFromPrimaryOtherView);
  }
  if (!c.isActingPrimary() || c.logView !== c.view) return c.drop(Command.RequestStartView, from, Drop.NotPrimary);
  sendProbeAnswer(c, from, h.incarnation);
  return null;
}
