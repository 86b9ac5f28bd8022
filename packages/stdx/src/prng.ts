/**
 * Seeded, deterministic PRNG (xoshiro128** over a splitmix32-expanded seed). Used by the
 * simulator, the fuzzers and the consensus core's injected randomness. Same seed, same sequence,
 * on every platform: only 32-bit integer arithmetic.
 */
export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  constructor(seed: number | bigint) {
    let x = Number(BigInt.asUintN(32, BigInt(seed) ^ (BigInt(seed) >> 32n))) >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** Uniform u32. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.#s1 << 9) >>> 0;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    this.#s0 >>>= 0;
    this.#s1 >>>= 0;
    this.#s2 >>>= 0;
    return result;
  }

  /** Uniform integer in [0, bound), bound in 1..2^32. Rejection sampling, no modulo bias. */
  below(bound: number): number {
    if (!(bound >= 1 && bound <= 0x1_0000_0000 && Number.isInteger(bound))) {
      throw new RangeError(`Prng.below: bad bound ${bound}`);
    }
    if (bound === 1) return 0;
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % bound);
    for (;;) {
      const v = this.u32();
      if (v < limit) return v % bound;
    }
  }

  /** Uniform integer in [min, max] inclusive. */
  range(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  /** True with probability numerator / denominator. */
  chance(numerator: number, denominator: number): boolean {
    return this.below(denominator) < numerator;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.u32() / 0x1_0000_0000;
  }

  u64(): bigint {
    return (BigInt(this.u32()) << 32n) | BigInt(this.u32());
  }

  u128(): bigint {
    return (this.u64() << 64n) | this.u64();
  }

  bool(): boolean {
    return (this.u32() & 1) === 1;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick: empty');
    return items[this.below(items.length)] as T;
  }

  fill(bytes: Uint8Array): Uint8Array {
    let i = 0;
    for (; i + 4 <= bytes.length; i += 4) {
      const v = this.u32();
      bytes[i] = v & 0xff;
      bytes[i + 1] = (v >>> 8) & 0xff;
      bytes[i + 2] = (v >>> 16) & 0xff;
      bytes[i + 3] = v >>> 24;
    }
    if (i < bytes.length) {
      let v = this.u32();
      for (; i < bytes.length; i++) {
        bytes[i] = v & 0xff;
        v >>>= 8;
      }
    }
    return bytes;
  }

  bytes(length: number): Uint8Array {
    return this.fill(new Uint8Array(length));
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /** A new independent generator derived from this one (for sub-components). */
  fork(): Prng {
    return new Prng((BigInt(this.u32()) << 32n) | BigInt(this.u32()));
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
