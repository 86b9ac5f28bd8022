/**
 * What a host hands a driver (ports, hooks, options) and what it gets back. See
 * docs/internals-driver.md for how the runtime and the simulator wire these.
 */
import type { ClientToken, Completion, ConfigInput, ConsensusConfig, SessionOutcome, TimeSource } from '@shoal/consensus';
import type { Prng } from '@shoal/stdx';
import type { Disk } from '@shoal/storage';

/** Where frames go. Both calls may drop (VSR retransmits); neither may throw. */
export interface Transport {
  /** A replica-plane frame to replica `replica` (never this replica). */
  sendToReplica(replica: number, frame: Uint8Array): void;
  /**
   * A Reply or Eviction to a client. `token` is the host's correlation token given with the
   * request (null: deliver by client id, best effort).
   */
  sendToClient(client: bigint, token: ClientToken | null, frame: Uint8Array): void;
}

/** Why a driver stopped (the runtime maps each to an exit code). */
export type FatalReason =
  | 'metadata_recovery_refused'
  | 'partition_recovery_refused'
  | 'journal_io'
  | 'partition_io'
  | 'transfer_io'
  | 'consensus';

export const FATAL_REASONS: readonly FatalReason[] = Object.freeze([
  'metadata_recovery_refused', 'partition_recovery_refused', 'journal_io', 'partition_io', 'transfer_io', 'consensus',
]);

/** Outcome of a session operation (`submitSession` or a forwarded one). */
export interface SessionResult {
  readonly token: ClientToken;
  readonly client: bigint;
  readonly session: 'register' | 'logout';
  readonly outcome: SessionOutcome;
  /** Register: the bound epoch (register op). Logout: the committed logout op. 0 otherwise. */
  readonly epoch: bigint;
  readonly watermark: bigint;
}

/** One op applied to the state machine (every replica, op order). */
export interface AppliedOp {
  readonly group: bigint;
  readonly op: number;
  readonly operation: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly userId: number;
  /** Prepare timestamp (µs). */
  readonly timestamp: bigint;
  /** The prepare body (a view: copy it to keep it). */
  readonly body: Uint8Array;
  /** 0 = accepted, else the committed rejection code. */
  readonly code: number;
  /** The typed reply payload (without the result section; empty on a rejection). */
  readonly payload: Uint8Array;
}

/** A state transfer replaced the state (metadata: the snapshot payload now in force). */
export interface InstalledSnapshot {
  readonly group: bigint;
  readonly snapshotOp: number;
  readonly commitOp: number;
  /** Metadata: the installed snapshot.bin payload when it was ahead (null otherwise / partitions). */
  readonly snapshotPayload: Uint8Array | null;
}

export interface DriverHooks {
  /** The driver stopped: exit with the code of `reason`. Called once. */
  fatal?(reason: FatalReason, detail: string): void;
  sessionResult?(result: SessionResult): void;
  applied?(op: AppliedOp): void;
  /** commit_min advanced to `op` (incl. Register/Logout); `checksum` = the committed prepare's identity. */
  committed?(op: number, operation: number, checksum: bigint | null): void;
  installed?(snapshot: InstalledSnapshot): void;
  dropped?(command: number, from: number, reason: string): void;
  event?(name: string, detail: string): void;
  /** The replica's role changed (its view, the primary it knows or null, acting primary). */
  role?(role: { readonly view: number; readonly primary: number | null; readonly acting: boolean }): void;
  /** A completion is being delivered to the core (tracing, tests). */
  completed?(completion: Completion): void;
}

export interface DriverOptions {
  readonly config: ConsensusConfig | ConfigInput;
  readonly disk: Disk;
  readonly transport: Transport;
  readonly time: TimeSource;
  readonly prng: Prng;
  readonly hooks?: DriverHooks;
  /** flush() at the end of every entry point (default false: the host flushes per turn). */
  readonly autoFlush?: boolean;
  /** Ticks before a completion is delivered (default: at once). The simulator injects disk latency here. */
  readonly completionDelay?: (completion: Completion) => number;
  /**
   * Boot as a replica that HAD state even when storage holds none (a cluster replica restarted
   * with `--fresh`): ceded and probing (§5.10), so an empty log never leads the view it finds
   * itself primary of. Default false (an empty group is a new group: plain init).
   */
  readonly rejoin?: boolean;
}

export type OpenResult<T> =
  | { readonly ok: true; readonly driver: T }
  | {
    readonly ok: false; readonly reason: FatalReason; readonly detail: string;
    /**
     * A partition refused because its `purge.gen` names this created revision, newer than the
     * one the host passed: a later incarnation the host's metadata has not caught up with yet
     * (its boot state is behind its own disk), or a damaged record. Nothing was removed.
     */
    readonly incarnationAhead?: bigint;
  };
