import {
  CommandCode, ErrorCode, Operation, createConsumerGroupCommand, createPersonalAccessTokenCommand, createUserCommand,
  getClientCommand, getMeCommand, getStatsCommand, getClusterMetadataCommand, joinConsumerGroupCommand, syncConsumerGroupCommand,
  changePasswordCommand,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import { type HostStats, MetadataState, answerRead, buildRootUserCreateBody, encodeCompleteRevocation, encodeSnapshot } from '../src/index.js';
import { Harness, fakeHash, id } from './harness.js';

const HOST_STATS: HostStats = {
  processId: 1, cpuUsage: 0, totalCpuUsage: 0, memoryUsage: 0n, totalMemory: 0n, availableMemory: 0n, runTime: 0n, startTime: 0n,
  readBytes: 0n, writtenBytes: 0n, clientsCount: 1, hostname: 'h', osName: 'linux', osVersion: '6', kernelVersion: '6',
  iggyServerVersion: '0.11.0', iggyServerSemver: 0, cacheMetrics: [], threadsCount: 1, freeDiskSpace: 0n, totalDiskSpace: 0n,
};

describe('determinism', () => {
  it('the same inputs twice give the same outputs, op by op and in the final snapshot', () => {
    const run = () => {
      const h = Harness.withRoot();
      const prng = new Prng(77);
      const outputs: string[] = [];
      h.createStream('s');
      h.createTopic(0, 't', 4);
      h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g' }));
      for (let i = 0; i < 50; i++) {
        const client = BigInt(1 + prng.below(5));
        const step = h.run(Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }), 0, client, { inFlight: [prng.below(4)] });
        outputs.push(JSON.stringify(step.outcome, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? [...v] : v)));
        if (prng.chance(1, 3)) h.state.logout(BigInt(1 + prng.below(5)));
      }
      return { outputs, snapshot: encodeSnapshot(h.state, { sequenceNumber: h.op, createdAt: 1n, clientTable: null }) };
    };
    const a = run();
    const b = run();
    expect(a.outputs).toEqual(b.outputs);
    expect(a.snapshot).toEqual(b.snapshot);
  });

  it('apply refuses ops out of order (an invariant, not input)', () => {
    const s = new MetadataState();
    s.apply({ op: 5n, operation: Operation.CreateStream, body: new Uint8Array(0), timestamp: 1n, userId: 0, client: 1n });
    expect(() => s.apply({ op: 5n, operation: Operation.CreateStream, body: new Uint8Array(0), timestamp: 1n, userId: 0, client: 1n })).toThrow();
  });
});

describe('root bootstrap, login support and host-fed reads', () => {
  it('the bootstrap CreateUser makes root (id 0, all permissions) only while no user exists', () => {
    const h = new Harness();
    const { operation, body } = buildRootUserCreateBody('admin', fakeHash('s3cret'));
    const out = h.apply(operation, body, 0, 0n);
    expect(out.ok).toBe(true);
    expect(h.state.user(0)?.permissions?.global.manageServers).toBe(true);
    expect(h.apply(operation, body, 0, 0n).code).toBe(ErrorCode.UserAlreadyExists);
    expect(h.state.verifyLoginTarget('admin')).toEqual({ ok: true, userId: 0, active: true, passwordHash: '$test$s3cret' });
    expect(h.state.verifyLoginTarget('ghost')).toEqual({ ok: false, code: ErrorCode.InvalidCredentials });
  });

  it('passwords are stored as the host hash; ChangePassword needs the host verdict', () => {
    const h = Harness.withRoot();
    const uid = h.createUser('dave', null, 'first-pass');
    expect(h.state.user(uid)?.passwordHash).toBe('$test$first-pass');
    expect(h.code(Operation.ChangePassword, changePasswordCommand.encodeRequest({ userId: id(uid), currentPassword: 'first-pass', newPassword: 'second-pass' }), uid)).toBe(0);
    expect(h.state.user(uid)?.passwordHash).toBe('$test$second-pass');
    expect(createUserCommand.decodeRequest(createUserCommand.encodeRequest({ username: 'x'.repeat(3), password: 'p', status: 1, permissions: null, options: [] })).ok).toBe(true);
  });

  it('PAT: raw token returned once, stored hashed, login by token with expiry against the caller clock', () => {
    const h = Harness.withRoot();
    const step = h.run(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'short', expiry: 1_000_000n }));
    if (step.outcome === null || !step.outcome.ok) throw new Error('create pat');
    const token = createPersonalAccessTokenCommand.decodeResponse(step.outcome.payload);
    if (!token.ok) throw new Error(token.reason);
    const stored = h.state.user(0)?.tokens.get('short');
    expect(stored?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.tokenHash).not.toContain(token.value.token);
    expect(h.state.verifyPersonalAccessToken(token.value.token, h.timestamp)).toEqual({ ok: true, userId: 0 });
    expect(h.state.verifyPersonalAccessToken(token.value.token, h.timestamp + 2_000_000n)).toEqual({ ok: false, code: ErrorCode.PersonalAccessTokenExpired });
    expect(h.state.expiredTokens(h.timestamp + 2_000_000n)).toEqual([{ userId: 0, name: 'short' }]);
    // An expired token neither blocks its name nor counts.
    h.timestamp += 5_000_000n;
    expect(h.code(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'short', expiry: 0n }))).toBe(0);
  });

  it('GetMe / GetClient report memberships; Sync returns generation and pollable partitions; logout leaves groups', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    h.createTopic(0, 't', 3);
    h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g' }));
    const join = joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) });
    h.run(Operation.JoinConsumerGroup, join, 0, 21n);
    const me = { clientId: 4, vsrClient: 21n, userId: 0, transport: 1, address: '127.0.0.1:5000' };
    const out = answerRead(h.state, { code: CommandCode.GetMe, body: new Uint8Array(0), userId: 0, client: 21n, host: { me, sessions: () => [me] } });
    expect(out.ok && getMeCommand.decodeResponse(out.payload)).toMatchObject({ ok: true, value: { clientId: 4, consumerGroups: [{ streamId: 0, topicId: 0, groupId: 0 }] } });
    const client = answerRead(h.state, { code: CommandCode.GetClient, body: getClientCommand.encodeRequest({ clientId: 99 }), userId: 0, client: 21n, host: { sessions: () => [me] } });
    expect(client).toEqual({ ok: true, code: 0, payload: new Uint8Array(0) });
    const sync = answerRead(h.state, { code: CommandCode.SyncConsumerGroup, body: join, userId: 0, client: 21n });
    expect(sync.ok && syncConsumerGroupCommand.decodeResponse(sync.payload)).toEqual({ ok: true, value: { generation: 1n, partitions: [0, 1, 2] } });
    h.state.logout(21n);
    const after = answerRead(h.state, { code: CommandCode.SyncConsumerGroup, body: join, userId: 0, client: 21n });
    expect(after).toEqual({ ok: true, code: 0, payload: new Uint8Array(0) });
    const stats = answerRead(h.state, { code: CommandCode.GetStats, body: new Uint8Array(0), userId: 0, client: 1n, host: { stats: () => HOST_STATS } });
    expect(stats.ok && getStatsCommand.decodeResponse(stats.payload)).toMatchObject({ ok: true, value: { streamsCount: 1, topicsCount: 1, partitionsCount: 3, consumerGroupsCount: 1 } });
    const cluster = answerRead(h.state, { code: CommandCode.GetClusterMetadata, body: new Uint8Array(0), userId: 0, client: 1n, host: { cluster: () => ({ name: 'c', nodes: [] }) } });
    expect(cluster.ok && getClusterMetadataCommand.decodeResponse(cluster.payload)).toEqual({ ok: true, value: { name: 'c', nodes: [] } });
    expect(answerRead(h.state, { code: CommandCode.Ping, body: new Uint8Array(0), userId: null, client: 1n }).ok).toBe(true);
  });

  it('cooperative join: in-flight partitions become pending revocations, completed by 67', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    h.createTopic(0, 't', 4);
    h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g' }));
    const join = joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) });
    h.run(Operation.JoinConsumerGroup, join, 0, 1n);
    h.run(Operation.JoinConsumerGroup, join, 0, 2n, { inFlight: [3, 2] });
    expect(h.state.groupAssignment(id(0), id(0), id(0), 1n)?.partitions).toEqual([0, 1]);
    // Client 1 owned all four; the excess (3, then 2) was in flight, so both stay with it, pending.
    expect(h.state.pendingRevocations().map((r) => [r.sourceClient, r.partitionId])).toEqual([[1n, 3], [1n, 2]]);
    expect(h.state.groupAssignment(id(0), id(0), id(0), 2n)?.partitions).toEqual([]);
    h.apply(Operation.CompleteConsumerGroupRevocation, encodeCompleteRevocation({ streamId: 0, topicId: 0, groupId: 0, sourceClient: 1n, partitionId: 3 }), 0, 0n);
    expect(h.state.groupAssignment(id(0), id(0), id(0), 2n)?.partitions).toEqual([3]);
  });
});
