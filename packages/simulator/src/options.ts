/**
 * Run parameters. `optionsForSeed` draws them from the seed's own `options` stream (swarm
 * testing: every seed runs a different mix of fault rates), so one seed fixes everything.
 */
import { NO_FAULTS, type SimDiskFaults } from '@shoal/storage';
import { CLEAN_NETWORK, type NetworkFaults } from './network.js';
import { Salt, stream } from './random.js';
import type { WorkloadOptions } from './workload.js';

export interface SimulationOptions {
  readonly seed: number;
  readonly replicas: number;
  readonly clients: number;
  /** Ticks of the safety phase (faults on). */
  readonly safetyTicks: number;
  /** Ticks the liveness phase may take to converge before the seed fails. */
  readonly livenessTicks: number;
  readonly network: NetworkFaults;
  /** Per tick: probability to start a network partition / to heal the current one. */
  readonly partitionProbability: number;
  readonly unpartitionProbability: number;
  /** Per tick: probability to crash a replica (within the unsafe-replica bound). */
  readonly crashProbability: number;
  /** Mean ticks a crashed replica stays down. */
  readonly downMeanTicks: number;
  /** Disk faults of the faulty replicas (at most f of them; the others get none). */
  readonly diskFaults: SimDiskFaults;
  readonly faultyReplicas: number;
  /** Mean extra ticks before a durable-write completion is delivered (disk latency). */
  readonly diskLatencyMeanTicks: number;
  readonly workload: WorkloadOptions;
  /** Partition storage: fdatasync (and a frontier record) once this many messages are unsynced. */
  readonly messagesRequiredToSave: number;
  /** Ticks between watermark samples. */
  readonly sampleEveryTicks: number;
}

export function faultTolerance(replicas: number): number {
  return Math.floor((replicas - 1) / 2);
}

/** A calm run: no faults at all (tests, benchmarks). */
export function calmOptions(seed: number, replicas: number, overrides: Partial<SimulationOptions> = {}): SimulationOptions {
  return {
    seed,
    replicas,
    clients: 4,
    safetyTicks: 2000,
    livenessTicks: 4000,
    network: CLEAN_NETWORK,
    partitionProbability: 0,
    unpartitionProbability: 1,
    crashProbability: 0,
    downMeanTicks: 200,
    diskFaults: NO_FAULTS,
    faultyReplicas: 0,
    diskLatencyMeanTicks: 0,
    workload: { dataPartitions: 2, metadataShare: 0.3, messagesMax: 4 },
    messagesRequiredToSave: 1024,
    sampleEveryTicks: 10,
    ...overrides,
  };
}

/** The seed's own mix of fault rates (swarm testing). */
export function optionsForSeed(seed: number, replicas = 3, overrides: Partial<SimulationOptions> = {}): SimulationOptions {
  const p = stream(seed, Salt.options);
  const pick = <T>(items: readonly T[]): T => p.pick(items);
  const f = faultTolerance(replicas);
  return calmOptions(seed, replicas, {
    clients: p.range(2, 6),
    safetyTicks: p.range(1500, 3000),
    livenessTicks: 6000,
    network: {
      delayMinTicks: 1,
      delayMeanTicks: pick([1, 2, 3, 5]),
      lossProbability: pick([0, 0.01, 0.03, 0.08]),
      duplicateProbability: pick([0, 0.01, 0.05]),
      corruptProbability: pick([0, 0.001, 0.01]),
      linkCapacity: pick([16, 64, 256]),
      fifoLinks: pick([false, false, true]),
    },
    partitionProbability: pick([0, 0.001, 0.005]),
    unpartitionProbability: pick([0.005, 0.02, 0.05]),
    crashProbability: replicas === 1 ? pick([0, 0.001]) : pick([0, 0.001, 0.003, 0.006]),
    downMeanTicks: pick([50, 200, 600]),
    faultyReplicas: f === 0 ? 0 : p.range(0, f),
    diskFaults: {
      tornWriteProbability: pick([0, 0.3, 0.7]),
      unsyncedPersistProbability: pick([0, 0.2, 0.5]),
      readBitFlipProbability: pick([0, 0.0005, 0.002]),
      misdirectedWriteProbability: pick([0, 0, 0.0002]),
    },
    diskLatencyMeanTicks: pick([0, 0, 1, 3]),
    workload: { dataPartitions: p.range(1, 3), metadataShare: pick([0.15, 0.3, 0.5]), messagesMax: p.range(1, 6) },
    messagesRequiredToSave: pick([1, 8, 64, 1024]),
    ...overrides,
  });
}
