/**
 * Transport framing constants (framing.mdx, replication-semantics.md §1.2 step 1). Every frame on
 * either plane is `[256-byte header][size - 256 body bytes]`; the reader learns `size` from header
 * bytes 48..52 before it types the header.
 */
export const FRAME_HEADER_SIZE = 256;
export const FRAME_SIZE_OFFSET = 48;
export const FRAME_COMMAND_OFFSET = 60;
/** Highest `command` discriminant (29 = ForwardLogoutResult); 30+ is a stream error. */
export const FRAME_COMMAND_MAX = 29;
/** `message_bus.max_message_size` default: 64 MiB. */
export const FRAME_SIZE_MAX_DEFAULT = 64 * 1024 * 1024;
/** The `size` field is a u32: no configuration can allow more. */
export const FRAME_SIZE_MAX_LIMIT = 0xffff_ffff;

/**
 * Framing failures. Each one is a STREAM error: the connection is torn down (the reference
 * server does the same), because after a bad `size` nothing in the stream can be trusted to start
 * a frame. Everything else (unknown or misplaced commands within 0..29, bad seals, bad fields) is a
 * FRAME error, decided later by the typed decoders: that frame is dropped, the stream goes on.
 */
export type FrameStreamError =
  /** `size < 256`: the frame cannot even hold its header. */
  | 'frame_size_below_header'
  /** `size > frameSizeMax`. */
  | 'frame_size_above_max'
  /** `command > 29`. */
  | 'frame_command_invalid';

/** Step-1 check of a complete 256-byte header's `size` and `command`, or null when it passes. */
export function checkFrameHeader(size: number, command: number, frameSizeMax: number): FrameStreamError | null {
  if (size < FRAME_HEADER_SIZE) return 'frame_size_below_header';
  if (size > frameSizeMax) return 'frame_size_above_max';
  if (command > FRAME_COMMAND_MAX) return 'frame_command_invalid';
  return null;
}
