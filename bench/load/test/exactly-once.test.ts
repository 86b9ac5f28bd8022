import { describe, expect, it } from 'vitest';
import { ExactlyOnceChecker, IDENTITY_BYTES, decodeIdentity, encodeIdentity } from '../src/exactly-once.js';

const TAG = 0xabc123;

function payload(producer: number, seq: number, tag = TAG): Uint8Array {
  const bytes = new Uint8Array(64);
  encodeIdentity(bytes, 0, tag, producer, seq);
  return bytes;
}

/** Producer 0 sends 10 messages in two requests to partitions 0 and 1 (base offsets 0 and 0). */
function scenario(): ExactlyOnceChecker {
  const checker = new ExactlyOnceChecker(TAG);
  checker.sent(0, 0, 5);
  checker.acknowledged(0, 0, 5, 0, 0);
  checker.sent(0, 5, 5);
  checker.acknowledged(0, 5, 5, 1, 0);
  return checker;
}

function consumeAll(checker: ExactlyOnceChecker, skip: (p: number, o: number) => boolean = () => false): void {
  for (let i = 0; i < 5; i++) if (!skip(0, i)) checker.consumed(0, i, payload(0, i));
  for (let i = 0; i < 5; i++) if (!skip(1, i)) checker.consumed(1, i, payload(0, 5 + i));
}

describe('exactly-once checker', () => {
  it('identity round trip', () => {
    const bytes = new Uint8Array(IDENTITY_BYTES + 3);
    encodeIdentity(bytes, 0, 0xffff_ffff, 7, 123_456);
    expect(decodeIdentity(bytes)).toEqual({ runTag: 0xffff_ffff, producer: 7, seq: 123_456 });
    expect(decodeIdentity(new Uint8Array(IDENTITY_BYTES))).toBeNull();
    expect(decodeIdentity(new Uint8Array(4))).toBeNull();
  });

  it('every acknowledged message consumed once: ok, with counts and per-partition expectations', () => {
    const checker = scenario();
    expect([...checker.acknowledgedPerPartition()].sort()).toEqual([[0, 5], [1, 5]]);
    consumeAll(checker);
    const v = checker.verdict();
    expect(v).toMatchObject({ ok: true, sent: 10, acknowledged: 10, consumed: 10, lost: 0, duplicated: 0, misplaced: 0, phantom: 0, reordered: 0 });
  });

  it('detects loss', () => {
    const checker = scenario();
    consumeAll(checker, (p, o) => p === 1 && o === 3);
    const v = checker.verdict();
    expect(v.ok).toBe(false);
    expect(v.lost).toBe(1);
    expect(v.examples.join('\n')).toContain('producer 0 seq 8: acknowledged (partition 1) but never consumed');
  });

  it('detects duplicates (the same message at two offsets, and the same offset twice)', () => {
    const checker = scenario();
    consumeAll(checker);
    checker.consumed(0, 5, payload(0, 2));
    const v = checker.verdict();
    expect(v.ok).toBe(false);
    expect(v.duplicated).toBe(1);
    const again = scenario();
    consumeAll(again);
    again.consumed(1, 4, payload(0, 9));
    const w = again.verdict();
    expect(w.duplicated).toBe(1);
    expect(w.reordered).toBe(1);
  });

  it('detects misplacement, phantoms and foreign runs', () => {
    const misplaced = scenario();
    for (let i = 0; i < 5; i++) misplaced.consumed(0, i, payload(0, i === 2 ? 3 : i === 3 ? 2 : i));
    for (let i = 0; i < 5; i++) misplaced.consumed(1, i, payload(0, 5 + i));
    expect(misplaced.verdict()).toMatchObject({ ok: false, misplaced: 2, lost: 0, duplicated: 0 });
    const phantom = scenario();
    consumeAll(phantom);
    phantom.consumed(1, 5, payload(0, 77));
    phantom.consumed(1, 6, payload(0, 1, 999));
    phantom.consumed(1, 7, new Uint8Array(32));
    expect(phantom.verdict()).toMatchObject({ ok: false, phantom: 3 });
  });

  it('unacknowledged but present is fine; duplicates of re-sent messages are reported apart', () => {
    const checker = scenario();
    checker.sent(0, 10, 2); // outcome unknown (connection lost)
    checker.retried(0, 10, 2);
    checker.acknowledged(0, 10, 2, 0, 6); // the re-send was acknowledged at offsets 6, 7
    checker.sent(0, 12, 1); // never acknowledged, but committed
    consumeAll(checker);
    checker.consumed(0, 5, payload(0, 10)); // first attempt committed too
    checker.consumed(0, 6, payload(0, 10));
    checker.consumed(0, 7, payload(0, 11));
    checker.consumed(0, 8, payload(0, 12));
    const v = checker.verdict();
    expect(v).toMatchObject({ ok: true, retryDuplicates: 1, duplicated: 0, unacknowledgedPresent: 1, lost: 0 });
  });

  it('per-message offsets (NATS stream sequences) are checked too', () => {
    const checker = new ExactlyOnceChecker(TAG);
    checker.sent(1, 0, 3);
    checker.acknowledged(1, 0, 3, 0, [10, 12, 14]);
    checker.consumed(0, 10, payload(1, 0));
    checker.consumed(0, 12, payload(1, 1));
    checker.consumed(0, 13, payload(1, 2));
    expect(checker.verdict()).toMatchObject({ ok: false, misplaced: 1 });
  });

  it('grows past its initial capacity', () => {
    const checker = new ExactlyOnceChecker(TAG);
    checker.sent(2, 0, 5000);
    checker.acknowledged(2, 0, 5000, 0, 0);
    for (let i = 0; i < 5000; i++) checker.consumed(0, i, payload(2, i));
    expect(checker.verdict()).toMatchObject({ ok: true, acknowledged: 5000, consumed: 5000 });
  });
});
