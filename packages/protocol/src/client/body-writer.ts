/**
 * Growable little-endian writer for the client-plane encoders (control path).
 *
 * Why not src/codec/byte-writer.ts: its methods evaluate `this.#buffer` / `this.#view` before
 * calling `#ensure`, so a write that grows the buffer targets the old one and throws RangeError
 * (reported to the lead; this file keeps the client codec independent of that fix). Here every
 * method reserves first, then writes through the current view.
 */
export class BodyWriter {
  #buffer: Uint8Array;
  #view: DataView;
  #length = 0;

  constructor(initialCapacity = 64) {
    this.#buffer = new Uint8Array(Math.max(16, initialCapacity));
    this.#view = new DataView(this.#buffer.buffer);
  }

  get length(): number {
    return this.#length;
  }

  /** Reserves `extra` bytes and returns where they start. */
  #reserve(extra: number): number {
    const at = this.#length;
    const needed = at + extra;
    if (needed > this.#buffer.length) {
      let capacity = this.#buffer.length * 2;
      while (capacity < needed) capacity *= 2;
      const next = new Uint8Array(capacity);
      next.set(this.#buffer.subarray(0, at));
      this.#buffer = next;
      this.#view = new DataView(next.buffer);
    }
    this.#length = needed;
    return at;
  }

  u8(value: number): this {
    const at = this.#reserve(1);
    this.#view.setUint8(at, value);
    return this;
  }

  u16(value: number): this {
    const at = this.#reserve(2);
    this.#view.setUint16(at, value, true);
    return this;
  }

  u32(value: number): this {
    const at = this.#reserve(4);
    this.#view.setUint32(at, value, true);
    return this;
  }

  u64(value: bigint): this {
    const at = this.#reserve(8);
    this.#view.setBigUint64(at, BigInt.asUintN(64, value), true);
    return this;
  }

  u128(value: bigint): this {
    const at = this.#reserve(16);
    this.#view.setBigUint64(at, BigInt.asUintN(64, value), true);
    this.#view.setBigUint64(at + 8, BigInt.asUintN(64, value >> 64n), true);
    return this;
  }

  f32(value: number): this {
    const at = this.#reserve(4);
    this.#view.setFloat32(at, value, true);
    return this;
  }

  f64(value: number): this {
    const at = this.#reserve(8);
    this.#view.setFloat64(at, value, true);
    return this;
  }

  bytes(value: Uint8Array): this {
    const at = this.#reserve(value.length);
    this.#buffer.set(value, at);
    return this;
  }

  zeros(count: number): this {
    const at = this.#reserve(count);
    this.#buffer.fill(0, at, at + count);
    return this;
  }

  /** A copy of the written bytes, exactly `length` long. */
  finish(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }
}
