/**
 * Non-replicated reads where the reference server's handlers decide more than its response
 * layouts say (core/server/src/responses.rs and dispatch/authz.rs): misses that are empty
 * replies rather than errors, not-found before permission, bodies it does not read.
 */
import {
  CommandCode, Operation, createUserCommand, getClientCommand, getTopicCommand, getTopicsCommand, getUserCommand, numericIdentifier,
  stringIdentifier, updateUserCommand,
} from '@shoal/protocol';
import { describe, expect, it } from 'vitest';
import { answerRead } from '../src/index.js';
import { Harness, id } from './harness.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

function world(): Harness {
  const h = Harness.withRoot();
  h.createStream('s0');
  h.createTopic(0, 't0', 2);
  h.createUser('alice', null);
  return h;
}

describe('reads as the reference answers them', () => {
  it('GetTopics of a missing stream is an empty list, not StreamIdNotFound (build_get_topics_response)', () => {
    const out = answerRead(world().state, { code: CommandCode.GetTopics, body: getTopicsCommand.encodeRequest({ streamId: id(9) }), userId: 0, client: 1n });
    expect(out.ok && hex(out.payload)).toBe('00000000');
  });

  it('GetTopic of a missing stream or topic is an empty reply (none)', () => {
    const h = world();
    for (const body of [getTopicCommand.encodeRequest({ streamId: id(9), topicId: id(0) }), getTopicCommand.encodeRequest({ streamId: id(0), topicId: id(7) })]) {
      const out = answerRead(h.state, { code: CommandCode.GetTopic, body, userId: 0, client: 1n });
      expect(out.ok && out.payload.length).toBe(0);
    }
  });

  it('GetUser: a miss is empty even for a user without read_users; another existing user is Unauthorized; oneself is always readable', () => {
    const h = world();
    const alice = [...h.state.model.users.values()].find((u) => u.username === 'alice');
    expect(alice).toBeDefined();
    const get = (userId: ReturnType<typeof id> | ReturnType<typeof stringIdentifier>) =>
      answerRead(h.state, { code: CommandCode.GetUser, body: getUserCommand.encodeRequest({ userId }), userId: alice?.id ?? -1, client: 1n });
    const missing = get(stringIdentifier('nobody'));
    expect(missing.ok && missing.payload.length).toBe(0);
    expect(get(numericIdentifier(0))).toMatchObject({ ok: false, code: 41 });
    const self = get(stringIdentifier('alice'));
    expect(self.ok && getUserCommand.decodeResponse(self.payload)).toMatchObject({ ok: true, value: { username: 'alice', options: [] } });
  });

  it('GetClient with a body it cannot decode finds no client (empty), as the reference GET_CLIENT arm', () => {
    const out = answerRead(world().state, { code: CommandCode.GetClient, body: Uint8Array.of(1, 2), userId: 0, client: 1n, host: { sessions: () => [] } });
    expect(out.ok && out.payload.length).toBe(0);
    const ok = answerRead(world().state, { code: CommandCode.GetClient, body: getClientCommand.encodeRequest({ clientId: 5 }), userId: 0, client: 1n, host: { sessions: () => [] } });
    expect(ok.ok && ok.payload.length).toBe(0);
  });

  it('Ping ignores a body', () => {
    expect(answerRead(world().state, { code: CommandCode.Ping, body: Uint8Array.of(1, 2, 3), userId: null, client: 1n }).ok).toBe(true);
  });

  it('CreateUser with an unknown status code creates an Active user; UpdateUser with one leaves the status', () => {
    const h = world();
    const created = h.run(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'bob', password: 'hash', status: 9, permissions: null, options: [] })).outcome;
    expect(created?.ok === true && createUserCommand.decodeResponse(created.payload)).toMatchObject({ ok: true, value: { username: 'bob', status: 1 } });
    const bob = [...h.state.model.users.values()].find((u) => u.username === 'bob');
    h.run(Operation.UpdateUser, updateUserCommand.encodeRequest({ userId: numericIdentifier(bob?.id ?? 0), username: null, status: 2, options: [] }));
    h.run(Operation.UpdateUser, updateUserCommand.encodeRequest({ userId: numericIdentifier(bob?.id ?? 0), username: null, status: 7, options: [] }));
    expect(h.state.model.users.get(bob?.id ?? 0)?.status).toBe(2);
  });
});
