/**
 * Seeded fault campaigns on SimDisk driving the recovery paths: each seed runs a workload of
 * durable journal appends and partition appends, crashes with injected faults, recovers, and
 * checks that nothing recovered is wrong (every entry / message returned is exactly what was
 * written) and that nothing acknowledged is lost unless the recovery REPORTS damage (refusal,
 * faulty slot, index past end). Deterministic: a failing seed replays.
 */
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { MetadataJournal, PartitionStorage, SimDisk, mkdirDurable, type SimFaultKind } from '../src/index.js';
import { equalBytes, makeBatches, makePrepares, must } from './support/fixtures.js';

const SEEDS = 150;

describe('SimDisk fault campaign: metadata journal', () => {
  it('never returns a wrong entry; loses an acked one only with reported damage', () => {
    const frames = makePrepares(1, 60, 0n, 100);
    const outcomes = new Map<string, number>();
    const kinds = new Set<SimFaultKind>();
    for (let seed = 0; seed < SEEDS; seed++) {
      const prng = new Prng(seed);
      const disk = new SimDisk({
        seed,
        faults: { tornWriteProbability: 0.5, unsyncedPersistProbability: 0.3, misdirectedWriteProbability: 0.02, readBitFlipProbability: 0.01 },
      });
      disk.setFaultsAllowed(false);
      mkdirDurable(disk, '/m');
      const mode = seed % 2 === 0 ? 'refuse' : 'repair';
      const journal = must(MetadataJournal.open(disk, '/m', { mode }));
      must(journal.recover(0));
      disk.allowFaults(3);
      let acked = 0;
      const total = prng.range(5, 60);
      for (let op = 1; op <= total; op++) {
        const frame = frames[op - 1] as Uint8Array;
        if (prng.chance(1, 4)) {
          if (!journal.appendNoSync(frame).ok) break;
        } else {
          if (!journal.append(frame).ok) break;
          acked = op;
        }
      }
      disk.crash();
      for (const f of disk.faultLog) kinds.add(f.kind);
      const reopened = must(MetadataJournal.open(disk, '/m', { mode }));
      const r = reopened.recover(0);
      let outcome: string;
      if (!r.ok) outcome = 'io_error';
      else if (r.value.kind === 'refused') outcome = 'refused';
      else {
        for (const e of r.value.entries) {
          expect(equalBytes(e.frame, frames[e.op - 1] as Uint8Array), `seed ${seed} op ${e.op}`).toBe(true);
        }
        const present = new Set(r.value.entries.map((e) => e.op));
        const lost = [];
        for (let op = 1; op <= acked; op++) if (!present.has(op)) lost.push(op);
        const damageReported = r.value.faulty.some((f) => f.kind === 'corrupt' || f.kind === 'missing');
        const durableFault = disk.faultLog.some((f) => f.kind === 'misdirected_write' || f.kind === 'read_bit_flip');
        if (lost.length > 0) expect(damageReported || durableFault, `seed ${seed}: lost ${lost.join(',')} silently`).toBe(true);
        outcome = lost.length > 0 ? 'lost_with_report' : r.value.faulty.length > 0 ? 'recovered_with_faults' : 'clean';
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect(kinds.has('torn_write')).toBe(true);
    expect(kinds.has('unsynced_persisted')).toBe(true);
    expect(kinds.has('misdirected_write')).toBe(true);
    expect((outcomes.get('clean') ?? 0) + (outcomes.get('recovered_with_faults') ?? 0)).toBeGreaterThan(SEEDS / 2);
  });
});

describe('SimDisk fault campaign: partition log', () => {
  it('never serves a wrong message; keeps every synced one unless the partition is refused', () => {
    const batches = makeBatches(0, Array.from({ length: 40 }, () => 3), 48);
    const outcomes = new Map<string, number>();
    for (let seed = 0; seed < SEEDS; seed++) {
      const prng = new Prng(seed * 7 + 1);
      const disk = new SimDisk({
        seed,
        faults: { tornWriteProbability: 0.5, unsyncedPersistProbability: 0.3, misdirectedWriteProbability: 0.02, readBitFlipProbability: 0.005 },
      });
      disk.setFaultsAllowed(false);
      const options = { segmentSize: 4096, messagesRequiredToSave: 1 + prng.below(12) };
      const p = must(PartitionStorage.open(disk, '/p', options));
      disk.allowFaults(3);
      let synced = 0;
      let at = 0;
      const count = prng.range(3, 40);
      while (at < count) {
        const n = Math.min(count - at, prng.range(1, 4));
        const out = p.log.append(batches.slice(at, at + n));
        if (!out.ok) break;
        at += n;
        // Durable so far: everything when this append fdatasynced, else every sealed segment.
        if (out.value.synced) synced = at * 3;
        else if (out.value.sealed > 0) synced = Math.max(synced, p.log.active.startOffset);
      }
      disk.crash();
      disk.setFaultsAllowed(true);
      const reopened = PartitionStorage.open(disk, '/p', options);
      if (!reopened.ok) {
        outcomes.set(reopened.error.kind, (outcomes.get(reopened.error.kind) ?? 0) + 1);
        continue;
      }
      const q = reopened.value;
      const poll = q.reader.first(10_000);
      if (!poll.ok) {
        outcomes.set('read_failed_closed', (outcomes.get('read_failed_closed') ?? 0) + 1);
        continue;
      }
      let expectOffset = 0;
      for (const b of poll.value.batches) {
        expect(b.firstOffset, `seed ${seed}`).toBe(expectOffset);
        const original = batches[b.firstOffset / 3] as Uint8Array;
        if (!b.sliced) expect(equalBytes(b.parts[0] as Uint8Array, original), `seed ${seed} batch ${b.firstOffset}`).toBe(true);
        expectOffset += b.messageCount;
      }
      const durableFault = disk.faultLog.some((f) => f.kind === 'misdirected_write');
      if (!durableFault) expect(q.log.nextOffset, `seed ${seed}`).toBeGreaterThanOrEqual(Math.min(synced, at * 3));
      outcomes.set('recovered', (outcomes.get('recovered') ?? 0) + 1);
    }
    expect(outcomes.get('recovered') ?? 0).toBeGreaterThan(SEEDS / 2);
  });
});
