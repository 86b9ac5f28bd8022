/**
 * Cuts handshake frames out of the byte stream with the protocol's `FrameDecoder`, so a
 * handshake frame goes through framing (§1.2 step 1: `256 <= size <= limit`, `command <= 29`;
 * a violation is a stream error) exactly like any other frame, and keeps track of
 * the bytes that follow the last frame taken: they belong to the consensus stream.
 *
 *   chunk:  [ ... handshake frame ... ][ leftover: first consensus bytes ... ]
 *                                     ▲ decoder position (pendingBytes after it)
 */
import { assert } from '@shoal/stdx';
import { FrameDecoder, type FrameStreamError } from '@shoal/protocol';

const EMPTY = new Uint8Array(0);

/**
 * Largest handshake frame accepted before the peer is authenticated. Handshake frames are 256
 * bytes (§3.3); framing would allow up to `max_message_size`, but a pre-auth peer must not make
 * us buffer 64 MiB per connection (64 handshakes in progress × 64 MiB). A larger `size` is the
 * stream error `frame_size_above_max`, like any other oversize frame. 4 KiB leaves room for an
 * extension of the handshake frames without bounding anything by trust.
 */
export const HANDSHAKE_FRAME_SIZE_MAX = 4096;

export class HandshakeFrameReader {
  readonly #decoder: FrameDecoder;
  #chunk: Uint8Array = EMPTY;
  /** True while the decoder may still hold frames from the current chunk. */
  #draining = false;

  /** `frameSizeMax` is `message_bus.max_message_size`; the reader caps it at HANDSHAKE_FRAME_SIZE_MAX. */
  constructor(frameSizeMax: number) {
    this.#decoder = new FrameDecoder({ frameSizeMax: Math.min(frameSizeMax, HANDSHAKE_FRAME_SIZE_MAX), assemblyRetainBytes: 256 });
  }

  get error(): FrameStreamError | null {
    return this.#decoder.error;
  }

  push(chunk: Uint8Array): void {
    assert(!this.#draining, 'HandshakeFrameReader.push: take frames until next() returns null first');
    this.#chunk = chunk;
    this.#draining = this.#decoder.push(chunk);
  }

  /**
   * The next whole frame (a view valid until the next push; copy what must outlive it), or null
   * when more bytes are needed or the stream failed (`error`).
   */
  next(): Uint8Array | null {
    if (!this.#draining) return null;
    const frame = this.#decoder.pull();
    if (frame === null) {
      this.#draining = false;
      this.#chunk = EMPTY;
    }
    return frame;
  }

  /**
   * A copy of the bytes received after the last frame returned. Valid right after `next()`
   * returned the final handshake frame: the decoder then holds no partial frame, only the unread
   * tail of the current chunk.
   */
  leftover(): Uint8Array {
    assert(this.#decoder.bufferedBytes === 0, 'HandshakeFrameReader.leftover: a partial frame is buffered');
    const pending = this.#draining ? this.#decoder.pendingBytes : 0;
    return pending === 0 ? EMPTY : this.#chunk.slice(this.#chunk.length - pending);
  }
}
