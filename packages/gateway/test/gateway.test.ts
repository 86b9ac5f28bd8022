import { describe, expect, it } from 'vitest';
import {
  ClientCommand, CommandCode, ErrorCode, EvictionReason, METADATA_GROUP, Operation, REPLY_HEADER, RequestHeaderView, buildBatch,
  createStreamCommand, encodeReplyHeader, encodeRequestFrame, getStreamsCommand, numericIdentifier, pollMessagesCommand,
  sendMessagesCommand,
} from '@shoal/protocol';
import { U64_MAX } from '@shoal/stdx';
import { type ClientRequestMessage, RequestRoute, type SessionSubmitMessage, TOKEN_NONE } from '../src/index.js';
import { Bench, CLUSTER, ROOT_HASH, codeOf, evictionReasonOf, pingFrame, readFrame, registerFrame, sessionOk } from './support.js';

const CLIENT = 0xabcn;

function sendFrame(client: bigint, session: bigint, streamId: number, topicId: number): Uint8Array {
  const built = buildBatch([{ id: 1n, payload: new Uint8Array([1, 2, 3]), originTimestamp: 1n }]);
  if (!built.ok) throw new Error(built.reason);
  const body = sendMessagesCommand.encodeRequest({
    streamId: numericIdentifier(streamId), topicId: numericIdentifier(topicId), partitioning: { kind: 'partition_id', partitionId: 0 },
    messagesCount: 1, batch: built.value,
  });
  return encodeRequestFrame({ client, operation: Operation.SendMessages, request: 1n, session, timestamp: 9n }, body);
}

/** A committed Reply frame for `client` naming `op` (as a partition owner sends one). */
function committedReply(client: bigint, op: bigint): Uint8Array {
  return encodeReplyHeader({
    size: 256, cluster: CLUSTER, view: 3, replica: 2, requestChecksum: 0n, client, op, commit: op, timestamp: 9n, request: 0n,
    operation: Operation.SendMessages, status: 0,
  });
}

describe('gateway: before login', () => {
  it('answers PING with status 0, echoing the request and stamping the node fields', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(pingFrame(CLIENT));
    const [reply] = bench.take(c);
    expect(reply?.[60]).toBe(ClientCommand.Reply);
    expect(codeOf(reply as Uint8Array)).toBe(0);
    const view = new DataView((reply as Uint8Array).buffer);
    expect(view.getBigUint64(REPLY_HEADER.timestamp.offset, true)).toBe(5n);
    expect(view.getBigUint64(REPLY_HEADER.commit.offset, true)).toBe(11n);
    expect(reply?.[61]).toBe(2); // replica
    expect(bench.routed).toEqual([]);
  });

  it('refuses any other request with status 40 Unauthenticated and routes nothing', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(readFrame(CLIENT, CommandCode.GetStreams, 1n));
    expect(bench.take(c).map(codeOf)).toEqual([ErrorCode.Unauthenticated]);
    expect(bench.routed).toEqual([]);
  });

  it('evicts a legacy login (38) with 15 MalformedLogin and closes a frame that is not a request', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(readFrame(CLIENT, CommandCode.LoginUser, 0n));
    expect(bench.take(c).map(evictionReasonOf)).toEqual([EvictionReason.MalformedLogin]);
    const frame = pingFrame(CLIENT);
    frame[60] = ClientCommand.Reply;
    c.push(frame);
    expect(c.closed).toBe(true);
    expect(bench.take(c)).toEqual([]);
  });
});

describe('gateway: login', () => {
  it('asks the host to check the password, holds later frames, submits the Register, then binds the session', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(registerFrame(CLIENT));
    c.push(pingFrame(CLIENT));
    expect(bench.checks.map((k) => [k.password, k.hash])).toEqual([['iggy', ROOT_HASH]]);
    expect(c.queued).toBe(1); // the PING waits behind the login barrier
    expect(bench.take(c)).toEqual([]);
    bench.gateway.passwordVerified(c, true);
    const submit = bench.routed.pop() as SessionSubmitMessage;
    expect(submit).toMatchObject({ kind: 'session_submit', session: 'register', token: c.token, client: CLIENT, userId: 0 });
    expect(c.queued).toBe(1);
    bench.gateway.onSessionResult(sessionOk(c.token, CLIENT, 41n));
    expect(c.session).toEqual({ client: CLIENT, userId: 0, epoch: 41n });
    expect(bench.published).toEqual([c]);
    const [login, pong] = bench.take(c);
    expect(codeOf(login as Uint8Array)).toBe(0);
    expect(new DataView((login as Uint8Array).buffer).getBigUint64(REPLY_HEADER.op.offset, true)).toBe(41n);
    expect(codeOf(pong as Uint8Array)).toBe(0); // released: the held PING was handled after the login reply
    expect(c.inFlight).toBe(0);
  });

  it('evicts a wrong password with 9 InvalidCredentials and submits nothing', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(registerFrame(CLIENT, 'wrong'));
    bench.gateway.passwordVerified(c, false);
    expect(bench.take(c).map(evictionReasonOf)).toEqual([EvictionReason.InvalidCredentials]);
    expect(bench.routed).toEqual([]);
    expect(c.session).toBeNull();
    expect(c.inFlight).toBe(0);
  });

  it('answers 58 (retry anywhere) when the password check itself failed, and drops a verdict for a closed connection', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(registerFrame(CLIENT));
    bench.gateway.passwordVerified(c, null);
    expect(bench.take(c).map(codeOf)).toEqual([ErrorCode.TransientNotAccepted]);
    const d = bench.connect();
    d.push(registerFrame(CLIENT + 1n));
    d.close('peer_closed');
    bench.gateway.passwordVerified(d, true);
    expect(bench.routed).toEqual([]);
  });

  it('answers 58 when the metadata owner is not the primary, and evicts 12 when another user owns the client id', () => {
    const bench = new Bench();
    const c = bench.connect();
    c.push(registerFrame(CLIENT));
    bench.gateway.passwordVerified(c, true);
    bench.gateway.onSessionResult({ ...sessionOk(c.token, CLIENT, 0n), outcome: 'not_primary' });
    expect(bench.take(c).map(codeOf)).toEqual([ErrorCode.TransientNotAccepted]);
    c.push(registerFrame(CLIENT));
    bench.gateway.passwordVerified(c, true);
    bench.gateway.onSessionResult({ ...sessionOk(c.token, CLIENT, 0n), outcome: 'client_id_owned_by_another_user' });
    expect(bench.take(c).map(evictionReasonOf)).toEqual([EvictionReason.SessionError]);
    expect(c.session).toBeNull();
  });

  it('logs a bound session out when its transport closes (request u64::MAX, nobody waits)', () => {
    const bench = new Bench();
    const c = bench.connect();
    bench.login(c, CLIENT, 41n);
    c.close('peer_closed');
    expect(bench.routed).toEqual([{
      kind: 'session_submit', session: 'logout', token: TOKEN_NONE, client: CLIENT, userId: 0, epoch: 41n, request: U64_MAX,
    }]);
  });
});

describe('gateway: session fencing', () => {
  it('evicts 7 SessionTooLow below the bound epoch, answers nothing above it, and 1 NoSession for another client id', () => {
    const bench = new Bench();
    const stream = bench.harness.createStream('data');
    const topic = bench.harness.createTopic(stream, 'events', 1);
    const c = bench.connect();
    bench.login(c, CLIENT, 41n);
    c.push(sendFrame(CLIENT, 40n, stream, topic));
    expect(bench.take(c).map(evictionReasonOf)).toEqual([EvictionReason.SessionTooLow]);
    bench.login(c, CLIENT, 41n);
    c.push(sendFrame(CLIENT, 42n, stream, topic)); // EpochAhead: a client bug, unanswered (§7.3)
    expect(bench.take(c)).toEqual([]);
    expect(bench.routed).toEqual([]);
    c.push(readFrame(CLIENT + 1n, CommandCode.GetStreams, 41n));
    expect(bench.take(c).map(evictionReasonOf)).toEqual([EvictionReason.NoSession]);
    expect(c.session).not.toBeNull(); // the eviction names another client: this session stays
  });
});

describe('gateway: routing and replies', () => {
  it('routes a metadata write to the metadata group and answers a read from the metadata view', () => {
    const bench = new Bench();
    bench.harness.createStream('data');
    const c = bench.connect();
    bench.login(c, CLIENT, 41n);
    c.push(readFrame(CLIENT, CommandCode.GetStreams, 41n));
    const streams = getStreamsCommand.decodeResponse((bench.take(c)[0] as Uint8Array).subarray(256));
    expect(streams.ok && streams.value.map((s) => s.name)).toEqual(['data']);
    const create = encodeRequestFrame({ client: CLIENT, operation: Operation.CreateStream, request: 1n, session: 41n, timestamp: 7n },
      createStreamCommand.encodeRequest({ name: 'more', options: [] }));
    c.push(create);
    const routed = bench.routed.pop() as ClientRequestMessage;
    expect(routed).toMatchObject({ kind: 'client_request', route: RequestRoute.submit, group: METADATA_GROUP, token: c.token, userId: 0, metadataOp: bench.harness.op });
    expect(new RequestHeaderView(routed.header).request).toBe(1n);
    expect(c.inFlight).toBe(1);
  });

  it('routes SendMessages to its partition group; a committed reply advances the fence a later poll carries', () => {
    const bench = new Bench();
    const stream = bench.harness.createStream('data');
    const topic = bench.harness.createTopic(stream, 'events', 1);
    const group = bench.harness.state.partitions()[0]?.consensusGroupId as bigint;
    const c = bench.connect();
    bench.login(c, CLIENT, 41n);
    c.push(sendFrame(CLIENT, 41n, stream, topic));
    const send = bench.routed.pop() as ClientRequestMessage;
    expect(send).toMatchObject({ route: RequestRoute.submit, group, fenceOp: 0n });
    expect(send.body.length).toBeGreaterThan(256); // the admitted batch, not the request body
    bench.gateway.reply(c, group, committedReply(CLIENT, 9n), true);
    expect(bench.take(c).map(codeOf)).toEqual([0]);
    expect(c.inFlight).toBe(0);
    expect(c.ackedOp(group)).toBe(9n);
    const poll = pollMessagesCommand.encodeRequest({
      consumer: { kind: 'consumer', id: numericIdentifier(1) }, streamId: numericIdentifier(stream), topicId: numericIdentifier(topic),
      partitionId: 0, strategy: { kind: 'offset', value: 0n }, count: 10, autoCommit: false,
    });
    c.push(readFrame(CLIENT, CommandCode.PollMessages, 41n, poll));
    expect(bench.routed.pop()).toMatchObject({ route: RequestRoute.poll, group, fenceOp: 9n });
  });

  it('answers a SendMessages to a missing topic here (not found), routing nothing', () => {
    const bench = new Bench();
    const stream = bench.harness.createStream('data');
    const c = bench.connect();
    bench.login(c, CLIENT, 41n);
    c.push(sendFrame(CLIENT, 41n, stream, 99));
    expect(bench.take(c).map(codeOf)).toEqual([ErrorCode.TopicIdNotFound]);
    expect(bench.routed).toEqual([]);
  });
});

describe('memory connection', () => {
  it('hands the gateway one frame at a time up to its in-flight limit; a reply lets the next one in', () => {
    const bench = new Bench();
    const stream = bench.harness.createStream('data');
    const topic = bench.harness.createTopic(stream, 'events', 1);
    const group = bench.harness.state.partitions()[0]?.consensusGroupId as bigint;
    const c = bench.connect(1);
    bench.login(c, CLIENT, 41n);
    c.push(sendFrame(CLIENT, 41n, stream, topic));
    c.push(sendFrame(CLIENT, 41n, stream, topic));
    expect([bench.routed.length, c.queued]).toEqual([1, 1]);
    bench.gateway.reply(c, group, committedReply(CLIENT, 9n), true);
    expect([bench.routed.length, c.queued]).toEqual([2, 0]);
  });
});
