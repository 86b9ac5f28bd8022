export { BATCH_HEADER, BATCH_HEADER_SIZE, readBatchHeader, type BatchHeader } from './batch-header.js';
export {
  MESSAGE_FRAME,
  MESSAGE_FRAME_HEADER_SIZE,
  MESSAGE_FRAME_CHECKSUM_START,
  readMessageFrameHeader,
  type MessageFrameHeader,
} from './frame-header.js';
export type { FieldLayout } from './layout.js';
export {
  MESSAGE_PAYLOAD_BYTES_MAX,
  MESSAGE_USER_HEADERS_BYTES_MAX,
  BATCH_BYTES_MAX_DEFAULT,
  BATCH_MESSAGES_MAX_DEFAULT,
  BATCH_TIMESTAMP_SPAN_MAX_US,
} from './batch-limits.js';
export type { BatchReject, BatchRejectReason } from './batch-reject.js';
export type { OffsetDeltaRule } from './frame-scan.js';
export {
  buildBatch,
  type BatchMessage,
  type BuildBatchOptions,
  type BuildBatchReason,
  type BuildBatchVerdict,
} from './batch-builder.js';
export { validateBatch, type ValidateBatchOptions, type BatchSummary, type BatchVerdict } from './batch-validate.js';
export { stampBatch, type BatchStamp, type StampVerdict } from './batch-stamp.js';
export {
  sliceBatch,
  sliceBatchParts,
  type BatchSliceParts,
  type SliceVerdict,
  type SlicePartsVerdict,
} from './batch-slice.js';
export { FrameCursor, forEachFrame, type ForEachFrameVerdict } from './frame-cursor.js';
export { batchChecksumInput, type ChecksumInputVerdict } from './batch-checksum-input.js';
export { concatBatches, type ConcatBatches, type ConcatVerdict } from './batch-concat.js';
