/**
 * A host's hint that the primary is gone: the host lost its link to this view's primary (a
 * process that dies closes its sockets, so peers see the link drop at once) and could not get
 * it back within its grace. Waiting out `heartbeat_timeout` (5 s) from there only delays the
 * failover (issue 12 item 9: failover within 1.5 s), so the backup acts as on that timeout now.
 *
 * The same holds in a view change whose primary-elect is gone (restarted or killed while the
 * view changed): the replica escalates to the next view now, as the view-change status timer
 * would 5 s later (nemesis seed 4242: a group waited out that timer twice in a row, 8.4 s without
 * writes, while the next view's primary was up and complete).
 *
 * A hint, never a verdict: it starts the same view change a timer would (safety never rests on
 * timing). A backup in normal status with its heartbeat timer running, or a replica in a view
 * change led by another, takes it; a primary, a primary-elect or a probing replica ignores it.
 */
import type { Core } from './core.js';
import { escalateView, onNormalHeartbeatTimeout } from './view-change.js';

/** True when the hint started a view change (the host counts it). */
export function onPrimaryUnreachable(c: Core): boolean {
  if (c.status === 'view_change') {
    if (c.primaryIndex() === c.self) return false;
    escalateView(c);
    return true;
  }
  if (c.status !== 'normal' || c.isActingPrimary() || !c.timers.normalHeartbeat.running) return false;
  onNormalHeartbeatTimeout(c);
  return true;
}
