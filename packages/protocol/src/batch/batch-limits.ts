/**
 * Limits of a message batch. The per-message ones are the reference server's fixed constants
 * (apache/iggy `MAX_PAYLOAD_SIZE`, `MAX_USER_HEADERS_SIZE`); the per-batch ones are defaults that
 * the host overrides from its config (the batch must fit in one frame of `frameSizeMax`).
 */
export const MESSAGE_PAYLOAD_BYTES_MAX = 64_000_000;
export const MESSAGE_USER_HEADERS_BYTES_MAX = 100_000;
/** Default cap on a whole batch (header + frames): the default maximum frame size, 64 MiB. */
export const BATCH_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;
/** Default cap on `message_count`: the field's range (a batch is bounded by its bytes anyway). */
export const BATCH_MESSAGES_MAX_DEFAULT = 0xffff_ffff;
/** `timestamp_delta` is a u32 of microseconds: a batch spans at most this (about 71.6 minutes). */
export const BATCH_TIMESTAMP_SPAN_MAX_US = 0xffff_ffff;
