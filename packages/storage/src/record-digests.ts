/**
 * A segment's RECORD DIGESTS, in memory only (never on disk): for index entry `k`, XXH3-64 of the
 * whole stored batch record, taken when its bytes were known good: appended by this process (after
 * ingress or prepare verification upstream), or re-verified frame by frame by a poll. A poll then
 * re-verifies a record with one hash of its bytes (~40 µs per MiB) instead of one per frame
 * (partition-reader.ts). Kept on the Segment, not its index, because a sealed segment's index is
 * dropped and re-read from disk while its records never change (sealed segments are immutable;
 * the active one only grows in-process: truncation happens at boot, on fresh Segment objects).
 *
 * NO_DIGEST (0) = not known (an index decoded from disk, or a record whose hash is 0, a 2^-64
 * chance that only costs the slow check).
 */
export const NO_DIGEST = 0n;

export class RecordDigests {
  #digests = new BigUint64Array(0);

  /** The digest of entry `k`, or NO_DIGEST. */
  at(k: number): bigint {
    return k < this.#digests.length ? (this.#digests[k] as bigint) : NO_DIGEST;
  }

  set(k: number, digest: bigint): void {
    if (k >= this.#digests.length) {
      const grown = new BigUint64Array(Math.max(64, 2 * this.#digests.length, k + 1));
      grown.set(this.#digests);
      this.#digests = grown;
    }
    this.#digests[k] = digest;
  }
}
