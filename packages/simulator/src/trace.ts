/**
 * The run's trace hash: every delivered packet, every commit, every completion delivered to a
 * core and every client answer is folded in, so two runs of one seed hash the same iff they did
 * the same things in the same order. Two 32-bit murmur-style lanes (cheap, no allocation).
 */
export class TraceHash {
  #h1 = 0x9747_b28c;
  #h2 = 0x85eb_ca6b;
  count = 0;

  mix(a: number, b: number, c: number): void {
    this.count++;
    this.#h1 = round(this.#h1, a | 0);
    this.#h1 = round(this.#h1, b | 0);
    this.#h1 = round(this.#h1, c | 0);
    this.#h2 = round(this.#h2 ^ this.#h1, (a ^ (b << 7) ^ (c << 13)) | 0);
  }

  /** A frame: its length and its first 8 bytes (the checksum field of every header). */
  frame(tag: number, from: number, to: number, frame: Uint8Array): void {
    const word0 = frame.length >= 8 ? (frame[0] as number) | ((frame[1] as number) << 8) | ((frame[2] as number) << 16) | ((frame[3] as number) << 24) : 0;
    const word1 = frame.length >= 8 ? (frame[4] as number) | ((frame[5] as number) << 8) | ((frame[6] as number) << 16) | ((frame[7] as number) << 24) : 0;
    this.mix(tag, (from << 8) | to, frame.length);
    this.mix(word0, word1, 0);
  }

  hex(): string {
    return `${fmix(this.#h1).toString(16).padStart(8, '0')}${fmix(this.#h2 ^ this.count).toString(16).padStart(8, '0')}`;
  }
}

function round(h: number, k: number): number {
  let x = Math.imul(k, 0xcc9e_2d51);
  x = (x << 15) | (x >>> 17);
  x = Math.imul(x, 0x1b87_3593);
  let y = h ^ x;
  y = (y << 13) | (y >>> 19);
  return (Math.imul(y, 5) + 0xe654_6b64) | 0;
}

function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85eb_ca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2_ae35);
  return (x ^ (x >>> 16)) >>> 0;
}
