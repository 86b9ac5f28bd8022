/**
 * A host's hint that the primary is gone: the host lost its link to this view's primary (a
 * process that dies closes its sockets, so peers see the link drop at once) and could not get
 * it back within its grace. Waiting out `heartbeat_timeout` (5 s) from there only delays the
 * failover (issue 12 item 9: failover within 1.5 s), so the backup acts as on that timeout now.
 *
 * A hint, never a verdict: it starts the same view change the heartbeat timeout would (safety
 * never rests on timing), and only a backup in normal status with its heartbeat timer running
 * takes it; a primary, a replica already changing views or probing after a restart ignores it.
 */
import type { Core } from './core.js';
import { onNormalHeartbeatTimeout } from './view-change.js';

/** True when the hint started a view change (the host counts it). */
export function onPrimaryUnreachable(c: Core): boolean {
  if (c.status !== 'normal' || c.isActingPrimary() || !c.timers.normalHeartbeat.running) return false;
  onNormalHeartbeatTimeout(c);
  return true;
}
