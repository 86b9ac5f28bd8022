/**
 * Why the core dropped a frame: the reasons of `dropped` effects and of `onMessage`'s return
 * value, by name. The values are the short snake_case strings hosts log and count (they are
 * stable: metrics and tests key on them). Reasons that come from a protocol decoder
 * (`validateHeader`, the suffix and manifest decoders) or from the state machine's `verify` are
 * passed through as those modules name them (`Core.dropInvalid`).
 */
export const Drop = Object.freeze({
  Stopped: 'stopped',
  // Routing (replica.ts).
  ClusterMismatch: 'cluster_mismatch',
  ForwardingOnPartitionPlane: 'forwarding_on_partition_plane',
  NoGroup: 'no_group',
  GroupMismatch: 'group_mismatch',
  FromSelf: 'from_self',
  RoutedRequestNotAccepted: 'routed_request_not_accepted',
  UnhandledCommand: 'unhandled_command',
  // Status.
  Transferring: 'transferring',
  NotNormal: 'not_normal',
  Recovering: 'recovering',
  NotServing: 'not_serving',
  NotPrimary: 'not_primary',
  NotActingPrimary: 'not_acting_primary',
  // Prepare (backup).
  PrepareNewerView: 'prepare_newer_view',
  PrepareOlderView: 'prepare_older_view',
  PrepareAtPrimary: 'prepare_at_primary',
  AlreadyApplied: 'already_applied',
  JournalConflict: 'journal_conflict',
  HashChainBreak: 'hash_chain_break',
  Gap: 'gap',
  JournalFull: 'journal_full',
  /** Prefix of `prepare_rejected_<state machine reason>`. */
  PrepareRejected: 'prepare_rejected',
  // PrepareOk (primary).
  AckOlderView: 'ack_older_view',
  AckNewerView: 'ack_newer_view',
  AckNotInPipeline: 'ack_not_in_pipeline',
  AckChecksumMismatch: 'ack_checksum_mismatch',
  // Commit heartbeat.
  CommitNewerView: 'commit_newer_view',
  CommitOlderView: 'commit_older_view',
  CommitNotFromPrimary: 'commit_not_from_primary',
  CommitAtPrimary: 'commit_at_primary',
  // View change.
  SvcOlderView: 'svc_older_view',
  SvcCurrentViewNotInViewChange: 'svc_current_view_not_in_view_change',
  DvcOlderView: 'dvc_older_view',
  DvcNotInViewChange: 'dvc_not_in_view_change',
  SvNotFromPrimary: 'sv_not_from_primary',
  SvOlderView: 'sv_older_view',
  SvPreviousIncarnation: 'sv_previous_incarnation',
  SvStale: 'sv_stale',
  SvBelowCommitMin: 'sv_below_commit_min',
  SvCurrentView: 'sv_current_view',
  ProbeFromPrimaryOtherView: 'probe_from_primary_other_view',
  // Repair.
  NoRepairSession: 'no_repair_session',
  RepairOutOfScope: 'repair_out_of_scope',
  RepairNotCanonical: 'repair_not_canonical',
  RepairAlreadyHeld: 'repair_already_held',
  RepairNonceMismatch: 'repair_nonce_mismatch',
  // State transfer.
  TransferNonceMismatch: 'transfer_nonce_mismatch',
  TransferDuplicateTarget: 'transfer_duplicate_target',
  NoSnapshotArtifact: 'no_snapshot_artifact',
  UnknownArtifactKind: 'unknown_artifact_kind',
  ArtifactTooLarge: 'artifact_too_large',
  ManifestTooLarge: 'manifest_too_large',
  CommitOpAboveCommitMax: 'commit_op_above_commit_max',
  OfferBehind: 'offer_behind',
  SnapshotOpNotSafe: 'snapshot_op_not_safe',
  ChunkNotNextArtifact: 'chunk_not_next_artifact',
  ChunkOffsetMismatch: 'chunk_offset_mismatch',
  ChunkEmpty: 'chunk_empty',
  ChunkOverrunsArtifact: 'chunk_overruns_artifact',
  OfferBuilding: 'offer_building',
  ChunkBadArtifact: 'chunk_bad_artifact',
  ChunkPastEnd: 'chunk_past_end',
  // Forwarding.
  ForwardResultUnmatched: 'forward_result_unmatched',
} as const);

export type Drop = (typeof Drop)[keyof typeof Drop];
