/**
 * Handles: what crosses a thread boundary. A handle is plain data (SharedArrayBuffers and
 * numbers, nothing with a prototype that matters) so `postMessage` / `workerData` clone it as
 * is; the receiving thread calls `RingProducer.attach` / `RingConsumer.attach` / `Inbox.attach`.
 * Each attach re-checks the buffer against the handle, so a handle that went through a
 * structured clone is validated on arrival.
 */

import { assert } from '@shoal/stdx';
import {
  DOORBELL_BYTES, DOORBELL_MAGIC, DoorbellWord, EndpointState, LAYOUT_VERSION, RING_HEADER_BYTES, RING_MAGIC,
  RingWord, checkGeometry, frameSizeLimit,
} from './layout.js';

export interface DoorbellHandle {
  readonly kind: 'shoal.doorbell';
  readonly buffer: SharedArrayBuffer;
}

export interface RingHandle {
  readonly kind: 'shoal.ring';
  /** Control block + data region, see layout.ts. */
  readonly buffer: SharedArrayBuffer;
  /** Where the consumer parks: its own, or one shared by every ring a thread consumes. */
  readonly doorbell: DoorbellHandle;
  readonly capacityBytes: number;
  readonly frameSizeMax: number;
}

export interface RingOptions {
  /** Size of the data region: a power of two in [64, 2^30]. */
  readonly capacityBytes: number;
  /** Largest frame payload. Default and maximum: capacityBytes / 2 - 8. */
  readonly frameSizeMax?: number;
  /** Share the consumer's wake-up word with other rings (see Inbox). Default: a new doorbell. */
  readonly doorbell?: DoorbellHandle;
  /**
   * Initial value of both byte counters. Only tests need it: start near 2^32 to cross the
   * counters' wrap, or anywhere to start at any position in the data region. 8-aligned.
   */
  readonly indexOrigin?: number;
}

/** A bad ring or doorbell configuration, found at construction (boot), never mid-flight. */
export class RingConfigError extends RangeError {
  override readonly name = 'RingConfigError';
  readonly code = 'RING_CONFIG';
}

function randomId(): number {
  // Only an assertion aid (do these rings share that doorbell?), so Math.random is enough.
  for (;;) {
    const id = Math.floor(Math.random() * 0x1_0000_0000) | 0;
    if (id !== 0) return id;
  }
}

export function createDoorbell(): DoorbellHandle {
  const buffer = new SharedArrayBuffer(DOORBELL_BYTES);
  const words = new Int32Array(buffer);
  words[DoorbellWord.MAGIC] = DOORBELL_MAGIC;
  words[DoorbellWord.ID] = randomId();
  return { kind: 'shoal.doorbell', buffer };
}

export function createRing(options: RingOptions): RingHandle {
  const capacityBytes = options.capacityBytes;
  const frameSizeMax = options.frameSizeMax ?? frameSizeLimit(capacityBytes);
  const indexOrigin = options.indexOrigin ?? 0;
  const reason = checkGeometry(capacityBytes, frameSizeMax, indexOrigin);
  if (reason !== null) throw new RingConfigError(reason);
  const doorbell = options.doorbell ?? createDoorbell();
  const doorbellWords = checkDoorbell(doorbell);

  const buffer = new SharedArrayBuffer(RING_HEADER_BYTES + capacityBytes);
  const words = new Int32Array(buffer, 0, RING_HEADER_BYTES / 4);
  words[RingWord.WRITE] = indexOrigin | 0;
  words[RingWord.READ] = indexOrigin | 0;
  words[RingWord.MAGIC] = RING_MAGIC;
  words[RingWord.LAYOUT_VERSION] = LAYOUT_VERSION;
  words[RingWord.CAPACITY] = capacityBytes;
  words[RingWord.FRAME_SIZE_MAX] = frameSizeMax;
  words[RingWord.INDEX_ORIGIN] = indexOrigin | 0;
  words[RingWord.DOORBELL_ID] = doorbellWords[DoorbellWord.ID] ?? 0;
  words[RingWord.PRODUCER_STATE] = EndpointState.DETACHED;
  words[RingWord.CONSUMER_STATE] = EndpointState.DETACHED;
  // Plain stores are enough: the buffer reaches another thread only through postMessage, which
  // happens-after everything above.
  return { kind: 'shoal.ring', buffer, doorbell, capacityBytes, frameSizeMax };
}

/** Checks a doorbell handle (maybe freshly cloned) and returns its words. */
export function checkDoorbell(handle: DoorbellHandle): Int32Array {
  assert(handle.kind === 'shoal.doorbell', 'doorbell handle: wrong kind');
  assert(handle.buffer instanceof SharedArrayBuffer, 'doorbell handle: buffer is not a SharedArrayBuffer');
  assert(handle.buffer.byteLength === DOORBELL_BYTES, 'doorbell handle: wrong size');
  const words = new Int32Array(handle.buffer);
  assert(Atomics.load(words, DoorbellWord.MAGIC) === DOORBELL_MAGIC, 'doorbell handle: bad magic');
  assert(Atomics.load(words, DoorbellWord.ID) !== 0, 'doorbell handle: no id');
  return words;
}

/** The views both endpoints work with, after checking the handle against its buffer. */
export interface RingViews {
  readonly control: Int32Array;
  readonly data: Uint8Array;
  /** The data region as Int32 words, for record headers (8-aligned, so always whole words). */
  readonly dataWords: Int32Array;
  readonly doorbell: Int32Array;
  readonly capacityBytes: number;
  readonly frameSizeMax: number;
}

export function openRing(handle: RingHandle): RingViews {
  assert(handle.kind === 'shoal.ring', 'ring handle: wrong kind');
  assert(handle.buffer instanceof SharedArrayBuffer, 'ring handle: buffer is not a SharedArrayBuffer');
  const { capacityBytes, frameSizeMax } = handle;
  assert(checkGeometry(capacityBytes, frameSizeMax, 0) === null, 'ring handle: bad geometry');
  assert(handle.buffer.byteLength === RING_HEADER_BYTES + capacityBytes, 'ring handle: buffer size');
  const control = new Int32Array(handle.buffer, 0, RING_HEADER_BYTES / 4);
  assert(Atomics.load(control, RingWord.MAGIC) === RING_MAGIC, 'ring handle: bad magic');
  assert(Atomics.load(control, RingWord.LAYOUT_VERSION) === LAYOUT_VERSION, 'ring handle: layout version');
  assert(Atomics.load(control, RingWord.CAPACITY) === capacityBytes, 'ring handle: capacity disagrees');
  assert(Atomics.load(control, RingWord.FRAME_SIZE_MAX) === frameSizeMax, 'ring handle: frameSizeMax disagrees');
  const doorbell = checkDoorbell(handle.doorbell);
  assert(
    Atomics.load(control, RingWord.DOORBELL_ID) === Atomics.load(doorbell, DoorbellWord.ID),
    'ring handle: doorbell is not the one the ring was created with',
  );
  return {
    control,
    data: new Uint8Array(handle.buffer, RING_HEADER_BYTES, capacityBytes),
    dataWords: new Int32Array(handle.buffer, RING_HEADER_BYTES, capacityBytes / 4),
    doorbell,
    capacityBytes,
    frameSizeMax,
  };
}

/**
 * Claims one end of a ring: DETACHED → ATTACHED with a compare-exchange, so a second producer
 * (or consumer) on the same ring is caught at attach time rather than as corrupted frames.
 */
export function claimEndpoint(control: Int32Array, word: number, what: string): void {
  const previous = Atomics.compareExchange(control, word, EndpointState.DETACHED, EndpointState.ATTACHED);
  assert(previous === EndpointState.DETACHED, `ring: ${what} already attached (state ${previous}); a ring has one ${what}`);
}
