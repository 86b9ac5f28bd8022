/**
 * Coverage marks (TigerBeetle-style): one named mark per fallback or rare path of the core, so a
 * simulator run can show that every such path was reached. `Core.mark(m)` counts it (per replica
 * life, readable through `Replica.marks()`) and emits an `event` effect named `mark` whose detail
 * starts with the mark's name (hosts log it; the simulator counts it). Deterministic and cheap: a
 * mark fires at most a few times per entry point, never per op of a loop.
 *
 * Every mark is documented in docs/internals-consensus-core.md ("Coverage marks"); a test checks
 * that the table there and this list agree.
 */
export const Mark = Object.freeze({
  // --- Incomplete journals (a restarted replica that may have acked ops it no longer holds).
  /** A replica with an incomplete journal withheld its DoViewChange (once per view). */
  VoteAbstain: 'vote_abstain',
  /** The abstain bound passed: the replica votes blind above its commit point. */
  VoteBlind: 'vote_blind',
  /** The journal is complete again (the replica applied the head it had to reach, or leads a view). */
  JournalComplete: 'journal_complete',
  /** A replica booted with prior state but without its journal (a `--fresh` rejoin): it will abstain. */
  JournalLost: 'journal_lost',
  /** Boot marked ops faulty that storage lost or that a truncation dropped (the persisted floor). */
  RestoreFaulty: 'restore_faulty',
  /** Boot restored a log view whose installed head is above the journal: the log ends there. */
  RestoreLogHead: 'restore_log_head',
  /** Boot dropped entries of a view above the durable log view (a crash before that view's superblock write). */
  RestoreUnvouched: 'restore_unvouched',
  /** A DoViewChange reported its log as ending at a faulty op above its head (a lost tail). */
  VoteLostTail: 'vote_lost_tail',

  // --- The merge on the primary-elect (§5.5).
  /** A nack quorum truncated the merged log above the commit point. */
  MergeNackTruncation: 'merge_nack_truncation',
  MergePrimaryLogEnd: 'merge_primary_log_end',
  /** Every DVC is in and nobody holds the body of an op: dropped with everything above. */
  MergeUnservableTruncation: 'merge_unservable_truncation',
  /** The commit-point op was taken without a present copy (or without a header at all). */
  MergeCommitPointWithoutCopy: 'merge_commit_point_without_copy',
  /** A sender that does not know where its log ends was not counted as a nack by omission. */
  MergeLogEndUnknown: 'merge_log_end_unknown',
  /** The merge waits: too few DVC senders show every op they may have acked (blind votes, lost tails past their window). */
  MergeAwaitingIntact: 'merge_awaiting_intact',
  /** The merge waits: an op has no usable canonical copy yet. */
  MergeAwaitingRepair: 'merge_awaiting_repair',
  /** The merge is deadlocked (a nack quorum at or below the commit point, a broken chain). */
  MergeDeadlocked: 'merge_deadlocked',
  /** The merged log holds more uncommitted ops than the pipeline: refused. */
  MergeRefusedPipeline: 'merge_refused_pipeline',
  /** Older-log_view headers "committed elsewhere" were kept below the merged window. */
  MergeCommittedElsewhere: 'merge_committed_elsewhere',
  /** No canonical header above the commit point: the one older-log_view header there was taken. */
  MergeOlderViewAdopted: 'merge_older_view_adopted',
  /** No canonical header at the commit point: the header a sender's head chains down to there was taken. */
  MergeCommitPointFromHeadChain: 'merge_commit_point_from_head_chain',
  /** Canonical senders disagreed at an op: the copy stamped above the canonical log view was taken. */
  MergeStampResolved: 'merge_stamp_resolved',

  // --- Finishing a view (§5.6, §5.7).
  /** The primary-elect pulls a missing body from a DVC sender. */
  ElectRepair: 'elect_repair',
  /** The primary-elect found no DVC sender that can serve a missing op: it waits. */
  ElectNoSource: 'elect_no_source',
  /** The primary-elect's body source was silent or evicted: next source. */
  ElectSourceRotated: 'elect_source_rotated',
  /** A reconcile truncated the local journal's suffix (§5.6 step 1 / §5.7 step 1). */
  ReconcileTruncation: 'reconcile_truncation',
  /** Entries that agreed with the new log but sat above the truncation point became faulty. */
  ReconcileFaulty: 'reconcile_faulty',
  /** The new primary's rebuilt pipeline starts above ops it applied beyond the merged commit point. */
  PipelineAboveApplied: 'pipeline_above_applied',
  /** The recovery barrier (a boot with an uncommitted tail) was capped to a new log's head. */
  RecoveryBarrierCapped: 'recovery_barrier_capped',
  /** A boot with an uncommitted tail armed the recovery barrier. */
  RecoveryBarrierArmed: 'recovery_barrier_armed',
  /** A late StartView for the current view only raised commit_max (deviation 5). */
  StartViewCurrentView: 'start_view_current_view',
  /** A StartView addressed to a previous incarnation was ignored (§5.7 guard 3). */
  StartViewPreviousIncarnation: 'start_view_previous_incarnation',
  /** A DVC or StartView suffix blanked a header that does not chain (say nothing rather than be dropped). */
  SuffixBlankedStale: 'suffix_blanked_stale',

  // --- Probing (§5.9).
  /** Probing exhausted its attempts: the replica starts an election. */
  ProbeGiveUp: 'probe_give_up',
  /** The current view's primary-by-index probed: it cannot lead, so a view change starts. */
  ProbeFromPrimary: 'probe_from_primary',
  /** A probing (restarted) replica joined a view change others started beyond its view. */
  ProbeJoinsViewChange: 'probe_joins_view_change',
  /** A primary-by-index (or backup) saw a newer view and probes instead of leading. */
  ProbeNewerView: 'probe_newer_view',

  // --- Trust and the journal (docs/internals-repair.md).
  /** A trusted successor contradicted an entry: it was discarded by a suffix truncation. */
  BogusDiscarded: 'bogus_discarded',
  /** A same-view prepare that does not chain to the entry below was dropped (§13.4). */
  HashChainBreak: 'hash_chain_break',
  /** A live prepare filled a hole below repaired ops; the sequencer advanced over the run. */
  SequencerOverRepaired: 'sequencer_over_repaired',
  /** A committed prepare already applied and compacted away was re-acked without a copy. */
  AppliedAckWithoutCopy: 'applied_ack_without_copy',
  /** A failed journal append was rolled back. */
  JournalWriteRollback: 'journal_write_rollback',
  /** A failed journal append under vouched ops stopped the replica. */
  JournalWriteFatal: 'journal_write_fatal',
  /** A failed journal append of an op already applied here was written again (never rolled back). */
  JournalWriteRetried: 'journal_write_retried',

  // --- Repair and state transfer.
  /** A stalled repair session re-asked its window. */
  RepairStallRetry: 'repair_stall_retry',
  /** Every op to commit_max is held but none can be verified (no anchor): state transfer. */
  RepairUnverifiable: 'repair_unverifiable',
  /** A repair server evicted the range: state transfer. */
  RepairRangeEvicted: 'repair_range_evicted',
  /** A state transfer was refused (or abandoned) and fell back to journal repair. */
  TransferFallbackRepair: 'transfer_fallback_repair',
  /** A staged snapshot failed to verify or decode: the transfer restarts. */
  TransferDecodeFailure: 'transfer_decode_failure',
  /** A state transfer stalled past its budget and was abandoned. */
  TransferStalled: 'transfer_stalled',
  /** An installed snapshot was ahead of commit_min: journal entries above it were dropped (faulty). */
  TransferInstallAhead: 'transfer_install_ahead',

  // --- Durability gate and forwarding.
  /** The outbox overflowed: its oldest withheld send was dropped. */
  OutboxOverflow: 'outbox_overflow',
  /** A superblock write failed (retried with backoff). */
  SuperblockWriteFailed: 'superblock_write_failed',
  /** A pending session forward followed a view change to the new primary. */
  ForwardFollowedView: 'forward_followed_view',
  /** A forward deadline inside a view change was extended once. */
  ForwardDeadlineExtended: 'forward_deadline_extended',
  /** A forward got no answer in time. */
  ForwardTimedOut: 'forward_timed_out',

  // --- Leadership hand-back (hand-back.ts).
  /** The acting primary started handing the group to a caught-up replica the host named. */
  HandBackStarted: 'hand_back_started',
  /** A hand-back's drain passed its bound: it entered the new view with prepares in flight. */
  HandBackDrainBounded: 'hand_back_drain_bounded',

  // --- Group commit (group-commit.ts).
  /** Requests queued behind a full pipeline or the wait depth (`groupWaitDepth`) were joined into one prepare (once per promotion). */
  GroupCommit: 'group_commit',
} as const);

export type Mark = (typeof Mark)[keyof typeof Mark];
export type MarkName = keyof typeof Mark;

/** Every mark value, in declaration order. */
export const MARKS: readonly Mark[] = Object.freeze(Object.values(Mark));
