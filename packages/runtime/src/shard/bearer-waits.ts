/**
 * HTTP bearer checks (node/http-auth.ts) that this shard's metadata copy could not confirm yet.
 *
 * A personal access token is created on the metadata worker, which replies to the client once
 * the op is committed and published; this shard's copy may apply it a moment later. A check that
 * would be `denied` while the copy is behind the published op waits for the copy to reach it
 * (the same fence client frames wait on: docs/runtime.md "The published metadata op"), then is
 * verified again; it never waits longer than BEARER_FENCE_WAIT_MS (below the supervisor's own
 * 2 s timeout), and at most BEARER_WAITS_MAX wait at once (beyond that, answered on the spot).
 */
import type { BearerVerdict } from '../node/control.js';

export const BEARER_FENCE_WAIT_MS = 1_500;
export const BEARER_WAITS_MAX = 256;

interface Waiting {
  readonly token: string;
  readonly fence: bigint;
  readonly sinceMs: number;
  readonly answer: (verdict: BearerVerdict) => void;
}

export class BearerWaits {
  #waiting: Waiting[] = [];

  get size(): number {
    return this.#waiting.length;
  }

  /**
   * Answers now unless the verdict is `denied` with the copy behind `fence`; then it waits.
   * `fence` is the published metadata op (null when the copy has reached it).
   */
  check(token: string, fence: bigint | null, nowMs: number, verify: (token: string) => BearerVerdict, answer: (verdict: BearerVerdict) => void): void {
    const verdict = verify(token);
    if (verdict !== 'denied' || fence === null || this.#waiting.length >= BEARER_WAITS_MAX) return answer(verdict);
    this.#waiting.push({ token, fence, sinceMs: nowMs, answer });
  }

  /** The copy moved to `appliedOp` (or time passed): checks it reached, or that waited too long, are answered. */
  settle(appliedOp: bigint, nowMs: number, verify: (token: string) => BearerVerdict): void {
    if (this.#waiting.length === 0) return;
    const kept: Waiting[] = [];
    for (const w of this.#waiting) {
      if (w.fence <= appliedOp || nowMs - w.sinceMs >= BEARER_FENCE_WAIT_MS) w.answer(verify(w.token));
      else kept.push(w);
    }
    this.#waiting = kept;
  }
}
