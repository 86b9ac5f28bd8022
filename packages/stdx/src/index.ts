export { AssertionError, assert, unreachable } from './assert.js';
export { Prng } from './prng.js';
export {
  U32_MAX, U64_MAX, U128_MAX, isU64, isU128, splitU64, joinU64, u64ToSafeNumber,
  readU128LE, writeU128LE, minBig, maxBig, bitTest, bitSet, toHex, fromHex,
} from './bigint.js';
export { BoundedQueue } from './bounded-queue.js';
export {
  DURATION_UNITS, SIZE_UNITS, DISABLED_DURATION_WORDS, parseDuration, parseDurationMs, parseSize, parseSizeBytes,
  parseConfigDurationMs, parseExpiry, parseSizeLimit, formatDuration, formatSize,
  type UnitParse, type Expiry, type SizeLimit,
} from './units.js';
export { concatBytes, equalBytes, plainBytes } from './bytes.js';
