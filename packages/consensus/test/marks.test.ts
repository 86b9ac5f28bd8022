/**
 * Coverage marks: the documented table and the code agree, and a mark is counted and emitted
 * when its path runs (here: a restarted replica that hears from nobody gives up probing).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { Mark, MARKS, Replica, partitionPlane, type RestoreRecord } from '../src/index.js';
import { BatchLogStateMachine } from './support/state-machines.js';

const doc = readFileSync(new URL('../../../docs/internals-consensus-core.md', import.meta.url), 'utf8');

describe('coverage marks', () => {
  it('every mark is documented once in docs/internals-consensus-core.md, and nothing else is', () => {
    const section = doc.slice(doc.indexOf('## Coverage marks'));
    const documented = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...MARKS].sort());
    expect(new Set(MARKS).size).toBe(MARKS.length);
  });

  it('a path that runs is counted in marks() and emitted as a `mark` event', () => {
    const restore: RestoreRecord = {
      priorState: true, superblock: { view: 1, logView: 1, commitMax: 0, checkpointOp: 0, checkpointChecksum: 0n, logHead: 0 },
      checkpointOp: 0, checkpointChecksum: 0n, journal: [], faultyOps: [], lostThrough: 0, journalLost: true, clientTable: null, commit: 0,
    };
    const r = new Replica({
      config: { cluster: 1n, replica: 1, replicaCount: 3, deepInvariants: true },
      plane: partitionPlane(7n),
      stateMachine: new BatchLogStateMachine(),
      time: { realtimeMicros: () => 1_000_000n },
      prng: new Prng(11),
      restore,
    });
    const events: string[] = [];
    for (let i = 0; i < 2_000 && r.marks()[Mark.ProbeGiveUp] === 0; i++) {
      r.tick();
      for (const e of r.takeEffects()) {
        if (e.kind === 'event' && e.name === 'mark') events.push(e.detail);
        if (e.kind === 'superblock_write') r.onStorageDone({ kind: 'superblock_written', state: e.state, ok: true });
      }
    }
    expect(r.marks()[Mark.ProbeGiveUp]).toBe(1);
    expect(events.some((d) => d.startsWith(`${Mark.ProbeGiveUp} `))).toBe(true);
    expect(r.marks()[Mark.MergeNackTruncation]).toBe(0);
    expect(r.role.status).toBe('view_change');
    expect(r.role.journalIncomplete).toBe(true);
  });
});
