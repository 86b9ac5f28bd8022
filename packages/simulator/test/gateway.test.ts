/**
 * The simulated nodes front their drivers with the production client gateway (@shoal/gateway):
 * every client request of a run passes its checks, and a frame it refuses is refused in the
 * simulator exactly as on a server.
 */
import { describe, expect, it } from 'vitest';
import { CommandCode, Operation, encodeRequestFrame } from '@shoal/protocol';
import { Simulation, calmOptions, type SimNode } from '../src/index.js';

function requestsOf(nodes: readonly SimNode[], code: number): number {
  let total = 0;
  for (const node of nodes) total += node.gateway?.gateway.counters.requests.get(code) ?? 0;
  return total;
}

describe('simulated nodes run the production gateway', () => {
  it('logins, metadata writes and batches of a run go through the gateways, and a legacy login is evicted by one', () => {
    let logins = 0;
    let creates = 0;
    let sends = 0;
    let evictions = 0;
    const r = new Simulation(calmOptions(41, 3, { safetyTicks: 800 }), {
      beforeFinalChecks: (sim) => {
        logins = requestsOf(sim.nodes, CommandCode.LoginRegister);
        creates = requestsOf(sim.nodes, CommandCode.CreateStream);
        sends = requestsOf(sim.nodes, CommandCode.SendMessages);
        const node = sim.nodes.find((n) => n.gateway !== null) as SimNode;
        const gateway = node.gateway?.gateway;
        const before = gateway?.counters.evictions ?? 0;
        // On client 0's connection, for another client id: that session stays bound.
        const legacy = encodeRequestFrame({ client: 5n, operation: Operation.NonReplicated, nonReplicatedCode: CommandCode.LoginUser, request: 0n, session: 0n, timestamp: 1n }, new Uint8Array(0));
        node.deliver(sim.options.replicas, legacy);
        evictions = (gateway?.counters.evictions ?? 0) - before;
      },
    }).run();
    expect(r.failure).toBeNull();
    expect(logins).toBeGreaterThan(0);
    expect(creates).toBeGreaterThan(0);
    expect(sends).toBeGreaterThan(0);
    expect(evictions).toBe(1); // Eviction 15 MalformedLogin: the gateway's rule for a legacy login
  }, 60_000);
});
