/**
 * Byte and word layout of a ring's SharedArrayBuffer and of a doorbell's, plus the frame record
 * format inside the data region. Everything that two threads agree on lives here, as named
 * constants, so that producer.ts and consumer.ts never spell an offset themselves.
 *
 * Ring SharedArrayBuffer (RING_HEADER_BYTES + capacityBytes):
 *
 * ```
 *  byte  word  line  written by   read by      word
 *  ────  ────  ────  ───────────  ───────────  ─────────────────────────────────────────────────
 *     0     0     0  producer     consumer     WRITE         published write counter (u32, wraps)
 *   128    32     1  consumer     producer     READ          published read counter  (u32, wraps)
 *   256    64     2  consumer     producer     SPACE_SEQ     producer doorbell: bumped to wake it
 *   260    65     2  producer     consumer     SPACE_WANTED  0 = producer running; n > 0 = parked
 *                                                            until n bytes are free
 *   384    96     3  createRing   both         MAGIC, LAYOUT_VERSION, CAPACITY, FRAME_SIZE_MAX,
 *                                              INDEX_ORIGIN, DOORBELL_ID   (immutable)
 *   408   102     3  producer     consumer     PRODUCER_STATE  0 detached, 1 attached, 2 closed
 *   412   103     3  consumer     producer     CONSUMER_STATE  0 detached, 1 attached, 2 closed
 *   512   128        producer     consumer     data region: capacityBytes, a power of two
 * ```
 *
 * Line 0 is written once per producer flush and line 1 once per consumer batch; lines 2 and 3
 * are touched only on the slow paths (parking, closing, attaching) and by rare state checks.
 * Measured (docs/ring.md, "Cache lines"): separating the words by 128, 64 or 32 bytes made no
 * difference beyond this machine's noise, because indices are published once per batch and the
 * data lines bounce between the cores anyway. We keep 128 bytes (the x86 adjacent-line
 * prefetcher pairs 64-byte lines) since it costs 384 bytes per ring and nothing else, and
 * guards the one-frame-per-flush pattern on hosts where false sharing does show.
 *
 * Doorbell SharedArrayBuffer (DOORBELL_BYTES). The consumer side of a ring parks here; several
 * rings may share one doorbell so a thread can wait for all its inbound rings with ONE waitAsync:
 *
 * ```
 *  byte  word  written by      read by         word
 *  ────  ────  ──────────────  ──────────────  ──────────────────────────────────────────────
 *     0     0  producers       consumer        DATA_SEQ     bumped (Atomics.add) to wake it
 *     4     1  consumer        producers       DATA_PARKED  1 while the consumer is parked
 *     8     2  createDoorbell  everybody       DOORBELL_MAGIC
 *    12     3  createDoorbell  everybody       DOORBELL_ID  random, also stored in each ring
 * ```
 *
 * The counters WRITE and READ are byte counters modulo 2^32 that never reset: a byte's position
 * in the data region is `counter & (capacityBytes - 1)`, the bytes in flight are
 * `(WRITE - READ) >>> 0`, and because capacityBytes divides 2^32 and is at most 2^30 that
 * difference is always exact. Invariant: READ ≤ WRITE ≤ READ + capacityBytes (mod 2^32).
 */

/** The line size we separate control words by. See the comment above for why 128. */
export const CACHE_LINE_BYTES = 128;
const LINE_WORDS = CACHE_LINE_BYTES / 4;

/** Int32 word indices into a ring's control block. */
export const RingWord = {
  WRITE: 0 * LINE_WORDS,
  READ: 1 * LINE_WORDS,
  SPACE_SEQ: 2 * LINE_WORDS,
  SPACE_WANTED: 2 * LINE_WORDS + 1,
  MAGIC: 3 * LINE_WORDS,
  LAYOUT_VERSION: 3 * LINE_WORDS + 1,
  CAPACITY: 3 * LINE_WORDS + 2,
  FRAME_SIZE_MAX: 3 * LINE_WORDS + 3,
  INDEX_ORIGIN: 3 * LINE_WORDS + 4,
  DOORBELL_ID: 3 * LINE_WORDS + 5,
  PRODUCER_STATE: 3 * LINE_WORDS + 6,
  CONSUMER_STATE: 3 * LINE_WORDS + 7,
} as const;

/** Bytes before the data region. A multiple of the line size, so the data starts on a line. */
export const RING_HEADER_BYTES = 4 * CACHE_LINE_BYTES;

/** Int32 word indices into a doorbell. */
export const DoorbellWord = {
  DATA_SEQ: 0,
  DATA_PARKED: 1,
  MAGIC: 2,
  ID: 3,
} as const;

/** One line: nothing else shares it, whatever SharedArrayBuffer it ends up next to. */
export const DOORBELL_BYTES = CACHE_LINE_BYTES;

/** "SHRG" and "SHDB" little-endian: catches a handle pointing at the wrong buffer. */
export const RING_MAGIC = 0x47524853;
export const DOORBELL_MAGIC = 0x42444853;
/** Bump on any change to this file's layout or the record format. */
export const LAYOUT_VERSION = 1;

/** PRODUCER_STATE / CONSUMER_STATE values. Transitions: DETACHED → ATTACHED → CLOSED, once. */
export const EndpointState = {
  DETACHED: 0,
  ATTACHED: 1,
  CLOSED: 2,
} as const;

/**
 * Frame records in the data region, every one 8-byte aligned:
 *
 * ```
 *  +0  i32  length   payload bytes, 0..frameSizeMax; or RECORD_PADDING
 *  +4  i32  seq      the producer's frame counter (mod 2^32): the consumer asserts it is the
 *                    next one expected, so an index bug shows as a crash, not as wrong bytes
 *  +8  ...  payload, then zero to seven bytes of alignment slack
 * ```
 *
 * A record never wraps. When it does not fit between its position and the end of the data
 * region, the producer writes a padding record there (length = RECORD_PADDING, which means
 * "the rest of this lap is empty") and the frame goes to position 0. So every frame is one
 * contiguous run of bytes: the consumer hands out views and never copies, and `reserve()` can
 * give the producer a contiguous view to encode into. docs/ring.md has the measurements behind
 * that choice. Cost: at most one record's worth of bytes per lap is padding.
 */
export const RECORD_HEADER_BYTES = 8;
export const RECORD_ALIGN_BYTES = 8;
export const RECORD_PADDING = -1;

/** Bytes a frame of `length` payload bytes occupies in the data region. */
export function recordBytes(length: number): number {
  return (RECORD_HEADER_BYTES + length + (RECORD_ALIGN_BYTES - 1)) & ~(RECORD_ALIGN_BYTES - 1);
}

/** Smallest and largest data region. 2^30 keeps (WRITE - READ) >>> 0 unambiguous. */
export const CAPACITY_BYTES_MIN = 64;
export const CAPACITY_BYTES_MAX = 1 << 30;

/**
 * The largest payload a ring of `capacityBytes` can carry. A frame's record may have to be
 * preceded by a padding record of up to one record minus 8 bytes, so a frame is guaranteed to
 * fit into an EMPTY ring only if its record is at most half the capacity: with that limit, a
 * producer that waits long enough always makes progress.
 */
export function frameSizeLimit(capacityBytes: number): number {
  return capacityBytes / 2 - RECORD_HEADER_BYTES;
}

function isPowerOfTwo(value: number): boolean {
  return Number.isInteger(value) && value > 0 && (value & (value - 1)) === 0;
}

/**
 * Checks a ring's geometry. Returns a reason (configuration is checked once, at boot, and the
 * caller decides how loudly to fail) or null when the geometry is valid.
 */
export function checkGeometry(capacityBytes: number, frameSizeMax: number, indexOrigin: number): string | null {
  if (!isPowerOfTwo(capacityBytes)) return `capacityBytes ${capacityBytes} is not a power of two`;
  if (capacityBytes < CAPACITY_BYTES_MIN) return `capacityBytes ${capacityBytes} < ${CAPACITY_BYTES_MIN}`;
  if (capacityBytes > CAPACITY_BYTES_MAX) return `capacityBytes ${capacityBytes} > ${CAPACITY_BYTES_MAX}`;
  if (!Number.isInteger(frameSizeMax) || frameSizeMax < 0) return `frameSizeMax ${frameSizeMax} is not a size`;
  const limit = frameSizeLimit(capacityBytes);
  if (frameSizeMax > limit) {
    return `frameSizeMax ${frameSizeMax} > ${limit} (a record must fit in half of the ${capacityBytes}-byte ring)`;
  }
  if (!Number.isInteger(indexOrigin) || indexOrigin < 0 || indexOrigin > 0xffff_ffff) {
    return `indexOrigin ${indexOrigin} is not a u32`;
  }
  if (indexOrigin % RECORD_ALIGN_BYTES !== 0) return `indexOrigin ${indexOrigin} is not ${RECORD_ALIGN_BYTES}-aligned`;
  return null;
}

// Load-time self-check of the layout: the hot words on separate lines, nothing overlapping,
// the control block inside the header. A failure here is a bug in this file.
{
  const words = Object.values(RingWord);
  const unique = new Set(words);
  if (unique.size !== words.length) throw new Error('ring layout: two control words share an index');
  for (const word of words) {
    if (word * 4 >= RING_HEADER_BYTES) throw new Error(`ring layout: word ${word} is past the header`);
  }
  const line = (word: number): number => Math.floor((word * 4) / CACHE_LINE_BYTES);
  if (line(RingWord.WRITE) === line(RingWord.READ)) throw new Error('ring layout: WRITE and READ share a line');
  if (line(RingWord.SPACE_SEQ) === line(RingWord.WRITE) || line(RingWord.SPACE_SEQ) === line(RingWord.READ)) {
    throw new Error('ring layout: the producer doorbell shares a hot line');
  }
  if (RING_HEADER_BYTES % CACHE_LINE_BYTES !== 0) throw new Error('ring layout: data region not line aligned');
  if (Object.values(DoorbellWord).some((word) => word * 4 >= DOORBELL_BYTES)) {
    throw new Error('ring layout: doorbell word past its line');
  }
  if (recordBytes(0) !== RECORD_HEADER_BYTES || recordBytes(1) !== 16 || recordBytes(8) !== 16) {
    throw new Error('ring layout: recordBytes');
  }
}
