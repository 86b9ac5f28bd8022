/**
 * What a host says about an inbound frame (ingress.ts): a frame whose buffer the host hands over
 * is journaled as is, any other is copied; a frame the host did not validate is validated here.
 */
import { describe, expect, it } from 'vitest';
import { Command, PrepareHeaderView } from '@shoal/protocol';
import { UNCHECKED_INGRESS, type FrameIngress } from '../src/index.js';
import { coreOf } from '../src/testing.js';
import { Cluster } from '../../../test/scenario/support/cluster.js';
import { fakeBatch } from './support/state-machines.js';

const prepareView = new PrepareHeaderView();

/** A 3-replica partition cluster whose first prepare to replica 1 was held back, and that prepare. */
function heldPrepare(): { cluster: Cluster; frame: Uint8Array } {
  const cluster = new Cluster({ replicas: 3, plane: 'partition' });
  let held: Uint8Array | null = null;
  cluster.filters.push((m) => {
    if (m.command !== Command.Prepare || m.from !== 0 || m.to !== 1) return false;
    held ??= m.frame.slice();
    return true;
  });
  cluster.request(0, { client: 1n, request: 1n, body: fakeBatch('one') });
  cluster.run(3);
  cluster.filters.length = 0;
  if (held === null) throw new Error('no prepare was sent to replica 1');
  return { cluster, frame: held };
}

function backup(cluster: Cluster): { onMessage(frame: Uint8Array, ingress?: FrameIngress): string | null } {
  const node = cluster.nodes[1];
  if (node === undefined) throw new Error('no replica 1');
  return node.r;
}

describe('frame ingress', () => {
  it('a prepare whose buffer is handed over is journaled without a copy', () => {
    const { cluster, frame } = heldPrepare();
    expect(prepareView.bind(frame, 0).opNumber).toBe(1);
    expect(backup(cluster).onMessage(frame, { validated: true, owned: true })).toBeNull();
    const entry = coreOf(cluster.nodes[1]!.r).journal.get(1);
    expect(entry?.frame).toBe(frame);
  });

  it('a prepare the host keeps is copied: later writes to its buffer do not reach the journal', () => {
    const { cluster, frame } = heldPrepare();
    const before = frame.slice();
    expect(backup(cluster).onMessage(frame, { validated: true, owned: false })).toBeNull();
    frame.fill(0xee);
    const entry = coreOf(cluster.nodes[1]!.r).journal.get(1);
    expect(entry?.frame).not.toBe(frame);
    expect(entry?.frame).toEqual(before);
  });

  it('a frame the host did not validate is validated by the core (a damaged identity is dropped)', () => {
    const { cluster, frame } = heldPrepare();
    const damaged = frame.slice();
    damaged[5] = (damaged[5] as number) ^ 0x01;
    expect(backup(cluster).onMessage(damaged)).toBe('prepare_identity_mismatch');
    expect(backup(cluster).onMessage(damaged, UNCHECKED_INGRESS)).toBe('prepare_identity_mismatch');
    expect(coreOf(cluster.nodes[1]!.r).journal.has(1)).toBe(false);
    // The intact frame, same path, is taken (the drop was the damage, not the schedule).
    expect(backup(cluster).onMessage(frame)).toBeNull();
    expect(coreOf(cluster.nodes[1]!.r).journal.has(1)).toBe(true);
  });
});
