/**
 * Dial scheduling on an injected clock: only greater ids, one pending attempt per peer, backoff
 * in whole sweeps after consecutive failures, reset on success, and the lost-outcome safety net.
 */
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/log/logger.js';
import { BACKOFF_SWEEPS_MAX, Dialer, SILENT_LOG, type PeerAddress, type ReplicaPlaneLog } from '../src/replica-plane/index.js';

// Compile-time contract: the runtime's Logger can be passed wherever a ReplicaPlaneLog goes.
const loggerFits = (logger: Logger): ReplicaPlaneLog => logger;
void loggerFits;

const PERIOD = 100;
const GRACE = 250;

function harness(selfId: number, count: number) {
  let now = 0;
  const installed = new Set<number>();
  const calls: number[] = [];
  const outcomes = new Map<number, (ok: boolean) => void>();
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
  });
  return {
    dialer,
    installed,
    calls,
    advance: (ms: number) => {
      now += ms;
    },
    settle: async (peer: number, ok: boolean) => {
      outcomes.get(peer)?.(ok);
      outcomes.delete(peer);
      await Promise.resolve();
      await Promise.resolve();
    },
  };
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

  it('backs off in whole sweeps after consecutive failures, capped, and resets on success', async () => {
    const h = harness(0, 2);
    const sweepsBetweenAttempts: number[] = [];
    let sweepsSinceAttempt = 0;
    for (let sweep = 0; sweep < 40; sweep++) {
      const before = h.calls.length;
      h.dialer.sweep();
      sweepsSinceAttempt++;
      if (h.calls.length > before) {
        sweepsBetweenAttempts.push(sweepsSinceAttempt);
        sweepsSinceAttempt = 0;
        await h.settle(1, false);
      }
      h.advance(PERIOD);
    }
    expect(sweepsBetweenAttempts.slice(0, 6)).toEqual([1, 1, 2, 4, BACKOFF_SWEEPS_MAX, BACKOFF_SWEEPS_MAX]);
    // Success resets: after a link drops, the next sweep dials at once.
    h.dialer.sweep();
    h.advance(PERIOD * BACKOFF_SWEEPS_MAX);
    h.dialer.sweep();
    const count = h.calls.length;
    await h.settle(1, true);
    h.advance(PERIOD);
    h.dialer.sweep();
    expect(h.calls.length).toBe(count + 1);
    expect(h.dialer.stats()[0]).toMatchObject({ peer: 1, failures: 0, pending: true });
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
