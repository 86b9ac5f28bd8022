/**
 * `rejoin`: a cluster replica whose data was wiped (`shoal-server --fresh`) must not lead the view
 * it finds itself primary of with an empty log. Booted with `rejoin`, it is ceded and probing
 * (§5.10): the others, asked by the primary-by-index of their view, elect a new primary, and the
 * wiped replica refills from them. Without it, a wiped replica 0 in view 0 boots as the acting
 * primary of an empty log while its peers hold committed ops (the case this option exists for).
 */
import { describe, expect, it } from 'vitest';
import { createStreamCommand, Operation } from '@shoal/protocol';
import { MetadataDriver } from '../src/index.js';
import { Harness } from './support/harness.js';

/** Replica 0 boots with `rejoin` once `wiped.rejoin` is set (after its wipe). */
function harness(wiped: { rejoin: boolean }): Harness<MetadataDriver> {
  return new Harness<MetadataDriver>(3, (h, i) => {
    const opened = MetadataDriver.open({ ...h.options(i), dir: '/data/metadata', rejoin: i === 0 && wiped.rejoin });
    if (!opened.ok) throw new Error(`open ${i}: ${opened.reason} ${opened.detail}`);
    return opened.driver;
  });
}

/** Replica 0 (primary of view 0) commits a few CreateStreams, then loses its whole data directory. */
function commitThenWipe(h: Harness<MetadataDriver>): void {
  h.tick(5);
  const token = 900;
  h.driver(0).submitSession({ session: 'register', client: 7n, userId: 0, epoch: 0n, request: 0n, token });
  h.tick(20);
  const epoch = h.sessions.find((s) => s.token === token)?.epoch ?? 0n;
  expect(epoch).toBeGreaterThan(0n);
  for (let r = 1; r <= 3; r++) {
    h.driver(0).onRequest({
      client: 7n, request: BigInt(r), session: epoch, requestChecksum: 0n, operation: Operation.CreateStream,
      body: createStreamCommand.encodeRequest({ name: `s${r}`, options: [] }), userId: 0, timestamp: 1n, token: token + r,
    });
    h.tick(5);
  }
  h.tick(100); // a commit heartbeat tells the backups the last commit point
  expect(h.driver(1).status.commitMin).toBe(4);
  h.crash(0);
  h.disks[0]?.inner.removeTree('/data');
}

describe('metadata driver: rejoin after a wipe', () => {
  it('without rejoin a wiped primary-by-index boots as the acting primary of an empty log', () => {
    const h = harness({ rejoin: false });
    commitThenWipe(h);
    const d = h.boot(0);
    expect(d.status.view).toBe(0);
    expect(d.status.primary).toBe(true);
    expect(d.status.op).toBe(0);
  });

  it('with rejoin it probes, a new view is elected without it leading, and it refills from its peers', () => {
    const wiped = { rejoin: false };
    const h = harness(wiped);
    commitThenWipe(h);
    wiped.rejoin = true;
    const committed = h.driver(1).status.commitMin;
    const d = h.boot(0);
    expect(d.status.primary).toBe(false);
    for (let t = 0; t < 3000 && !(d.status.commitMin >= committed && d.status.view > 0 && d.status.status === 'normal'); t++) h.tick();
    expect(d.status.view).toBeGreaterThan(0);
    expect(d.status.primary).toBe(false);
    expect(d.status.commitMin).toBeGreaterThanOrEqual(committed);
    // The committed log it refilled is its peers' (nothing of its own was ever proposed).
    for (let op = 1; op <= committed; op++) expect(d.replica.journalFrame(op)).toEqual(h.driver(1).replica.journalFrame(op));
    expect(h.driver(1).status.commitMin).toBe(committed);
  });
});
