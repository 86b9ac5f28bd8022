/**
 * Run parameters. `optionsForSeed` draws them from the seed's own `options` stream (swarm
 * testing: every seed runs a different mix of fault rates), so one seed fixes everything.
 */
import { NO_FAULTS, type SimDiskFaults } from '@shoal/storage';
import { CLEAN_NETWORK, type NetworkFaults, PEER_QUEUE_CAPACITY } from './network.js';
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
  /** Of the partitions started at random, the share held long (`longPartitionTicks`..2x). */
  readonly longPartitionShare: number;
  /** A long partition's minimum (≥ 2,000 ticks reaches the blind and short-log votes). */
  readonly longPartitionTicks: number;
  /** Per tick: probability to crash a random up replica (within the loss budget, faults.ts). */
  readonly crashProbability: number;
  /** Of the crashes, the share that are power losses (the rest: process kills). */
  readonly powerShare: number;
  /** Per tick: probability to crash a replica that is repairing or transferring state, if any. */
  readonly targetedCrashProbability: number;
  /** Per tick: probability to start a rolling restart (one at a time). */
  readonly rollingRestartProbability: number;
  /** Per tick: probability to crash a replica and, while it catches up, isolate another for long. */
  readonly isolateAfterRestartProbability: number;
  /** Per tick: probability to kill every replica at once (only when no kill can lose an ack). */
  readonly clusterKillProbability: number;
  /** Per tick: probability to pause a replica's process (it neither runs nor reads). */
  readonly pauseProbability: number;
  readonly pauseMeanTicks: number;
  /** Mean ticks a crashed replica stays down. */
  readonly downMeanTicks: number;
  /**
   * After the safety phase: 'none' heals everything; 'permanent' keeps f replicas down for good
   * (the rest must make progress and converge); 'restored' does the same, then brings them back.
   */
  readonly degraded: 'none' | 'permanent' | 'restored';
  /** Ticks the clients keep working with f replicas down, once they made progress. */
  readonly degradedTicks: number;
  /** Disk faults of the faulty replicas (at most f of them; the others get none). */
  readonly diskFaults: SimDiskFaults;
  readonly faultyReplicas: number;
  /** Per tick: probability that a faulty replica's disk fails its next 1–3 writes (EIO / ENOSPC). */
  readonly diskErrorProbability: number;
  /** Mean extra ticks before a durable-write completion is delivered (disk latency). */
  readonly diskLatencyMeanTicks: number;
  readonly workload: WorkloadOptions;
  /** Partition storage: fdatasync (and a frontier record) once this many messages are unsynced. */
  readonly messagesRequiredToSave: number;
  /**
   * Partition groups' prepare pipeline depth (`partition.prepare_queue_depth`, production 32). A
   * shallow one fills under the workload, so requests queue in the core and are group-committed.
   */
  readonly partitionPipelineDepth: number;
  /**
   * Group commit's wait depth on partition groups (`partition.group_commit_wait_depth`,
   * production 4; capped at the pipeline depth): from it on, requests wait in the core's queue to
   * be joined even behind a pipeline with free slots.
   */
  readonly partitionGroupWaitDepth: number;
  /**
   * Partition frontier work on a disk thread (`partition.async_frontier`, production true): each
   * node's frontier jobs wait in a DeferredDiskQueue that its ticks run at random, and a crash or
   * kill drops what is still queued. False: inline, as before it existed.
   */
  readonly asyncFrontier: boolean;
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
    longPartitionShare: 0,
    longPartitionTicks: 2500,
    crashProbability: 0,
    powerShare: 0.5,
    targetedCrashProbability: 0,
    rollingRestartProbability: 0,
    isolateAfterRestartProbability: 0,
    clusterKillProbability: 0,
    pauseProbability: 0,
    pauseMeanTicks: 300,
    downMeanTicks: 200,
    degraded: 'none',
    degradedTicks: 1500,
    diskFaults: NO_FAULTS,
    faultyReplicas: 0,
    diskErrorProbability: 0,
    diskLatencyMeanTicks: 0,
    workload: { dataPartitions: 2, metadataShare: 0.3, messagesMax: 4, offsetShare: 0.125, burst: false },
    messagesRequiredToSave: 1024,
    partitionPipelineDepth: 32,
    partitionGroupWaitDepth: 4,
    asyncFrontier: true,
    sampleEveryTicks: 10,
    ...overrides,
  };
}

/**
 * A seed's fault profile (drawn first, so the mix is one knob):
 *   classic   the original mix: short runs, random crashes and short partitions (now overlapping)
 *   overlap   crashes on top of crashes: rolling restarts, crashes of recovering replicas and of
 *             replicas in repair or state transfer, whole-cluster kills where they are safe
 *   long      a crash, then a long partition while the restarted replica catches up: view
 *             changes stalled past every fallback voting stage (longer runs)
 *   wide      64–96 partition groups, many clients sending in bursts, slow links: per-peer
 *             queue overruns
 */
export type Profile = 'classic' | 'overlap' | 'long' | 'wide';

export function profileForSeed(seed: number): Profile {
  const r = stream(seed, Salt.options, 1).below(100);
  if (r < 50) return 'classic';
  if (r < 75) return 'overlap';
  if (r < 92) return 'long';
  return 'wide';
}

/** The seed's own mix of fault rates (swarm testing). */
export function optionsForSeed(seed: number, replicas = 3, overrides: Partial<SimulationOptions> = {}): SimulationOptions {
  const p = stream(seed, Salt.options);
  const pick = <T>(items: readonly T[]): T => p.pick(items);
  const f = faultTolerance(replicas);
  const profile = profileForSeed(seed);
  const wide = profile === 'wide';
  const long = profile === 'long';
  const overlap = profile === 'overlap';
  const base = calmOptions(seed, replicas, {
    clients: wide ? p.range(8, 12) : p.range(2, 6),
    safetyTicks: long ? p.range(4500, 6000) : overlap ? p.range(2500, 4000) : wide ? p.range(1200, 2000) : p.range(1500, 3000),
    livenessTicks: 6000,
    network: {
      delayMinTicks: 1,
      delayMeanTicks: pick([1, 2, 3, 5]),
      lossProbability: pick([0, 0.01, 0.03, 0.08]),
      duplicateProbability: pick([0, 0.01, 0.05]),
      corruptProbability: pick([0, 0.001, 0.01]),
      linkCapacity: pick([16, 64, 256]),
      fifoLinks: pick([false, false, true]),
      peerQueueCapacity: pick([PEER_QUEUE_CAPACITY, PEER_QUEUE_CAPACITY, 160]),
      linkBytesPerTick: wide ? pick([4 * 1024, 8 * 1024, 16 * 1024]) : pick([0, 0, 64 * 1024, 16 * 1024]),
    },
    partitionProbability: long ? pick([0.0005, 0.001]) : pick([0, 0.001, 0.005]),
    unpartitionProbability: pick([0.005, 0.02, 0.05]),
    longPartitionShare: long ? 0.5 : overlap ? pick([0, 0.1]) : 0,
    longPartitionTicks: pick([2200, 2400, 2600]),
    crashProbability: replicas === 1 ? pick([0, 0.001]) : overlap ? pick([0.003, 0.006, 0.01]) : long ? pick([0, 0.0005]) : pick([0, 0.001, 0.003, 0.006]),
    powerShare: pick([0.25, 0.5, 0.75]),
    targetedCrashProbability: overlap ? pick([0.002, 0.01, 0.03]) : profile === 'classic' ? pick([0, 0, 0.002]) : 0,
    rollingRestartProbability: overlap ? pick([0, 0.0005, 0.001]) : 0,
    isolateAfterRestartProbability: long ? pick([0.0005, 0.001, 0.002]) : 0,
    clusterKillProbability: overlap ? pick([0, 0.0003]) : 0,
    pauseProbability: wide ? pick([0.001, 0.002]) : long ? 0 : pick([0, 0, 0.0005, 0.001]),
    pauseMeanTicks: wide ? pick([400, 800]) : pick([100, 300, 600]),
    downMeanTicks: pick([50, 200, 600]),
    degraded: f === 0 ? 'none' : pick(['none', 'none', 'none', 'permanent', 'permanent', 'restored']),
    degradedTicks: p.range(200, 600),
    faultyReplicas: f === 0 ? 0 : p.range(0, f),
    diskErrorProbability: pick([0, 0, 0.0005, 0.002]),
    diskFaults: {
      tornWriteProbability: pick([0, 0.3, 0.7]),
      unsyncedPersistProbability: pick([0, 0.2, 0.5]),
      readBitFlipProbability: pick([0, 0.0005, 0.002]),
      misdirectedWriteProbability: pick([0, 0, 0.0002]),
    },
    diskLatencyMeanTicks: overlap || wide ? pick([0, 1, 3, 10]) : pick([0, 0, 1, 3]),
    workload: {
      dataPartitions: wide ? p.range(64, 80) : p.range(1, 3),
      metadataShare: wide ? 0.1 : pick([0.15, 0.3, 0.5]),
      messagesMax: p.range(1, 6),
      offsetShare: pick([0.1, 0.2, 0.3]),
      burst: wide,
    },
    messagesRequiredToSave: pick([1, 8, 64, 1024]),
    // Drawn last: the draws above (and so every earlier seed's mix) stay as they were.
    partitionPipelineDepth: pick([32, 4, 2]),
    partitionGroupWaitDepth: pick([4, 1, 2, 32]),
    asyncFrontier: p.bool(),
  });
  return { ...base, ...overrides };
}
