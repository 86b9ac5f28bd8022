/**
 * Dial scheduling on an injected clock and timer: only greater ids, one pending attempt per peer,
 * a doubling re-dial wait after consecutive failures (capped at the period), a prompt re-dial of
 * a dropped link that had been stable, backoff for links that die young, and the lost-outcome
 * safety net.
 */
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/log/logger.js';
import { Dialer, SILENT_LOG, type PeerAddress, type ReplicaPlaneLog } from '../src/replica-plane/index.js';

// Compile-time contract: the runtime's Logger can be passed wherever a ReplicaPlaneLog goes.
const loggerFits = (logger: Logger): ReplicaPlaneLog => logger;
void loggerFits;

const PERIOD = 100;
const GRACE = 250;
const BASE = 10;

function harness(selfId: number, count: number, extra: { readonly restartRedialCapMs?: number; readonly restartWindowMs?: number } = {}) {
  let now = 0;
  const installed = new Set<number>();
  const calls: number[] = [];
  const outcomes = new Map<number, (ok: boolean) => void>();
  /** The armed one-shot timers: when each fires. */
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const peers: PeerAddress[] = Array.from({ length: count }, (_, replicaId) => ({ replicaId, ip: '127.0.0.1', port: 9000 + replicaId })).filter((p) => p.replicaId !== selfId);
  const dialer = new Dialer({
    selfId,
    peers,
    reconnectPeriodMs: PERIOD,
    handshakeGraceMs: GRACE,
    isInstalled: (peer) => installed.has(peer),
    attempt: (target) => {
      calls.push(target.replicaId);
      return new Promise<boolean>((resolve) => outcomes.set(target.replicaId, resolve));
    },
    log: SILENT_LOG,
    now: () => now,
    redialBaseMs: BASE,
    ...extra,
    setTimer: (fn, ms) => {
      const timer = { at: now + ms, fn, live: true };
      timers.push(timer);
      return () => {
        timer.live = false;
      };
    },
  });
  return {
    dialer,
    installed,
    calls,
    /** Moves the clock, firing every armed timer that falls due, in order. */
    advance: (ms: number) => {
      const until = now + ms;
      for (;;) {
        const due = timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        due.live = false;
        now = Math.max(now, due.at);
        due.fn();
      }
      now = until;
    },
    settle: async (peer: number, ok: boolean) => {
      outcomes.get(peer)?.(ok);
      outcomes.delete(peer);
      await Promise.resolve();
      await Promise.resolve();
    },
  };
}

/** Advances the clock 1 ms at a time until the next dial; returns how long that took. */
function untilNextDial(h: ReturnType<typeof harness>, limit = PERIOD * 2): number {
  const before = h.calls.length;
  let waited = 0;
  while (h.calls.length === before) {
    h.advance(1);
    waited++;
    if (waited > limit) throw new Error('no re-dial');
  }
  return waited;
}

/** The pending dial to peer 1 installs, the link stays up a period, then drops (a stable link). */
async function dropStableLink(h: ReturnType<typeof harness>): Promise<void> {
  await h.settle(1, true);
  h.installed.add(1);
  h.advance(PERIOD);
  h.installed.delete(1);
  h.dialer.linkDown(1);
  h.advance(0);
}

describe('Dialer', () => {
  it('dials only strictly greater replica ids', () => {
    expect(harness(0, 3).dialer.targets).toEqual([1, 2]);
    expect(harness(1, 3).dialer.targets).toEqual([2]);
    expect(harness(2, 3).dialer.targets).toEqual([]);
  });

  it('keeps one attempt per peer pending and skips installed peers', async () => {
    const h = harness(0, 3);
    h.dialer.sweep();
    h.dialer.sweep();
    expect(h.calls).toEqual([1, 2]);
    await h.settle(1, true);
    h.installed.add(1);
    h.advance(PERIOD);
    h.dialer.sweep();
    expect(h.calls).toEqual([1, 2]); // 1 installed, 2 still pending
  });

  it('re-dials a failing target after a doubling wait, capped at the period, without waiting for a sweep', async () => {
    const h = harness(0, 2);
    h.dialer.sweep();
    const at: number[] = [];
    for (let i = 0; i < 8; i++) {
      await h.settle(1, false);
      at.push(untilNextDial(h));
    }
    expect(at).toEqual([BASE, 2 * BASE, 4 * BASE, 8 * BASE, PERIOD, PERIOD, PERIOD, PERIOD]);
    expect(h.dialer.stats()[0]).toMatchObject({ peer: 1, failures: 8, pending: true });
  });

  it('re-dials a stable link at once when it drops; a link that keeps dying young backs off', async () => {
    const h = harness(0, 2);
    h.dialer.sweep();
    await dropStableLink(h);
    expect(h.calls).toEqual([1, 1]); // at once: no sweep ran
    // Up again, but it dies at once each time: the waits grow like failures.
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await h.settle(1, true);
      h.installed.add(1);
      h.installed.delete(1);
      h.dialer.linkDown(1);
      waits.push(untilNextDial(h));
    }
    expect(waits).toEqual([BASE, 2 * BASE, 4 * BASE, 8 * BASE]);
    // A link that then stays up a period resets the backoff: its drop is re-dialed at once.
    await h.settle(1, true);
    h.installed.add(1);
    h.advance(PERIOD);
    h.installed.delete(1);
    h.dialer.linkDown(1);
    const before = h.calls.length;
    h.advance(0);
    expect(h.calls.length).toBe(before + 1);
    expect(h.dialer.stats()[0]).toMatchObject({ peer: 1, failures: 0, pending: true });
  });

  it('a peer whose stable link dropped is re-dialed at most the restart cap apart, then with the usual backoff', async () => {
    const CAP = 30;
    const WINDOW = 400;
    const h = harness(0, 2, { restartRedialCapMs: CAP, restartWindowMs: WINDOW });
    h.dialer.sweep();
    await dropStableLink(h);
    expect(h.calls).toEqual([1, 1]); // at once
    // The peer's port refuses while it restarts: the waits stop growing at the cap...
    const waits: number[] = [];
    let elapsed = 0;
    while (elapsed < WINDOW + 2 * PERIOD) {
      await h.settle(1, false);
      const waited = untilNextDial(h);
      waits.push(waited);
      elapsed += waited;
    }
    expect(waits.slice(0, 5)).toEqual([BASE, 2 * BASE, CAP, CAP, CAP]);
    // ...and once the window has passed, a peer that stays away backs off up to the period.
    expect(waits.slice(-2)).toEqual([PERIOD, PERIOD]);
    // Back: installed, and the next stable drop starts a new window.
    await dropStableLink(h);
    const again: number[] = [];
    for (let i = 0; i < 4; i++) {
      await h.settle(1, false);
      again.push(untilNextDial(h));
    }
    expect(again).toEqual([BASE, 2 * BASE, CAP, CAP]);
  });

  it('ignores a link down of a peer it does not dial, and stops re-dialing once stopped', async () => {
    const h = harness(1, 3);
    h.dialer.linkDown(0);
    h.advance(PERIOD);
    expect(h.calls).toEqual([]);
    h.dialer.sweep();
    await h.settle(2, false);
    h.dialer.stop();
    h.advance(PERIOD * 10);
    expect(h.calls).toEqual([2]);
  });

  it('forgets a pending attempt whose outcome never arrives (grace + period)', () => {
    const h = harness(0, 2);
    h.dialer.sweep();
    h.advance(GRACE + PERIOD - 1);
    h.dialer.sweep();
    expect(h.calls).toEqual([1]);
    h.advance(1);
    h.dialer.sweep();
    expect(h.calls).toEqual([1, 1]);
  });
});
