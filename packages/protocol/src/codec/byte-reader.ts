/**
 * Bounds-checked little-endian cursor over untrusted bytes. It never throws and never reads past
 * `end`: the first failed read records a reason, every later read returns zero/empty, and the
 * caller checks `reason` once at the end (or `expectEnd()`).
 */
export class ByteReader {
  readonly bytes: Uint8Array;
  readonly end: number;
  offset: number;
  #reason: string | null = null;
  #view: DataView;

  constructor(bytes: Uint8Array, offset = 0, end = bytes.length) {
    this.bytes = bytes;
    this.offset = offset;
    this.end = Math.min(end, bytes.length);
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get reason(): string | null {
    return this.#reason;
  }

  get failed(): boolean {
    return this.#reason !== null;
  }

  get remaining(): number {
    return this.#reason === null ? this.end - this.offset : 0;
  }

  /** Records the first failure only. */
  fail(reason: string): void {
    if (this.#reason === null) this.#reason = reason;
  }

  #take(length: number, what: string): number {
    if (this.#reason !== null) return -1;
    if (length < 0 || this.offset + length > this.end) {
      this.fail(`truncated_${what}`);
      return -1;
    }
    const at = this.offset;
    this.offset += length;
    return at;
  }

  u8(what = 'u8'): number {
    const at = this.#take(1, what);
    return at < 0 ? 0 : (this.bytes[at] as number);
  }

  u16(what = 'u16'): number {
    const at = this.#take(2, what);
    return at < 0 ? 0 : this.#view.getUint16(at, true);
  }

  u32(what = 'u32'): number {
    const at = this.#take(4, what);
    return at < 0 ? 0 : this.#view.getUint32(at, true);
  }

  u64(what = 'u64'): bigint {
    const at = this.#take(8, what);
    return at < 0 ? 0n : this.#view.getBigUint64(at, true);
  }

  u128(what = 'u128'): bigint {
    const at = this.#take(16, what);
    if (at < 0) return 0n;
    return this.#view.getBigUint64(at, true) | (this.#view.getBigUint64(at + 8, true) << 64n);
  }

  i64(what = 'i64'): bigint {
    const at = this.#take(8, what);
    return at < 0 ? 0n : this.#view.getBigInt64(at, true);
  }

  f32(what = 'f32'): number {
    const at = this.#take(4, what);
    return at < 0 ? 0 : this.#view.getFloat32(at, true);
  }

  f64(what = 'f64'): number {
    const at = this.#take(8, what);
    return at < 0 ? 0 : this.#view.getFloat64(at, true);
  }

  /** A view (no copy) of the next `length` bytes. */
  bytesView(length: number, what = 'bytes'): Uint8Array {
    const at = this.#take(length, what);
    return at < 0 ? new Uint8Array(0) : this.bytes.subarray(at, at + length);
  }

  /** Strict UTF-8 (invalid sequences are a failure, not replacement characters). */
  utf8(length: number, what = 'string'): string {
    const view = this.bytesView(length, what);
    if (this.#reason !== null) return '';
    try {
      return strictUtf8.decode(view);
    } catch {
      this.fail(`invalid_utf8_${what}`);
      return '';
    }
  }

  /** Everything up to `end`. */
  rest(): Uint8Array {
    return this.bytesView(this.remaining, 'rest');
  }

  /** Fails with `trailing_bytes` unless the cursor is exactly at the end. */
  expectEnd(): void {
    if (this.#reason === null && this.offset !== this.end) this.fail('trailing_bytes');
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
