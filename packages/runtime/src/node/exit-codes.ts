/**
 * `fatal(reason)`: the environment failed in a way the node cannot survive (style habit 8). The
 * whole process exits with a code per reason, after one `fatal` log line naming the reason and
 * its detail. There is no half-alive node: a worker that dies takes the process down.
 *
 * The codes are stable (operators and supervisors match on them); docs/runtime.md and
 * docs/operations.md carry the same table.
 */
export const FatalReason = {
  /** Command-line flags could not be parsed. */
  usage: 2,
  /** The configuration failed validation (every error is printed first). */
  config_invalid: 3,
  /** The config file could not be read. */
  config_unreadable: 4,
  /** `shoal.identity` belongs to another cluster or replica, or the directory is not a Shoal data dir. */
  data_dir_refused: 10,
  /** `--fresh` could not wipe the data directory. */
  data_dir_wipe_failed: 11,
  /** Metadata recovery refused the on-disk state (snapshot, superblock, WAL interior, identity). */
  metadata_recovery_refused: 12,
  /** A partition's files could not be opened or recovered, and a single node cannot refill it. */
  partition_recovery_refused: 13,
  /** A listener could not bind (address in use, permission). */
  listen_failed: 20,
  /** A worker thread threw, exited or failed to start. */
  worker_crashed: 30,
  /** A worker did not report ready in time. */
  worker_start_timeout: 31,
  /** A disk write, fsync or rename failed (EIO, ENOSPC, ...). */
  disk_io: 40,
  /** The metadata superblock stayed unwritable (cluster.superblock_wedged_fatal_timeout). */
  superblock_wedged: 41,
  /** The consensus core stopped itself (an invariant it cannot continue past). */
  consensus_stopped: 42,
  /** An always-on assertion failed: our bug. */
  assertion: 43,
  /** Graceful shutdown did not finish within system.sharding.shutdown_join_timeout. */
  shutdown_timeout: 50,
  /** An uncaught exception or unhandled rejection on the main thread. */
  uncaught: 70,
} as const;

export type FatalReason = keyof typeof FatalReason;

export function exitCodeOf(reason: FatalReason): number {
  return FatalReason[reason];
}

export function isFatalReason(value: string): value is FatalReason {
  return Object.hasOwn(FatalReason, value);
}
