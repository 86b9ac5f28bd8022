/**
 * Control messages between the supervisor (main thread) and the workers: rare events only
 * (start-up, the listening socket, stats on a scrape, shutdown, fatal errors), so they use
 * `postMessage`. Every frame between workers goes through the rings instead (channels/).
 *
 * ```
 *  supervisor ──▶ worker                         worker ──▶ supervisor
 *  listen_fd      (shards ≠ 0) share this fd     listening  (shard 0) bound; here is the fd
 *  drain          stop accepting, answer what    ready      serving (metadata: recovered)
 *                 is in flight, close clients    drained    nothing left in flight
 *  stop           flush, fsync, close storage    stopped    everything durable and closed
 *  stats_request  report ThreadStats             stats      the report
 *                                                thread     my kernel thread id (at start)
 *  adopt_replica  take this handshaken replica   fatal      exit the node with this reason
 *                 socket (plaintext hand-off)    replica_closed  an adopted replica link ended
 *  start_replica_plane  (TLS) run the whole      replica_plane   the plane listens (TLS owner)
 *                 replica plane on this shard
 *  bearer_request (a shard) is this personal     bearer     ok / denied / unavailable
 *                 access token valid? (HTTP auth)
 * ```
 */
import type { ThreadStats } from '../metrics/thread-stats.js';
import type { FatalReason } from './exit-codes.js';

export type SupervisorToWorker =
  | { readonly type: 'listen_fd'; readonly fd: number }
  | { readonly type: 'drain'; readonly deadlineMs: number }
  | { readonly type: 'stop' }
  | { readonly type: 'stats_request'; readonly id: number; readonly gc: boolean }
  /**
   * A replica connection after its handshake on the acceptor: adopt the fd (`new net.Socket({fd})`),
   * replay `leftover` (bytes read past ReplicaFinish) first. The acceptor never closes its handle.
   */
  | { readonly type: 'adopt_replica'; readonly replica: number; readonly fd: number; readonly leftover: Uint8Array }
  /** TLS on: this shard runs the replica plane itself (TLS sessions cannot change threads). */
  | { readonly type: 'start_replica_plane' }
  /** An HTTP request's bearer credential, checked against this shard's metadata copy (http-auth.ts). */
  | { readonly type: 'bearer_request'; readonly id: number; readonly token: string };

/** A bearer check's answer: `unavailable` while the shard has no metadata snapshot yet. */
export type BearerVerdict = 'ok' | 'denied' | 'unavailable';

export type WorkerToSupervisor =
  | { readonly type: 'ready' }
  /** Posted once at start: the worker's kernel thread id (thread-id.ts), null where unknown. */
  | { readonly type: 'thread'; readonly tid: number | null }
  | { readonly type: 'listening'; readonly fd: number; readonly host: string; readonly port: number }
  | { readonly type: 'drained' }
  | { readonly type: 'stopped' }
  | { readonly type: 'stats'; readonly id: number; readonly stats: ThreadStats }
  | { readonly type: 'fatal'; readonly reason: FatalReason; readonly detail: string }
  /** An adopted replica link closed: the supervisor frees its pair slot (`releaseHandedOff`). */
  | { readonly type: 'replica_closed'; readonly replica: number }
  /** TLS: the replica plane started on this worker and listens here. */
  | { readonly type: 'replica_plane'; readonly address: string | null }
  | { readonly type: 'bearer'; readonly id: number; readonly verdict: BearerVerdict };

const SUPERVISOR_TYPES = new Set(['listen_fd', 'drain', 'stop', 'stats_request', 'adopt_replica', 'start_replica_plane', 'bearer_request']);
const WORKER_TYPES = new Set(['ready', 'thread', 'listening', 'drained', 'stopped', 'stats', 'fatal', 'replica_closed', 'replica_plane', 'bearer']);

/** Narrowing for messages arriving on a port (they are `unknown` at the boundary). */
export function isSupervisorMessage(value: unknown): value is SupervisorToWorker {
  return typeof value === 'object' && value !== null && SUPERVISOR_TYPES.has(String((value as { type?: unknown }).type));
}

export function isWorkerMessage(value: unknown): value is WorkerToSupervisor {
  return typeof value === 'object' && value !== null && WORKER_TYPES.has(String((value as { type?: unknown }).type));
}
