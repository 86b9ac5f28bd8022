import {
  CommandCode, ErrorCode, Operation, createConsumerGroupCommand, createPartitionsCommand, createStreamCommand,
  createTopicCommand, createUserCommand, deleteConsumerGroupCommand, deletePartitionsCommand, deleteStreamCommand,
  deleteTopicCommand, deleteUserCommand, getConsumerGroupCommand, getStreamsCommand, getTopicsCommand, getUsersCommand,
  joinConsumerGroupCommand, leaveConsumerGroupCommand, purgeTopicCommand, stringIdentifier, updateStreamCommand,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import { StateErrorCode, answerRead } from '../src/index.js';
import { Harness, id } from './harness.js';

/**
 * Shadow model: a deliberately naive re-statement of the metadata semantics (arrays and linear
 * scans, no shared code with src/). Random command sequences go to both; every code and the read
 * answers must agree. Assignment details are checked as invariants (coverage, balance) rather
 * than re-implemented.
 */
interface MTopic { id: number; name: string; partitions: number; groups: MGroup[]; nextGroup: number }
interface MGroup { id: number; name: string; members: { id: number; client: bigint }[]; generation: number }
interface MStream { id: number; name: string; topics: MTopic[] }

class Model {
  streams: MStream[] = [];
  users: { id: number; name: string }[] = [{ id: 0, name: 'iggy' }];

  static lowestFree(ids: number[]): number {
    let n = 0;
    while (ids.includes(n)) n++;
    return n;
  }

  stream(ref: number | string): MStream | undefined {
    return this.streams.find((s) => (typeof ref === 'number' ? s.id === ref : s.name === ref));
  }
}

const E = ErrorCode;
const NAMES = ['a', 'b', 'c', 'd'];
const CLIENTS = [11n, 12n, 13n];

function step(prng: Prng, h: Harness, m: Model): void {
  const pickStreamRef = (): number | string => (prng.bool() ? prng.below(4) : (prng.pick(NAMES) as string));
  const ident = (ref: number | string) => (typeof ref === 'number' ? id(ref) : stringIdentifier(ref));
  const roll = prng.below(14);
  const code = (op: number, body: Uint8Array, client = 1n) => h.code(op, body, 0, client);
  switch (roll) {
    case 0: case 1: {
      const name = prng.pick(NAMES) as string;
      const expected = m.stream(name) !== undefined ? E.StreamNameAlreadyExists : 0;
      expect(code(Operation.CreateStream, createStreamCommand.encodeRequest({ name, options: [] }))).toBe(expected);
      if (expected === 0) m.streams.push({ id: Model.lowestFree(m.streams.map((s) => s.id)), name, topics: [] });
      m.streams.sort((a, b) => a.id - b.id);
      return;
    }
    case 2: {
      const ref = pickStreamRef();
      const s = m.stream(ref);
      expect(code(Operation.DeleteStream, deleteStreamCommand.encodeRequest({ streamId: ident(ref) }))).toBe(s === undefined ? E.StreamIdNotFound : 0);
      if (s !== undefined) m.streams = m.streams.filter((x) => x !== s);
      return;
    }
    case 3: {
      const ref = pickStreamRef();
      const name = `${prng.pick(NAMES)}x`;
      const s = m.stream(ref);
      const clash = m.streams.find((x) => x.name === name && x !== s);
      const expected = s === undefined ? E.StreamIdNotFound : clash !== undefined ? E.StreamNameAlreadyExists : 0;
      expect(code(Operation.UpdateStream, updateStreamCommand.encodeRequest({ streamId: ident(ref), name, options: [] }))).toBe(expected);
      if (expected === 0 && s !== undefined) s.name = name;
      return;
    }
    case 4: case 5: {
      const ref = pickStreamRef();
      const s = m.stream(ref);
      const name = prng.pick(NAMES) as string;
      const partitions = prng.below(4);
      const expected = s === undefined ? E.StreamIdNotFound : s.topics.some((t) => t.name === name) ? E.TopicNameAlreadyExists : 0;
      expect(code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: ident(ref), partitionsCount: partitions, name, options: [] }))).toBe(expected);
      if (expected === 0 && s !== undefined) {
        s.topics.push({ id: Model.lowestFree(s.topics.map((t) => t.id)), name, partitions, groups: [], nextGroup: 0 });
        s.topics.sort((a, b) => a.id - b.id);
      }
      return;
    }
    case 6: {
      const s = m.streams[prng.below(Math.max(1, m.streams.length))];
      const tid = prng.below(3);
      const t = s?.topics.find((x) => x.id === tid);
      const expected = s === undefined ? E.StreamIdNotFound : t === undefined ? E.TopicIdNotFound : 0;
      expect(code(Operation.DeleteTopic, deleteTopicCommand.encodeRequest({ streamId: id(s?.id ?? 9), topicId: id(tid) }))).toBe(expected);
      if (expected === 0 && s !== undefined) s.topics = s.topics.filter((x) => x !== t);
      return;
    }
    case 7: case 8: {
      const s = m.streams[prng.below(Math.max(1, m.streams.length))];
      const t = s?.topics[prng.below(Math.max(1, s.topics.length))];
      const count = 1 + prng.below(3);
      const create = prng.bool();
      const expected = s === undefined ? E.StreamIdNotFound : t === undefined ? E.TopicIdNotFound : !create && count > t.partitions ? E.InvalidPartitionsCount : 0;
      const body = { streamId: id(s?.id ?? 9), topicId: id(t?.id ?? 9), partitionsCount: count };
      expect(code(create ? Operation.CreatePartitions : Operation.DeletePartitions,
        (create ? createPartitionsCommand : deletePartitionsCommand).encodeRequest(body))).toBe(expected);
      if (expected === 0 && t !== undefined) {
        t.partitions += create ? count : -count;
        for (const g of t.groups) g.generation++;
      }
      return;
    }
    case 9: {
      const s = m.streams[prng.below(Math.max(1, m.streams.length))];
      const t = s?.topics[prng.below(Math.max(1, s.topics.length))];
      const name = prng.pick(['g1', 'g2']) as string;
      const expected = s === undefined ? E.StreamIdNotFound : t === undefined ? E.TopicIdNotFound : t.groups.some((g) => g.name === name) ? E.ConsumerGroupNameAlreadyExists : 0;
      expect(code(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(s?.id ?? 9), topicId: id(t?.id ?? 9), name }))).toBe(expected);
      if (expected === 0 && t !== undefined) t.groups.push({ id: t.nextGroup++, name, members: [], generation: 0 });
      return;
    }
    case 10: case 11: {
      const s = m.streams[prng.below(Math.max(1, m.streams.length))];
      const t = s?.topics[prng.below(Math.max(1, s.topics.length))];
      const g = t?.groups[prng.below(Math.max(1, t.groups.length))];
      const client = prng.pick(CLIENTS) as bigint;
      const join = roll === 10;
      const member = g?.members.find((x) => x.client === client);
      const expected = s === undefined ? E.StreamIdNotFound : t === undefined ? E.TopicIdNotFound : g === undefined ? E.ConsumerGroupIdNotFound
        : !join && member === undefined ? StateErrorCode.ConsumerGroupMemberNotFound : 0;
      const body = { streamId: id(s?.id ?? 9), topicId: id(t?.id ?? 9), groupId: id(g?.id ?? 9) };
      expect(code(join ? Operation.JoinConsumerGroup : Operation.LeaveConsumerGroup,
        (join ? joinConsumerGroupCommand : leaveConsumerGroupCommand).encodeRequest(body), client)).toBe(expected);
      if (expected === 0 && g !== undefined) {
        if (join && member === undefined) {
          g.members.push({ id: Model.lowestFree(g.members.map((x) => x.id)), client });
          g.generation++;
        } else if (!join) {
          g.members = g.members.filter((x) => x !== member);
          g.generation++;
        }
      }
      return;
    }
    case 12: {
      const client = prng.pick(CLIENTS) as bigint;
      h.state.logout(client);
      for (const s of m.streams) for (const t of s.topics) for (const g of t.groups) {
        if (g.members.some((x) => x.client === client)) {
          g.members = g.members.filter((x) => x.client !== client);
          g.generation++;
        }
      }
      return;
    }
    default: {
      const name = prng.pick(['usera', 'userb', 'iggy']) as string;
      const existing = m.users.find((u) => u.name === name);
      if (prng.bool()) {
        expect(code(Operation.CreateUser, createUserCommand.encodeRequest({ username: name, password: 'pw123', status: 1, permissions: null, options: [] })))
          .toBe(existing !== undefined ? E.UserAlreadyExists : 0);
        if (existing === undefined) m.users.push({ id: Model.lowestFree(m.users.map((u) => u.id)), name });
        m.users.sort((a, b) => a.id - b.id);
      } else {
        const expected = existing === undefined ? E.ResourceNotFound : existing.id === 0 ? E.CannotDeleteUser : 0;
        expect(code(Operation.DeleteUser, deleteUserCommand.encodeRequest({ userId: stringIdentifier(name) }))).toBe(expected);
        if (expected === 0) m.users = m.users.filter((u) => u !== existing);
      }
    }
  }
}

function read<T>(h: Harness, code: number, body: Uint8Array, decode: (p: Uint8Array) => { ok: boolean; value?: T }): T {
  const out = answerRead(h.state, { code, body, userId: 0, client: 1n });
  if (!out.ok) throw new Error(`read ${code} failed: ${out.code}`);
  const d = decode(out.payload);
  if (!d.ok) throw new Error('decode');
  return d.value as T;
}

function compare(h: Harness, m: Model): void {
  const streams = read(h, CommandCode.GetStreams, new Uint8Array(0), (p) => getStreamsCommand.decodeResponse(p));
  expect(streams.map((s) => [s.id, s.name, s.topicsCount])).toEqual(m.streams.map((s) => [s.id, s.name, s.topics.length]));
  const users = read(h, CommandCode.GetUsers, new Uint8Array(0), (p) => getUsersCommand.decodeResponse(p));
  expect(users.map((u) => [u.id, u.username])).toEqual(m.users.map((u) => [u.id, u.name]));
  for (const s of m.streams) {
    const topics = read(h, CommandCode.GetTopics, getTopicsCommand.encodeRequest({ streamId: id(s.id) }), (p) => getTopicsCommand.decodeResponse(p));
    expect(topics.map((t) => [t.id, t.name, t.partitionsCount])).toEqual(s.topics.map((t) => [t.id, t.name, t.partitions]));
    for (const t of s.topics) {
      for (const g of t.groups) {
        const d = read(h, CommandCode.GetConsumerGroup, getConsumerGroupCommand.encodeRequest({ streamId: id(s.id), topicId: id(t.id), groupId: id(g.id) }),
          (p) => getConsumerGroupCommand.decodeResponse(p));
        expect(d?.members.map((x) => x.id)).toEqual(g.members.map((x) => x.id).sort((a, b) => a - b));
        const owned = (d?.members ?? []).flatMap((x) => x.partitions).sort((a, b) => a - b);
        expect(owned).toEqual(g.members.length === 0 ? [] : Array.from({ length: t.partitions }, (_, i) => i));
        const loads = (d?.members ?? []).map((x) => x.partitions.length);
        if (loads.length > 0) expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
        const generation = h.state.groupAssignment(id(s.id), id(t.id), id(g.id), 0n)?.generation;
        expect(generation).toBe(BigInt(g.generation));
      }
    }
  }
}

describe('shadow model: metadata plane', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: 400 random commands agree with the model`, () => {
      const prng = new Prng(seed);
      const h = Harness.withRoot();
      const m = new Model();
      for (let i = 0; i < 400; i++) {
        step(prng, h, m);
        if (i % 25 === 0) compare(h, m);
      }
      compare(h, m);
    });
  }

  it('purge leaves the shape intact and bumps the purge generation', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    h.createTopic(0, 't', 3);
    expect(h.code(Operation.PurgeTopic, purgeTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }))).toBe(0);
    expect(h.state.partitions().map((p) => p.purgeGeneration)).toEqual([1n, 1n, 1n]);
  });
});
