/**
 * Replay determinism (same seed, same trace hash) and checker self-tests: a bug injected through a
 * test-only hook must fail the run with the right checker's message.
 */
import { describe, expect, it } from 'vitest';
import type { Replica } from '@shoal/consensus';
import { Operation, packPartitionGroup, stringIdentifier } from '@shoal/protocol';
import { encodeDeleteOffsetBody, encodeStoreOffsetBody } from '@shoal/state';
import { PARTITION_JOURNAL_DIR } from '@shoal/storage';
import {
  Checker, DATA_STREAM, DATA_TOPIC, OffsetChecker, Salt, Simulation, type SimNode, Timeline, calmOptions, optionsForSeed, stream,
} from '../src/index.js';

describe('replay determinism', () => {
  it('one seed always replays the same run (same trace hash, same result)', () => {
    for (const [seed, replicas] of [[20, 3], [11, 5], [12, 2]] as const) {
      const a = new Simulation(optionsForSeed(seed, replicas)).run();
      const b = new Simulation(optionsForSeed(seed, replicas)).run();
      expect(b.traceHash).toBe(a.traceHash);
      expect(b.ticks).toBe(a.ticks);
      expect(b.committedOps).toBe(a.committedOps);
      expect(b.failure).toBe(a.failure);
    }
  }, 60_000);

  it('recording a timeline does not change the run', () => {
    const options = optionsForSeed(14, 3);
    const plain = new Simulation(options).run();
    const timeline = new Timeline(14, 3, options.clients);
    const recorded = new Simulation(options, {}, timeline).run();
    expect(recorded.traceHash).toBe(plain.traceHash);
    expect(recorded.marks).toEqual(plain.marks);
    expect(timeline.data.replicaSeries[0]?.spans.length).toBeGreaterThan(0);
  }, 60_000);

  it('different seeds take different paths', () => {
    const a = new Simulation(optionsForSeed(21, 3)).run();
    const b = new Simulation(optionsForSeed(22, 3)).run();
    expect(a.traceHash).not.toBe(b.traceHash);
  }, 60_000);
});

describe('checker self-tests (injected bugs must be caught)', () => {
  it('a commit whose prepare differs from the one committed elsewhere fails the committed-prefix check', () => {
    const r = new Simulation(calmOptions(31, 3, { safetyTicks: 600 }), {
      forgeCommit: (node, group, op, checksum) => (node === 2 && group === 1n << 63n && op === 5 ? checksum ^ 1n : checksum),
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/committed op 5 with checksum .* but op 5 was committed as/);
  }, 60_000);

  it('an op applied twice under one (client, request) fails the exactly-once check', () => {
    let duplicated = false;
    const r = new Simulation(calmOptions(32, 3, { safetyTicks: 600 }), {
      forgeApplied: (node, op) => {
        if (duplicated || node !== 0 || op.operation !== 128 || op.request === 0n) return [op];
        duplicated = true;
        return [op, { ...op, op: op.op + 100_000 }];
      },
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/exactly-once: client .* committed twice/);
  }, 60_000);

  it('an acknowledged reply the sequential model cannot explain fails the linearizability check', () => {
    let forged = false;
    const r = new Simulation(calmOptions(33, 3, { safetyTicks: 800 }), {
      forgeAck: (a) => {
        if (forged || a.kind !== 'metadata' || a.op === 0 || a.code !== 0 || a.createdId === null) return a;
        forged = true;
        return { ...a, createdId: a.createdId + 7 };
      },
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/linearizability: op \d+ .* created id/);
  }, 60_000);

  it('an acknowledged batch damaged in a replica\'s log (no disk fault allowed there) fails the partition check', () => {
    const r = new Simulation(calmOptions(34, 3, { safetyTicks: 800 }), {
      beforeFinalChecks: (sim) => {
        const node = sim.nodes[1];
        if (node === undefined) return;
        for (const entry of node.partitions.values()) {
          const log = entry.driver.storage.log;
          if (log.nextOffset === 0) continue;
          const segment = log.segments[0];
          if (segment === undefined || segment.size < 300) continue;
          node.disk.corruptAtRest(segment.logPath, 290);
          return;
        }
      },
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/replica 1 partition \d+: batch at \d+ unreadable/);
  }, 60_000);

  it('a replica whose view or commit goes back fails the watermark check', () => {
    const checker = new Checker(3);
    const replica = (view: number, commitMin: number, commitMax: number) => ({ role: { view, commitMin, commitMax } }) as unknown as Replica;
    checker.sample(1, 5n, replica(3, 10, 12));
    checker.sample(1, 5n, replica(3, 11, 12));
    expect(() => checker.sample(1, 5n, replica(2, 11, 12))).toThrow(/view went back from 3 to 2/);
    expect(() => checker.sample(1, 5n, replica(3, 9, 12))).toThrow(/commit_min went back/);
    // A restart resets the watermarks, but a boot below the durable view is a violation.
    checker.crashed(1, 3);
    checker.sample(1, 5n, replica(0, 0, 0));
  });

  it('an acknowledged consumer-offset write that was never committed fails the durability check', () => {
    let forged = false;
    const r = new Simulation(calmOptions(35, 3, { safetyTicks: 800, workload: { dataPartitions: 2, metadataShare: 0.1, messagesMax: 2, offsetShare: 0.5, burst: false } }), {
      forgeAck: (a) => {
        if (forged || a.kind !== 'offset' || a.code !== 0 || a.offset === null) return a;
        forged = true;
        return { ...a, offset: a.offset + 1_000_000n };
      },
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/consumer offsets: partition \d+ consumer \d+: acknowledged store \d+ .* is not in the committed log/);
  }, 60_000);

  it('a replica whose offset table differs from the committed log fails the offset state check', () => {
    const r = new Simulation(calmOptions(36, 3, { safetyTicks: 800, workload: { dataPartitions: 2, metadataShare: 0.1, messagesMax: 2, offsetShare: 0.5, burst: false } }), {
      beforeFinalChecks: (sim) => {
        const entry = sim.nodes[2]?.partitions.values().next().value;
        entry?.driver.state.offsets.set({ kind: 'consumer', key: 1 }, 424242n);
      },
    }).run();
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/consumer offsets: replica 2 partition \d+ consumer 1: stored 424242/);
  }, 60_000);
});

describe('consumer-offset order (one writer per key)', () => {
  const store = (key: number, value: bigint): Uint8Array => encodeStoreOffsetBody({ consumer: { kind: 'consumer', key }, offset: value });

  it('a committed value below an earlier one is a violation unless it is a replay or of unknown outcome', () => {
    const back = new OffsetChecker();
    back.committed(7n, 0, 1, Operation.StoreConsumerOffset, store(4, 10n));
    back.committed(7n, 0, 2, Operation.StoreConsumerOffset, store(4, 5n));
    expect(() => back.checkLogs()).toThrow(/op 2 stores 5 after 10 was committed/);

    const unknown = new OffsetChecker();
    unknown.committed(7n, 0, 1, Operation.StoreConsumerOffset, store(4, 10n));
    unknown.committed(7n, 0, 2, Operation.StoreConsumerOffset, store(4, 5n));
    unknown.unknown(0, 4, 5n);
    expect(() => unknown.checkLogs()).not.toThrow();

    const replay = new OffsetChecker();
    replay.committed(7n, 0, 1, Operation.StoreConsumerOffset, store(4, 10n));
    replay.committed(7n, 0, 2, Operation.StoreConsumerOffset, store(4, 20n));
    replay.committed(7n, 0, 3, Operation.DeleteConsumerOffset, encodeDeleteOffsetBody({ kind: 'consumer', key: 4 }));
    replay.committed(7n, 0, 4, Operation.StoreConsumerOffset, store(4, 10n));
    expect(() => replay.checkLogs()).not.toThrow();
  });
});

describe('the liveness check', () => {
  it('a replica cut off for good within the loss budget fails the run (convergence is owed)', () => {
    const sim = new Simulation(calmOptions(7, 3));
    const step = sim.step.bind(sim);
    // After the safety phase the network heals; re-cut replica 2 from the others on every step.
    sim.step = (): void => {
      step();
      if (sim.tick < sim.options.safetyTicks) return;
      for (const peer of [0, 1]) {
        sim.network.setBlocked(2, peer, true);
        sim.network.setBlocked(peer, 2, true);
      }
    };
    const result = sim.run();
    expect(result.ok).toBe(false);
    expect(result.failure).toMatch(/liveness: no convergence within 4000 ticks/);
    expect(result.marks['check.liveness_beyond_budget']).toBeUndefined();
  }, 120_000);

  it('a cluster stuck with more lossy replicas than the budget allows is not a liveness failure', () => {
    // Seed 100032 of 3: replica 1 refuses to boot for good (its faulty disk) after replica 0 lost a
    // journal tail it may have acknowledged in a power loss; replica 2 alone cannot vouch for the
    // ops above its log, so the merges wait for replica 1's vote forever, as they must.
    const result = new Simulation(optionsForSeed(100032, 3)).run();
    expect(result.failure).toBeNull();
    expect(result.marks['check.liveness_beyond_budget']).toBe(1);
    expect(result.marks['core.vote_lost_tail']).toBeGreaterThan(0);
  }, 120_000);

  it('a group a faulty disk cannot host counts that replica as lossy for it', () => {
    // Scripted (it was seed 72 of 3 until the boot latch moved that run): the faulty replica F's
    // partition superblocks rot while it is down (both copies), so it refuses those groups even
    // after a wipe; then the data group's primary L loses power and its partition journals (it
    // abstains until caught up). The third replica alone cannot finish a view: within the budget
    // only if F, refusing the group for good, counts as lossy for it.
    const options = calmOptions(41, 3, { faultyReplicas: 1, safetyTicks: 2500 });
    const f = stream(41, Salt.faults, 7).shuffle([0, 1, 2])[0] as number;
    const sim = new Simulation(options);
    const step = sim.step.bind(sim);
    let known: bigint | null = null;
    const dataGroup = (): bigint | null => {
      if (known !== null) return known;
      const found = sim.nodes[0]?.metadata?.state.topic(stringIdentifier(DATA_STREAM), stringIdentifier(DATA_TOPIC));
      const g = found === undefined ? null : packPartitionGroup(found.stream.id, found.topic.id, 0);
      known = g?.ok === true ? g.value : null;
      return known;
    };
    let stage = 0;
    let lossy = -1;
    sim.step = (): void => {
      step();
      const group = dataGroup();
      if (group === null || sim.tick < 400) return;
      const role = (i: number) => sim.nodes[i]?.partitions.get(group)?.driver.replica.role;
      if (stage === 0) {
        const node = sim.nodes[f] as SimNode;
        sim.faults.crash(node, 'process', 1_000_000, false);
        for (const path of node.disk.listFiles()) {
          if (path.startsWith(node.layout.streamsDir) && /\/superblock\.[ab]$/.test(path)) node.disk.corruptAtRest(path, 4, 0xff);
        }
        stage = 1;
      } else if (stage === 1) {
        const others = [0, 1, 2].filter((i) => i !== f);
        const r = role(others[0] as number);
        if (r === undefined || !r.normal || r.primaryIndex === f || !others.every((i) => role(i)?.normal === true)) return;
        lossy = r.primaryIndex;
        const node = sim.nodes[lossy] as SimNode;
        sim.faults.crash(node, 'power', 1_000_000, false);
        for (const path of node.disk.listFiles()) if (path.startsWith(node.layout.streamsDir) && path.includes(`/${PARTITION_JOURNAL_DIR}/`)) node.disk.unlink(path);
        stage = 2;
      } else if (stage === 2 && sim.tick >= 1200) {
        sim.faults.restart(f);
        sim.faults.restart(lossy);
        stage = 3;
      }
    };
    const result = sim.run();
    expect({ stage, failure: result.failure }).toEqual({ stage: 3, failure: null });
    expect(sim.nodes[f]?.refused.has(dataGroup() as bigint)).toBe(true);
    expect(result.failure).toBeNull();
    expect(result.marks['check.liveness_beyond_budget']).toBe(1);
  }, 170_000);
});
