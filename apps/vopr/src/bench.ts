/**
 * `vopr --bench`: simulator speed. A calm 3-replica cluster (no faults) under a heavy workload:
 * simulated committed operations per wall-clock second, and the CPU µs the PRIMARY's production
 * code (drivers, core, state machines, storage on SimDisk) spends per committed op, excluding the
 * network simulation, the clients and the checkers.
 */
import { performance } from 'node:perf_hooks';
import { Simulation, calmOptions, type SimNode } from '@shoal/simulator';

export interface BenchResult {
  readonly replicas: number;
  readonly ticks: number;
  readonly committedOps: number;
  readonly seconds: number;
  readonly opsPerSecond: number;
  readonly primaryMicrosPerOp: number;
}

export function bench(replicas = 3, ticks = 3000, clients = 48, seed = 1): BenchResult {
  const sim = new Simulation(calmOptions(seed, replicas, {
    clients,
    safetyTicks: ticks,
    livenessTicks: 2000,
    workload: { dataPartitions: 4, metadataShare: 0.02, messagesMax: 4, offsetShare: 0.125, burst: false },
  }));
  // Time the primary node's own work (its deliveries and its tick, flushes included).
  let primaryMs = 0;
  const primary = sim.nodes[0] as SimNode;
  const deliver = primary.deliver.bind(primary);
  const tick = primary.tick.bind(primary);
  primary.deliver = (from: number, frame: Uint8Array): void => {
    const t0 = performance.now();
    deliver(from, frame);
    primaryMs += performance.now() - t0;
  };
  primary.tick = (): void => {
    const t0 = performance.now();
    tick();
    primaryMs += performance.now() - t0;
  };
  const started = performance.now();
  const result = sim.run();
  const seconds = (performance.now() - started) / 1000;
  if (!result.ok) throw new Error(`bench run failed: ${result.failure ?? ''}`);
  return {
    replicas,
    ticks: result.ticks,
    committedOps: result.committedOps,
    seconds,
    opsPerSecond: result.committedOps / seconds,
    primaryMicrosPerOp: (primaryMs * 1000) / Math.max(1, result.committedOps),
  };
}
