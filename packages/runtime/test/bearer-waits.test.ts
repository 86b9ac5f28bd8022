import { describe, expect, it } from 'vitest';
import type { BearerVerdict } from '../src/node/control.js';
import { BEARER_FENCE_WAIT_MS, BEARER_WAITS_MAX, BearerWaits } from '../src/shard/bearer-waits.js';

/** A metadata copy reduced to what a bearer check reads: the tokens it has applied. */
class Copy {
  readonly tokens = new Set<string>();
  appliedOp = 10n;
  verify = (token: string): BearerVerdict => (this.tokens.has(token) ? 'ok' : 'denied');
}

describe('bearer checks behind the metadata fence', () => {
  it('a token the copy has not applied yet waits for the published op, then is accepted', () => {
    const copy = new Copy();
    const waits = new BearerWaits();
    const answers: BearerVerdict[] = [];
    waits.check('new-pat', 11n, 0, copy.verify, (v) => answers.push(v));
    expect(answers).toEqual([]);
    copy.appliedOp = 11n;
    copy.tokens.add('new-pat');
    waits.settle(copy.appliedOp, 5, copy.verify);
    expect(answers).toEqual(['ok']);
    expect(waits.size).toBe(0);
  });

  it('answers at once when the copy is current or the verdict is not a denial', () => {
    const copy = new Copy();
    copy.tokens.add('known');
    const waits = new BearerWaits();
    const answers: BearerVerdict[] = [];
    waits.check('unknown', null, 0, copy.verify, (v) => answers.push(v));
    waits.check('known', 12n, 0, copy.verify, (v) => answers.push(v));
    waits.check('unknown', 12n, 0, () => 'unavailable', (v) => answers.push(v));
    expect(answers).toEqual(['denied', 'ok', 'unavailable']);
    expect(waits.size).toBe(0);
  });

  it('a wait ends as a denial once its bound passes, and a full table answers on the spot', () => {
    const copy = new Copy();
    const waits = new BearerWaits();
    const answers: BearerVerdict[] = [];
    for (let i = 0; i < BEARER_WAITS_MAX + 1; i++) waits.check(`t${i}`, 99n, 0, copy.verify, (v) => answers.push(v));
    expect(answers).toEqual(['denied']);
    expect(waits.size).toBe(BEARER_WAITS_MAX);
    waits.settle(copy.appliedOp, BEARER_FENCE_WAIT_MS - 1, copy.verify);
    expect(waits.size).toBe(BEARER_WAITS_MAX);
    waits.settle(copy.appliedOp, BEARER_FENCE_WAIT_MS, copy.verify);
    expect(waits.size).toBe(0);
    expect(answers.filter((v) => v === 'denied')).toHaveLength(BEARER_WAITS_MAX + 1);
  });
});
