/** Growable little-endian writer for control-path encoders (hot paths write into pooled buffers). */
export class ByteWriter {
  #buffer: Uint8Array;
  #view: DataView;
  #length = 0;

  constructor(initialCapacity = 256) {
    this.#buffer = new Uint8Array(Math.max(16, initialCapacity));
    this.#view = new DataView(this.#buffer.buffer);
  }

  get length(): number {
    return this.#length;
  }

  #ensure(extra: number): number {
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
    const at = this.#ensure(1);
    this.#view.setUint8(at, value);
    return this;
  }

  u16(value: number): this {
    const at = this.#ensure(2);
    this.#view.setUint16(at, value, true);
    return this;
  }

  u32(value: number): this {
    const at = this.#ensure(4);
    this.#view.setUint32(at, value, true);
    return this;
  }

  u64(value: bigint): this {
    const at = this.#ensure(8);
    this.#view.setBigUint64(at, BigInt.asUintN(64, value), true);
    return this;
  }

  u128(value: bigint): this {
    const at = this.#ensure(16);
    this.#view.setBigUint64(at, BigInt.asUintN(64, value), true);
    this.#view.setBigUint64(at + 8, BigInt.asUintN(64, value >> 64n), true);
    return this;
  }

  i64(value: bigint): this {
    const at = this.#ensure(8);
    this.#view.setBigInt64(at, value, true);
    return this;
  }

  f32(value: number): this {
    const at = this.#ensure(4);
    this.#view.setFloat32(at, value, true);
    return this;
  }

  f64(value: number): this {
    const at = this.#ensure(8);
    this.#view.setFloat64(at, value, true);
    return this;
  }

  bytes(value: Uint8Array): this {
    const at = this.#ensure(value.length);
    this.#buffer.set(value, at);
    return this;
  }

  zeros(count: number): this {
    const at = this.#ensure(count);
    this.#buffer.fill(0, at, this.#length);
    return this;
  }

  /** Writes a u32 at an earlier position (length back-patching). */
  patchU32(at: number, value: number): this {
    this.#view.setUint32(at, value, true);
    return this;
  }

  /** A copy of the written bytes, exactly `length` long. */
  finish(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }
}

export const utf8Encoder = new TextEncoder();
