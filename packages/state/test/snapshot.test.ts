import {
  Operation, createConsumerGroupCommand, createPersonalAccessTokenCommand, joinConsumerGroupCommand, updatePermissionsCommand,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import { encodeSnapshot, restoreSnapshot, unpackForTest } from './snapshot-support.js';
import { Harness, id } from './harness.js';

function history(h: Harness, seed: number): void {
  const prng = new Prng(seed);
  h.createStream('orders');
  h.createStream('payments');
  h.createTopic(0, 'eu', 3);
  h.createTopic(1, 'us', 2);
  h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'workers' }));
  for (const client of [7n, 8n, (1n << 100n) + 5n]) {
    h.run(Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }), 0, client, { inFlight: [2] });
  }
  const uid = h.createUser('alice', null);
  h.run(Operation.UpdatePermissions, updatePermissionsCommand.encodeRequest({ userId: id(uid), permissions: {
    global: { manageServers: false, readServers: true, manageUsers: false, readUsers: false, manageStreams: false, readStreams: true, manageTopics: false, readTopics: false, pollMessages: true, sendMessages: false },
    streams: [{ streamId: 1, manageStream: false, readStream: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: true, topics: [{ topicId: 0, manageTopic: true, readTopic: true, pollMessages: false, sendMessages: false }] }],
  } }));
  h.run(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'ci-token', expiry: BigInt(prng.below(1000)) * 1_000_000n }), uid);
  h.run(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'forever', expiry: 0n }), 0);
}

const CLIENT_TABLE = [[[0, [new Uint8Array(16).fill(1), 5, 1, 3, new Uint8Array(16), new Uint8Array([8, 0, 0])]]]];

describe('snapshot.bin payload (format 3)', () => {
  it('two instances fed the same history produce byte-identical snapshots', () => {
    const a = Harness.withRoot();
    const b = Harness.withRoot();
    history(a, 9);
    history(b, 9);
    const input = { sequenceNumber: a.op, createdAt: 1_700_000_000_123_456n, clientTable: CLIENT_TABLE };
    expect(encodeSnapshot(a.state, input)).toEqual(encodeSnapshot(b.state, input));
  });

  it('round-trips: restore then encode gives the same bytes, and the restored state keeps working', () => {
    const h = Harness.withRoot();
    history(h, 3);
    const bytes = encodeSnapshot(h.state, { sequenceNumber: h.op, createdAt: 42n, clientTable: CLIENT_TABLE });
    const restored = restoreSnapshot(bytes);
    if (!restored.ok) throw new Error(restored.reason);
    expect(restored.value.sequenceNumber).toBe(h.op);
    expect(restored.value.createdAt).toBe(42n);
    expect(restored.value.clientTable).toEqual([[[0, [new Uint8Array(16).fill(1), 5, 1, 3, new Uint8Array(16), new Uint8Array([8, 0, 0])]]]]);
    expect(encodeSnapshot(restored.value.state, { sequenceNumber: h.op, createdAt: 42n, clientTable: CLIENT_TABLE })).toEqual(bytes);
    // The restored replica continues the history exactly like the original.
    const twin = new Harness(restored.value.state);
    twin.op = h.op;
    twin.timestamp = h.timestamp;
    h.createTopic(0, 'late', 2);
    twin.createTopic(0, 'late', 2);
    expect(encodeSnapshot(twin.state, { sequenceNumber: twin.op, createdAt: 1n, clientTable: null }))
      .toEqual(encodeSnapshot(h.state, { sequenceNumber: h.op, createdAt: 1n, clientTable: null }));
    expect(twin.state.verifyPersonalAccessToken('nope', 0n)).toEqual({ ok: false, code: 53 });
  });

  it('follows the positional layout: version 3 first, seven elements, u128 as bin 16 big-endian, compact integers', () => {
    const h = Harness.withRoot();
    history(h, 1);
    const bytes = encodeSnapshot(h.state, { sequenceNumber: 7n, createdAt: 1n << 40n, clientTable: null });
    expect(bytes[0]).toBe(0x97);
    expect(bytes[1]).toBe(0x03);
    expect([...bytes.subarray(2, 11)]).toEqual([0xcf, 0, 0, 1, 0, 0, 0, 0, 0]);
    expect(bytes[11]).toBe(0x07);
    const root = unpackForTest(bytes) as unknown[];
    const streams = root[4] as unknown[];
    const topic = (((streams[0] as unknown[])[0] as unknown[])[1] as unknown[])[4] as unknown[];
    const member = (((((topic[0] as unknown[])[1] as unknown[])[8] as unknown[])[0] as unknown[])[1] as unknown[])[3] as unknown[];
    const third = (member[2] as unknown[])[1] as unknown[];
    expect([...(third[1] as Uint8Array)]).toEqual([0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5]);
  });

  it('refuses any other version and malformed payloads with a reason', () => {
    const h = Harness.withRoot();
    const good = encodeSnapshot(h.state, { sequenceNumber: 1n, createdAt: 1n, clientTable: null });
    const v2 = good.slice();
    v2[1] = 2;
    expect(restoreSnapshot(v2)).toEqual({ ok: false, reason: 'snapshot_version_unsupported' });
    expect(restoreSnapshot(new Uint8Array([0xc1])).ok).toBe(false);
    expect(restoreSnapshot(good.subarray(0, good.length - 3)).ok).toBe(false);
    expect(restoreSnapshot(new Uint8Array([0x93, 0x03, 0x00, 0x00])).ok).toBe(false);
  });
});
