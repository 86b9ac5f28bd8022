import {
  AckLevel, EvictionReason, createStreamCommand, createTopicCommand, encodeReplyFrame, encodeResultSuccess, pollMessagesCommand,
  sendMessagesCommand, storeConsumerOffsetCommand,
} from '@shoal/protocol';
import { fromHex, toHex } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import {
  type Message, Session, type SessionEvent, ShoalEvictionError, ShoalResponseError, encodeBatch, toConsumer, toIdentifier,
  toPollingStrategy, topicOptionEntries,
} from '../src/index.js';
import { loadClientFrames, replyVector, requestVector } from './support/vectors.js';

/**
 * The session must reproduce the request frames of the golden client_frames.json byte for
 * byte (produced by the official Node SDK): same client id, same inputs, zero clock, no checksum
 * stamping, the SDK's ClientVersionInfo. Bodies are built with this SDK's own input helpers.
 */
const frames = loadClientFrames();
const CLIENT_ID = BigInt(String(requestVector(frames, 'ping_before_login').inputs['client_id']));

function fixedSession(): Session {
  let draws = 0;
  return new Session({
    random: { u128: () => (draws++ === 0 ? CLIENT_ID : 0xdeadn) },
    versionInfo: { protocolVersion: 11264, sdkName: 'node-sdk', sdkVersion: '0.10.0-edge.4' },
  });
}

function sendOne(session: Session): string {
  const { frames: out, events } = session.drain();
  expect(events).toEqual([]);
  expect(out).toHaveLength(1);
  return toHex((out[0] as { frame: Uint8Array }).frame);
}

function reply(request: bigint, operation: number, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  return encodeReplyFrame({ client: CLIENT_ID, request, operation }, body);
}

function vectorMessages(): Message[] {
  const inputs = requestVector(frames, 'send_messages').inputs as { messages: { id: string; payload_hex: string; origin_timestamp: string; headers: { key: string; kind: string; value: unknown }[] }[] };
  return inputs.messages.map((m) => ({
    id: BigInt(m.id),
    payload: fromHex(m.payload_hex),
    originTimestamp: BigInt(m.origin_timestamp),
    headers: m.headers.map((h) => [h.key, h.kind === 'string' ? String(h.value) : h.kind === 'bool' ? Boolean(h.value) : { kind: 'uint32', value: Number(h.value) }] as const),
  }));
}

describe('session reproduces the official SDK request frames', () => {
  it('runs the ten requests in order on one session, byte for byte', () => {
    const session = fixedSession();
    const expectHex = (name: string, got: string): void => expect(got, name).toBe(requestVector(frames, name).hex);

    session.submit({ code: 1, body: new Uint8Array(0) });
    expectHex('ping_before_login', sendOne(session));
    session.receive(fromHex(replyVector(frames, 'reply_ping_ok').hex));

    session.register({ kind: 'password', username: 'iggy', password: 'iggy' });
    expectHex('login_register', sendOne(session));
    const bound = session.receive(fromHex(replyVector(frames, 'reply_login_register_ok').hex));
    expect(bound.map((e) => e.kind)).toEqual(['bound', 'reply']);
    expect(session.epoch).toBe(7n);
    expect(session.state).toBe('bound');

    session.submit({ code: 1, body: new Uint8Array(0) });
    expectHex('ping_after_login', sendOne(session));
    session.receive(reply(1n, 2));

    session.submit({ code: 202, body: createStreamCommand.encodeRequest({ name: 'test-stream', options: [] }) });
    expectHex('create_stream', sendOne(session));
    expect(session.receive(fromHex(replyVector(frames, 'reply_create_stream_ok').hex))[0]?.kind).toBe('reply');

    session.submit({ code: 302, body: createTopicCommand.encodeRequest({ streamId: toIdentifier(1), partitionsCount: 3, name: 'test-topic', options: topicOptionEntries({}) }) });
    expectHex('create_topic', sendOne(session));
    session.receive(reply(2n, 132, encodeResultSuccess()));

    const batch = encodeBatch(vectorMessages(), { randomId: () => 0n, nowMicros: () => 0n });
    session.submit({ code: 101, body: sendMessagesCommand.encodeRequest({ streamId: toIdentifier(1), topicId: toIdentifier(1), partitioning: { kind: 'partition_id', partitionId: 1 }, messagesCount: 3, batch }) });
    expectHex('send_messages', sendOne(session));

    session.submit({ code: 100, body: pollMessagesCommand.encodeRequest({ consumer: toConsumer(1), streamId: toIdentifier(1), topicId: toIdentifier(1), partitionId: 1, strategy: toPollingStrategy({ offset: 0 }), count: 10, autoCommit: false }) });
    expectHex('poll_messages', sendOne(session));

    session.submit({ code: 121, body: storeConsumerOffsetCommand.encodeRequest({ consumer: toConsumer(1), streamId: toIdentifier(1), topicId: toIdentifier(1), partitionId: 1, offset: 2n, ack: AckLevel.Quorum }) });
    expectHex('store_consumer_offset', sendOne(session));

    session.submit({ code: 201, body: new Uint8Array(0) });
    expectHex('get_streams', sendOne(session));

    // Logout goes alone: it waits for the four pipelined requests (all numbered 3) to be answered.
    session.submit({ code: 39, body: new Uint8Array(0) });
    expect(session.drain().frames).toEqual([]);
    expect(session.inFlightCount).toBe(4);
    const settled: SessionEvent[] = [
      ...session.receive(fromHex(replyVector(frames, 'reply_send_messages_ok').hex)),
      ...session.receive(reply(3n, 2, new Uint8Array(16))),
      ...session.receive(fromHex(replyVector(frames, 'reply_store_offset_ok').hex)),
      ...session.receive(fromHex(replyVector(frames, 'reply_get_streams_ok').hex)),
    ];
    expect(settled.map((e) => e.kind)).toEqual(['reply', 'reply', 'reply', 'reply']);
    expect(settled.map((e) => (e.kind === 'reply' ? e.code : 0))).toEqual([101, 100, 121, 201]);
    expectHex('logout', sendOne(session));
    session.receive(reply(3n, 3));
    expect(session.state).toBe('unregistered');
    expect(session.epoch).toBe(0n);
  });

  it('stamps request_checksum where the Rust SDK does when asked to', () => {
    const session = new Session({ random: { u128: () => CLIENT_ID }, stampRequestChecksum: true, versionInfo: { protocolVersion: 11264, sdkName: 'node-sdk', sdkVersion: '0.10.0-edge.4' } });
    session.register({ kind: 'password', username: 'iggy', password: 'iggy' });
    const frame = fromHex(sendOne(session));
    const stamped = new DataView(frame.buffer).getBigUint64(144, true);
    expect(stamped).toBe(BigInt(requestVector(frames, 'login_register').rust_sdk_request_checksum));
  });
});

describe('session decodes the vector replies as the official SDK does', () => {
  for (const vector of frames.replies) {
    it(vector.name, () => {
      const session = fixedSession();
      const header = vector.header;
      const isEviction = header['command'] === 13;
      // Put a matching call in flight: same request number and operation as the reply echoes.
      const operation = isEviction ? 2 : Number(header['operation']);
      const request = isEviction ? 1n : BigInt(String(header['request']));
      if (operation === 1) {
        session.register({ kind: 'password', username: 'iggy', password: 'iggy' });
      } else {
        for (let n = 1n; n < request; n++) {
          session.submit({ code: 202, body: createStreamCommand.encodeRequest({ name: `s${n}`, options: [] }) });
          session.drain();
          session.receive(reply(n, 128, encodeResultSuccess()));
        }
        const code = operation === 2 ? 201 : operation === 128 ? 202 : operation === 132 ? 302 : operation === 160 ? 101 : operation === 161 ? 121 : 1;
        session.submit({ code, body: new Uint8Array(0) });
      }
      expect(session.drain().frames).toHaveLength(1);
      const events = session.receive(fromHex(vector.hex));
      const expected = vector.expected;
      if (expected.outcome === 'ok') {
        const done = events.find((e) => e.kind === 'reply');
        expect(done?.kind).toBe('reply');
        if (done?.kind === 'reply') expect(toHex(done.payload)).toBe(expected.payload_hex ?? '');
      } else {
        const failed = events.find((e) => e.kind === 'failed');
        expect(failed?.kind).toBe('failed');
        if (failed?.kind !== 'failed') return;
        expect(failed.error.code).toBe(expected.error_code);
        if (isEviction) {
          expect(failed.error).toBeInstanceOf(ShoalEvictionError);
          expect((failed.error as ShoalEvictionError).reason).toBe(expected.eviction_reason);
          expect(session.state).toBe('evicted');
          expect(failed.error.retriable).toBe(expected.eviction_reason === EvictionReason.StaleClient);
        } else {
          expect(failed.error).toBeInstanceOf(ShoalResponseError);
          expect(failed.error.retriable).toBe(false);
        }
      }
    });
  }
});
