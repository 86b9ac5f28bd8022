import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { Timer } from '../src/index.js';

describe('timers (§4.2, pitfall 5)', () => {
  it('fires once when the countdown hits zero and stays fired until re-armed', () => {
    const t = new Timer('t', 3);
    t.start();
    expect([t.tick(), t.tick(), t.tick()]).toEqual([false, false, true]);
    expect(t.fired).toBe(true);
    expect([t.tick(), t.tick()]).toEqual([false, false]); // fired stays fired, no re-fire
    t.reset();
    expect(t.fired).toBe(false);
    expect([t.tick(), t.tick(), t.tick()]).toEqual([false, false, true]);
  });

  it('resetting a stopped timer arms nothing', () => {
    const t = new Timer('t', 2);
    t.reset();
    expect(t.running).toBe(false);
    expect([t.tick(), t.tick(), t.tick()]).toEqual([false, false, false]);
  });

  it('start clears the attempt counter; stop disarms', () => {
    const t = new Timer('t', 2);
    t.start();
    t.backoff(new Prng(1));
    expect(t.attempts).toBe(1);
    t.start();
    expect(t.attempts).toBe(0);
    t.stop();
    expect(t.tick()).toBe(false);
  });

  it('backoff: base × 2^min(attempts, 4) plus uniform jitter 0..=b, capped at 16 × base', () => {
    const prng = new Prng(7);
    const t = new Timer('prepare', 25);
    t.start();
    const seen: number[] = [];
    for (let attempt = 1; attempt <= 7; attempt++) {
      t.backoff(prng);
      const b = 25 * 2 ** Math.min(attempt, 4);
      expect(t.countdown).toBeGreaterThanOrEqual(b);
      expect(t.countdown).toBeLessThanOrEqual(2 * b);
      seen.push(t.countdown);
    }
    expect(Math.max(...seen)).toBeLessThanOrEqual(2 * 16 * 25);
  });
});
