export {
  FRAME_HEADER_SIZE,
  FRAME_SIZE_OFFSET,
  FRAME_COMMAND_OFFSET,
  FRAME_COMMAND_MAX,
  FRAME_SIZE_MAX_DEFAULT,
  FRAME_SIZE_MAX_LIMIT,
  checkFrameHeader,
  type FrameStreamError,
} from './frame-limits.js';
export { FrameDecoder, type FrameDecoderOptions } from './frame-decoder.js';
