/**
 * Why a batch was refused. Stable snake_case codes: the host counts and logs them, the client
 * plane maps them to an `IggyError`. Structure is checked before any checksum, so a corrupted
 * length or count is reported as what it is, not as the checksum mismatch it also causes.
 */
export type BatchRejectReason =
  /** Fewer than 256 bytes: no header. */
  | 'batch_too_short'
  /** More bytes than the caller's `maxBytes`. */
  | 'batch_too_large'
  /** `batch_length` says more bytes than were given. */
  | 'batch_truncated'
  /** `batch_length` says fewer bytes than were given. */
  | 'batch_trailing_bytes'
  /** Header bytes 52..256 are not all zero. */
  | 'batch_header_reserved_nonzero'
  /** `message_count == 0` (refused by the reference server too). */
  | 'batch_empty'
  /** `message_count` above the caller's `maxMessages`. */
  | 'batch_too_many_messages'
  /** The frames walked do not tile the blob in exactly `message_count` frames. */
  | 'message_count_mismatch'
  /** Fewer than 48 bytes left where a frame header should start. */
  | 'frame_header_truncated'
  /** A frame's payload + user headers run past the end of the batch. */
  | 'frame_overrun'
  /** Frame header bytes 40..48 are not zero. */
  | 'frame_reserved_nonzero'
  /** `offset_delta` is not the frame's index (or, for stored slices, not contiguous). */
  | 'frame_offset_delta_mismatch'
  | 'frame_payload_too_large'
  | 'frame_user_headers_too_large'
  /** A frame's stored checksum is not XXH3 of its bytes 8..end. */
  | 'frame_checksum_mismatch'
  /** The stored `batch_checksum` is not XXH3 of the header fields and the frame checksums. */
  | 'batch_checksum_mismatch'
  /** Slicing only: the requested frame range is empty or past `message_count`. */
  | 'slice_out_of_range';

export interface BatchReject {
  readonly ok: false;
  readonly reason: BatchRejectReason;
  /** The frame at fault, or -1 for a header-level reason. */
  readonly frameIndex: number;
}

export function batchReject(reason: BatchRejectReason, frameIndex = -1): BatchReject {
  return { ok: false, reason, frameIndex };
}
