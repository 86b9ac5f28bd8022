import { assert } from '@shoal/stdx';
import {
  FRAME_COMMAND_OFFSET,
  FRAME_HEADER_SIZE,
  FRAME_SIZE_MAX_DEFAULT,
  FRAME_SIZE_MAX_LIMIT,
  FRAME_SIZE_OFFSET,
  checkFrameHeader,
  type FrameStreamError,
} from './frame-limits.js';

export interface FrameDecoderOptions {
  /** Largest accepted `size`, header included (default 64 MiB; 256 ..= 2^32 - 1). */
  readonly frameSizeMax?: number;
  /**
   * Assembly buffers up to this capacity are kept for reuse (default 1 MiB); a straddling frame
   * above it gets a buffer of exactly its size, dropped after that frame. A decoder retains at
   * most two assembly buffers, so at most `2 × assemblyRetainBytes` between frames.
   */
  readonly assemblyRetainBytes?: number;
  /**
   * A straddling frame of at least this many bytes is assembled into a buffer made for it
   * alone, allocated at its declared size as soon as the header is in, and forgotten by the
   * decoder once the frame is returned: the caller owns it (`lastFrameOwned`) and may keep it
   * without a copy (a backup's journal adopts a replica link's prepare). Off by default: the
   * declared size is allocated before the bytes arrive, so only for a peer trusted with that
   * much memory (an authenticated replica link).
   */
  readonly handOffBytes?: number;
}

const EMPTY = new Uint8Array(0);
const ASSEMBLY_RETAIN_BYTES_DEFAULT = 1024 * 1024;

/**
 * Incremental frame decoder for one byte stream (one TCP/TLS connection):
 *
 *   decoder.push(chunk);                       // false: the stream is dead (see `error`)
 *   for (let f = decoder.pull(); f !== null; f = decoder.pull()) handle(f);
 *   if (decoder.error !== null) closeConnection(decoder.error);
 *
 * Framing (replication-semantics.md §1.2 step 1): a 256-byte header whose u32 `size` at offset 48
 * satisfies `256 <= size <= frameSizeMax` and whose `command` at offset 60 is at most 29, then
 * `size - 256` body bytes. A violation is a terminal stream error: `pull` returns null from then on
 * and `push` refuses input. Untrusted bytes never make it throw, and it never reads outside a
 * chunk.
 *
 * Copies and ownership:
 * - A frame that lies wholly inside one chunk comes back as a VIEW of that chunk (no copy). The
 *   decoder never writes to a chunk; the view is valid as long as the caller leaves the chunk
 *   alone. It drops its own reference to a chunk once `pull` has returned null.
 * - A frame that straddles chunks is copied, once, into an assembly buffer sized to that frame
 *   and reused across frames (two of them, alternating, so completing one frame and starting the
 *   next within the same push never overwrites a frame already handed out). Such a view is valid
 *   until the NEXT `push`; copy it (`frame.slice()`) to keep it longer.
 * - With `handOffBytes`, a straddling frame at least that large is instead assembled into a
 *   buffer of exactly its size, made for it alone and forgotten once returned
 *   (`lastFrameOwned`): the caller keeps it without a copy.
 * - Memory: at most one partial frame is held (its header, then its declared body), so a decoder
 *   holds at most `frameSizeMax` bytes of stream data, never more than the peer has declared,
 *   and, above `assemblyRetainBytes`, not much more than the peer has actually sent.
 *
 * Calling `push` before `pull` has returned null is a caller bug (AssertionError): draining first
 * is what bounds the buffering.
 */
export class FrameDecoder {
  readonly frameSizeMax: number;
  readonly assemblyRetainBytes: number;
  readonly handOffBytes: number;
  #chunk: Uint8Array = EMPTY;
  #position = 0;
  /** Two assembly buffers; `#slot` is the one the next straddling frame is assembled in. */
  #slots: [Uint8Array, Uint8Array] = [EMPTY, EMPTY];
  #slot: 0 | 1 = 0;
  /** The partial frame's own buffer while a hand-off frame is assembled, else null. */
  #own: Uint8Array | null = null;
  #lastOwned = false;
  /** Bytes of the partial frame held in the current slot (0: none). */
  #filled = 0;
  /** Declared size of the partial frame; 0 while its header is incomplete. */
  #need = 0;
  #error: FrameStreamError | null = null;
  #frames = 0;

  constructor(options: FrameDecoderOptions = {}) {
    const frameSizeMax = options.frameSizeMax ?? FRAME_SIZE_MAX_DEFAULT;
    if (!(Number.isInteger(frameSizeMax) && frameSizeMax >= FRAME_HEADER_SIZE && frameSizeMax <= FRAME_SIZE_MAX_LIMIT)) {
      throw new RangeError(`FrameDecoder: frameSizeMax ${frameSizeMax} outside ${FRAME_HEADER_SIZE}..${FRAME_SIZE_MAX_LIMIT}`);
    }
    const retain = options.assemblyRetainBytes ?? ASSEMBLY_RETAIN_BYTES_DEFAULT;
    if (!(Number.isInteger(retain) && retain >= FRAME_HEADER_SIZE)) {
      throw new RangeError(`FrameDecoder: assemblyRetainBytes ${retain} below ${FRAME_HEADER_SIZE}`);
    }
    const handOff = options.handOffBytes ?? Number.POSITIVE_INFINITY;
    if (!(handOff === Number.POSITIVE_INFINITY || (Number.isInteger(handOff) && handOff > FRAME_HEADER_SIZE))) {
      throw new RangeError(`FrameDecoder: handOffBytes ${handOff} not above ${FRAME_HEADER_SIZE}`);
    }
    this.frameSizeMax = frameSizeMax;
    this.assemblyRetainBytes = retain;
    this.handOffBytes = handOff;
  }

  /**
   * True when the frame `pull` returned last lives in a buffer made for it alone that the decoder
   * has forgotten (see `handOffBytes`): the caller may keep it as is. False for views of a chunk
   * and of the reused assembly buffers.
   */
  get lastFrameOwned(): boolean {
    return this.#lastOwned;
  }

  /** The stream error that ended this stream, or null. */
  get error(): FrameStreamError | null {
    return this.#error;
  }

  /** Bytes of a partial frame held (copied) by the decoder. */
  get bufferedBytes(): number {
    return this.#filled;
  }

  /** Unread bytes of the current chunk. */
  get pendingBytes(): number {
    return this.#chunk.length - this.#position;
  }

  /** Frames returned so far. */
  get frames(): number {
    return this.#frames;
  }

  /** Capacity of the assembly buffers currently retained (for the memory bound's tests). */
  get retainedBytes(): number {
    return this.#slots[0].length + this.#slots[1].length;
  }

  /** Hands the decoder the next chunk of the stream. False once the stream has failed. */
  push(chunk: Uint8Array): boolean {
    if (this.#error !== null) return false;
    assert(this.#position === this.#chunk.length, 'FrameDecoder.push: pull() until it returns null first');
    this.#chunk = chunk;
    this.#position = 0;
    return true;
  }

  /** The next whole frame (header + body), or null: more input needed, or the stream failed. */
  pull(): Uint8Array | null {
    this.#lastOwned = false;
    if (this.#error !== null) return null;
    if (this.#filled > 0) {
      const assembled = this.#continueAssembly();
      if (assembled !== null) return this.#deliver(assembled);
      if (this.#error === null) this.#releaseChunk();
      return null;
    }
    const chunk = this.#chunk;
    const at = this.#position;
    const available = chunk.length - at;
    if (available >= FRAME_HEADER_SIZE) {
      const size = readU32(chunk, at + FRAME_SIZE_OFFSET);
      const error = checkFrameHeader(size, chunk[at + FRAME_COMMAND_OFFSET] as number, this.frameSizeMax);
      if (error !== null) return this.#fail(error);
      if (available >= size) {
        this.#position = at + size;
        return this.#deliver(chunk.subarray(at, at + size));
      }
      this.#startAssembly(chunk, at, available, size);
    } else if (available > 0) {
      this.#startAssembly(chunk, at, available, 0);
    }
    this.#releaseChunk();
    return null;
  }

  #deliver(frame: Uint8Array): Uint8Array {
    this.#frames++;
    return frame;
  }

  #fail(error: FrameStreamError): null {
    this.#error = error;
    this.#chunk = EMPTY;
    this.#position = 0;
    this.#filled = 0;
    this.#need = 0;
    this.#slots = [EMPTY, EMPTY];
    this.#own = null;
    return null;
  }

  #releaseChunk(): void {
    this.#chunk = EMPTY;
    this.#position = 0;
  }

  /** Copies the chunk's tail (a partial frame; `size` 0 when its header is incomplete). */
  #startAssembly(chunk: Uint8Array, at: number, available: number, size: number): void {
    const slot = this.#buffer(available, size === 0 ? FRAME_HEADER_SIZE : size, 0);
    slot.set(chunk.subarray(at, at + available), 0);
    this.#filled = available;
    this.#need = size;
  }

  /** Feeds the current chunk into the partial frame; the whole frame when it completes. */
  #continueAssembly(): Uint8Array | null {
    const chunk = this.#chunk;
    let at = this.#position;
    let slot = this.#slots[this.#slot];
    if (this.#need === 0) {
      const take = Math.min(FRAME_HEADER_SIZE - this.#filled, chunk.length - at);
      slot.set(chunk.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
      this.#position = at;
      if (this.#filled < FRAME_HEADER_SIZE) return null;
      const size = readU32(slot, FRAME_SIZE_OFFSET);
      const error = checkFrameHeader(size, slot[FRAME_COMMAND_OFFSET] as number, this.frameSizeMax);
      if (error !== null) return this.#fail(error);
      this.#need = size;
    }
    const take = Math.min(this.#need - this.#filled, chunk.length - at);
    if (take > 0) {
      slot = this.#buffer(this.#filled + take, this.#need, this.#filled);
      slot.set(chunk.subarray(at, at + take), this.#filled);
      this.#filled += take;
      this.#position = at + take;
    }
    if (this.#filled < this.#need) return null;
    const own = this.#own;
    const frame = own ?? slot.subarray(0, this.#need);
    this.#filled = 0;
    this.#need = 0;
    if (own !== null) {
      // The frame leaves with its own buffer; the slot (which held at most its header) stays.
      this.#own = null;
      this.#lastOwned = true;
      return frame;
    }
    // A buffer above the retention cap leaves with its frame; the next frame alternates slots.
    if (slot.length > this.assemblyRetainBytes) this.#slots[this.#slot] = EMPTY;
    this.#slot = this.#slot === 0 ? 1 : 0;
    return frame;
  }

  /** Where the partial frame's bytes go: its own buffer (hand-off size, see `handOffBytes`) or a slot. */
  #buffer(needed: number, size: number, keep: number): Uint8Array {
    if (size < this.handOffBytes) return this.#reserve(needed, size, keep);
    if (this.#own === null) {
      const own = new Uint8Array(size);
      if (keep > 0) own.set(this.#slots[this.#slot].subarray(0, keep), 0);
      this.#own = own;
    }
    return this.#own;
  }

  /**
   * The current slot with room for `needed` bytes of a frame of `size` bytes, keeping its first
   * `keep` bytes. A frame up to the retention cap gets its whole capacity at once, rounded up to
   * a power of two so frames of similar sizes share the buffer. A larger frame grows with what
   * has actually ARRIVED (×4 steps, from the cap, ending at exactly `size`): a header that
   * declares 64 MiB and then stalls costs the cap, not 64 MiB; the regrowth copies add at most a
   * third to the copying of such a frame.
   */
  #reserve(needed: number, size: number, keep: number): Uint8Array {
    const current = this.#slots[this.#slot];
    if (current.length >= needed) return current;
    const retain = this.assemblyRetainBytes;
    let capacity: number;
    if (size <= retain) {
      capacity = FRAME_HEADER_SIZE;
      while (capacity < size) capacity *= 2;
      capacity = Math.min(capacity, retain);
    } else {
      capacity = Math.min(size, Math.max(retain, 4 * needed));
    }
    const next = new Uint8Array(capacity);
    if (keep > 0) next.set(current.subarray(0, keep), 0);
    this.#slots[this.#slot] = next;
    return next;
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] as number) |
      ((bytes[at + 1] as number) << 8) |
      ((bytes[at + 2] as number) << 16) |
      ((bytes[at + 3] as number) << 24)) >>>
    0
  );
}
