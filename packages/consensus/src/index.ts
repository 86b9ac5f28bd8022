/**
 * @shoal/consensus: the pure, deterministic VSR replica core for both planes.
 * See docs/internals-consensus-core.md.
 */
export { Replica, type ReplicaOptions, type ReplicaStatus, type DropReason, type RequestCheckKind } from './replica.js';
export { ReplicaRole } from './role.js';
export { UNCHECKED_INGRESS, type FrameIngress } from './ingress.js';
export { Mark, MARKS, type MarkName } from './marks.js';
export { Drop } from './drops.js';
export { makeConfig, checkConfig, DEFAULT_TICKS, type ConsensusConfig, type ConfigInput, type TimerTicks } from './config.js';
export type { Effect, EffectKind, Completion, DurableVsrState, SessionOutcome } from './effects.js';
export { EffectBuffer } from './effects.js';
export type { StateMachine, PrepareInput, PrepareVerdict, CombineVerdict, PrepareRecord, JournalSource, PreparePosition } from './state-machine.js';
export type { ClientRequest, RequestOutcome } from './pipeline.js';
export type { SessionRequest } from './forwarding-state.js';
export { FRESH_RESTORE, type RestoreRecord } from './restore.js';
export type { TimeSource, CanonicalHeader } from './core.js';
export { ClientTable, type ClientTableCheckpointEntry, type RequestCheck } from './client-table.js';
export { quorums, type Quorums } from './quorums.js';
export { Timer, Timers } from './timers.js';
export { Pipeline, type PipelineEntry, type QueuedRequest } from './pipeline.js';
export { Journal, type JournalEntry } from './journal.js';
export { merge, type MergeResult, type MergeQuorums, type MergePath } from './merge.js';
export type { DvcEntry, DvcRecord } from './view-change-state.js';
export { dvcRecordFromFrame } from './view-change-state.js';
export {
  metadataPlane, partitionPlane, asView, asReplica, asOp, METADATA_GROUP_ID, REPLICAS_MAX, SUFFIX_MAX, PREPARE_QUEUE_DEPTH_MAX,
  type Op, type View, type ReplicaIndex, type ClientToken, type Status, type TransferStage, type Plane,
} from './types.js';
