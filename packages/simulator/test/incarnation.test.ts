/**
 * A re-created topic reuses its stream and topic ids (lowest free, as Iggy), hence its partition
 * groups' wire keys: a new incarnation of group G, empty, in view preferredPrimary(G). A replica
 * that slept through the delete and the re-create boots its metadata at the old revision and so
 * opens the OLD incarnation of G with its old log and its (higher) old view. Nothing on the
 * replica wire tells the incarnations apart. This scenario keeps that replica's metadata links
 * cut (its metadata catch-up is slow) while its partition links work, and checks that every
 * batch the new incarnation acknowledged stays there, byte for byte (docs/cluster.md,
 * "Incarnations and the boot latch").
 */
import { describe, expect, it } from 'vitest';
import {
  Operation, createTopicCommand, deleteTopicCommand, packPartitionGroup, stringIdentifier,
} from '@shoal/protocol';
import { type AckRecord, DATA_STREAM, DATA_TOPIC, Simulation, type SimNode, type WorkOp, calmOptions, sendOp, setupOps, stream } from '../src/index.js';
import { isMetadataFrame } from '../src/node.js';

interface Sent { readonly base: number; readonly messages: number; readonly frames: Uint8Array }

function scenario(seed: number) {
  const options = calmOptions(seed, 3, { clients: 1, workload: { dataPartitions: 1, metadataShare: 0, messagesMax: 3, offsetShare: 0, burst: false } });
  const queue: WorkOp[] = [];
  const acks: AckRecord[] = [];
  const cut = { node: -1 };
  const sim = new Simulation(options, {
    script: () => queue.shift() ?? null,
    forgeAck: (r) => {
      acks.push(r);
      return r;
    },
    dropReplicaFrame: (from, to, frame) => (from === cut.node || to === cut.node) && isMetadataFrame(frame),
  });
  const prng = stream(seed, 99n);
  let seq = 0;
  const until = (what: string, done: () => boolean, max = 20_000): void => {
    for (let i = 0; i < max; i++) {
      if (done()) return;
      sim.step();
    }
    throw new Error(`scenario: ${what} did not happen within ${max} ticks`);
  };
  /** Runs `work` until it succeeds (retrying an unknown outcome); returns its ack. */
  const exec = (work: WorkOp, ok: (r: AckRecord) => boolean = (r) => r.kind === 'send' || (r.kind === 'metadata' && r.code === 0)): AckRecord => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const before = acks.length;
      queue.push(work);
      until(`${work.kind} answered`, () => acks.length > before);
      const r = acks[acks.length - 1] as AckRecord;
      if (ok(r)) return r;
    }
    throw new Error(`scenario: ${work.kind} never succeeded: ${JSON.stringify(acks[acks.length - 1], (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
  };
  const send = (): Sent => {
    const work = sendOp(prng, options.workload, 0, seq++, 0);
    const r = exec(work);
    if (r.kind !== 'send') throw new Error('not a send');
    return { base: r.baseOffset, messages: r.messages, frames: r.frames };
  };
  const groupOn = (node: SimNode) => {
    const found = node.metadata?.state.topic(stringIdentifier(DATA_STREAM), stringIdentifier(DATA_TOPIC));
    if (found === undefined) return null;
    const g = packPartitionGroup(found.stream.id, found.topic.id, 0);
    return g.ok ? g.value : null;
  };
  const role = (node: SimNode, group: bigint) => node.partitions.get(group)?.driver.replica.role ?? null;
  return { sim, options, cut, until, exec, send, groupOn, role };
}

/** The new incarnation's acknowledged batches, byte for byte, on `node` (a list of problems). */
function missing(node: SimNode, group: bigint, createdRevision: bigint, sent: readonly Sent[]): string[] {
  const entry = node.partitions.get(group);
  if (entry === undefined) return [`replica ${node.index}: no driver for the group`];
  if (entry.createdRevision !== createdRevision) return [`replica ${node.index}: runs incarnation ${entry.createdRevision}, not ${createdRevision}`];
  const problems: string[] = [];
  for (const s of sent) {
    const read = entry.driver.storage.reader.byOffset(s.base, s.messages);
    const batch = read.ok ? read.value.batches[0] : undefined;
    const stored = batch === undefined ? null : (batch.parts[0] as Uint8Array).subarray(256);
    if (stored === null || batch?.firstOffset !== s.base || !equal(stored, s.frames)) problems.push(`replica ${node.index}: acknowledged batch at ${s.base} lost`);
  }
  return problems;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

describe('a re-created partition group (same wire key, new incarnation)', () => {
  it('a replica that slept through the re-create, with slow metadata catch-up, never rewrites the new incarnation', () => {
    const { sim, cut, until, exec, send, groupOn, role } = scenario(7);
    sim.start();
    const [setupStream, setupTopic] = setupOps({ dataPartitions: 1, metadataShare: 0, messagesMax: 3, offsetShare: 0, burst: false }) as [WorkOp, WorkOp];
    exec(setupStream);
    exec(setupTopic);
    const nodes = sim.nodes;
    until('the group opened everywhere', () => nodes.every((n) => { const g = groupOn(n); return g !== null && role(n, g)?.status === 'normal'; }));
    const group = groupOn(nodes[0] as SimNode) as bigint;
    for (let i = 0; i < 3; i++) send();

    // Inflate the old incarnation's view: kill its primary a few times (each restart catches up).
    for (let round = 0; round < 4; round++) {
      const view = role(nodes[0] as SimNode, group)?.view ?? 0;
      const primary = view % 3;
      sim.faults.crash(nodes[primary] as SimNode, 'process', 1_000_000, false);
      const others = nodes.filter((n) => n.index !== primary);
      until('a failover', () => others.every((n) => { const r = role(n, group); return r !== null && r.status === 'normal' && r.view > view; }));
      send();
      sim.faults.restart(primary);
      until('the restarted replica caught up', () => nodes.every((n) => {
        const r = role(n, group);
        const m = n.metadata?.replica.role;
        return r !== null && r.status === 'normal' && r.commitMin === r.commitMax && m !== undefined && m.normal && m.commitMin === m.commitMax;
      }));
    }
    const oldView = role(nodes[0] as SimNode, group)?.view ?? 0;
    expect(oldView).toBeGreaterThanOrEqual(4);
    const oldRevision = (nodes[0] as SimNode).partitions.get(group)?.createdRevision ?? 0n;

    // X (not the primary) sleeps; the others delete and re-create the topic: same ids, same key.
    const x = (oldView + 1) % 3;
    sim.faults.crash(nodes[x] as SimNode, 'process', 1_000_000, false);
    const streamId = stringIdentifier(DATA_STREAM);
    exec({ kind: 'delete_topic', operation: Operation.DeleteTopic, body: deleteTopicCommand.encodeRequest({ streamId, topicId: stringIdentifier(DATA_TOPIC) }) });
    exec({
      kind: 'create_topic', operation: Operation.CreateTopic,
      body: createTopicCommand.encodeRequest({ streamId, partitionsCount: 1, name: DATA_TOPIC, options: [] }),
    });
    const live = nodes.filter((n) => n.index !== x);
    until('the new incarnation opened', () => live.every((n) => {
      const e = n.partitions.get(group);
      return e !== undefined && e.createdRevision !== oldRevision && e.driver.replica.role.status === 'normal';
    }));
    expect(groupOn(live[0] as SimNode)).toBe(group);
    const newRevision = (live[0] as SimNode).partitions.get(group)?.createdRevision as bigint;
    sim.checker.sends.clear(); // (its disjoint-offsets check knows one incarnation per partition id)
    const sent: Sent[] = [];
    for (let i = 0; i < 3; i++) sent.push(send());
    const newView = role(live[0] as SimNode, group)?.view ?? 0;
    expect(newView).toBeLessThan(oldView);

    // X comes back with its metadata links cut (its partition links work).
    cut.node = x;
    sim.faults.restart(x);
    const xn = nodes[x] as SimNode;
    // Its metadata names the old incarnation: a host that opened its groups now would run old G.
    const stale = [...(xn.metadata?.state.partitions() ?? [])].find((r) => r.consensusGroupId === group);
    expect(stale?.createdRevision).toBe(oldRevision);
    for (let i = 0; i < 1500; i++) sim.step();
    expect(xn.metadata?.state.revision).toBeLessThan((live[0] as SimNode).metadata?.state.revision ?? 0n);
    const latched = { latched: xn.latched, groups: xn.partitions.size };
    const during = live.flatMap((n) => missing(n, group, newRevision, sent));

    // Heal: X's metadata catches up, reconcile replaces its old incarnation.
    cut.node = -1;
    until('converged', () => nodes.every((n) => {
      const e = n.partitions.get(group);
      const m = n.metadata?.replica.role;
      return e !== undefined && e.createdRevision === newRevision && e.driver.replica.role.status === 'normal'
        && e.driver.replica.role.commitMin === e.driver.replica.role.commitMax && m !== undefined && m.normal && m.commitMin === m.commitMax;
    }));
    for (let i = 0; i < 200; i++) sim.step();
    const after = nodes.flatMap((n) => missing(n, group, newRevision, sent));
    expect({ during, after }).toEqual({ during: [], after: [] });
    // The boot latch held X's groups closed while its metadata was behind, and opened once it was current.
    expect(latched).toEqual({ latched: true, groups: 0 });
    expect(xn.latched).toBe(false);
  }, 120_000);
});
