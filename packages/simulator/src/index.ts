/**
 * @shoal/simulator: the deterministic cluster simulator, built from the production replica driver,
 * the real state machines and storage on SimDisk. See docs/simulator.md.
 */
export { Simulation, type SimulationResult, type SimulationHooks } from './simulation.js';
export { type SimulationOptions, type Profile, optionsForSeed, profileForSeed, calmOptions, faultTolerance } from './options.js';
export { Network, CLEAN_NETWORK, PEER_QUEUE_CAPACITY, type NetworkFaults, type Packet, type NetworkStats } from './network.js';
export { SimNode, type NodeEnv } from './node.js';
export { NodeGateway, type NodeGatewayPorts } from './node-gateway.js';
export { SimClient, type AckRecord, type ClientEnv } from './client.js';
export { Checker, SafetyViolation, summarise } from './checker.js';
export { AckOracle, type Suspect } from './ack-oracle.js';
export { ShadowModel, type Prediction } from './shadow.js';
export { TraceHash } from './trace.js';
export { stream, mix64, Salt, exponential } from './random.js';
export { type WorkOp, type WorkloadOptions, DATA_STREAM, DATA_TOPIC, nextOp, sendOp, setupOps } from './workload.js';
export { Faults, LONG_PARTITION_TICKS, type CrashKind } from './faults.js';
export { type Activity, activities, busyWithLiveSource } from './activity.js';
export { Marks, MarkTally, EXPECTED_MARKS, coreMarkOfEvent, type MarkInfo } from './marks.js';
export { OffsetChecker } from './offsets.js';
export { Timeline, BUCKET_TICKS, type TimelineData } from './timeline.js';
