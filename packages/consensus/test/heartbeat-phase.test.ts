/**
 * Issue 12: the idle Commit heartbeats of every group a node leads fired in the same tick (all
 * timers started together at boot or after a view change of all of them), overrunning the
 * 256-frame per-peer send queue and dropping the same tail groups every time. The heartbeat
 * timer starts at a random phase within its interval (timer-jitter PRNG, deterministic).
 */
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { Replica, partitionPlane } from '../src/index.js';
import { BatchLogStateMachine } from './support/state-machines.js';

const GROUPS = 300;
const PEER_QUEUE = 256;

describe('Commit heartbeats of many groups', () => {
  it('spread over the interval: no tick sends a peer anywhere near one frame per group', () => {
    const replicas: Replica[] = [];
    for (let g = 0; g < GROUPS; g++) {
      replicas.push(new Replica({
        config: { cluster: 1n, replica: 0, replicaCount: 3 },
        plane: partitionPlane(BigInt(g + 1)),
        stateMachine: new BatchLogStateMachine(),
        time: { realtimeMicros: () => 1_000_000n },
        prng: new Prng(1000 + g),
      }));
    }
    const perTick: number[] = [];
    for (let tick = 0; tick < 200; tick++) {
      let toPeer1 = 0;
      for (const r of replicas) {
        r.tick();
        for (const e of r.takeEffects()) {
          if (e.kind === 'superblock_write') r.onStorageDone({ kind: 'superblock_written', state: e.state, ok: true });
          if (e.kind === 'send' && e.to === 1) toPeer1++;
        }
        for (const e of r.takeEffects()) if (e.kind === 'send' && e.to === 1) toPeer1++;
      }
      perTick.push(toPeer1);
    }
    const heartbeats = perTick.reduce((a, b) => a + b, 0);
    expect(heartbeats).toBeGreaterThanOrEqual(GROUPS * 3); // every group heartbeats every 50 ticks
    expect(Math.max(...perTick)).toBeLessThan(PEER_QUEUE / 8);
  });
});
