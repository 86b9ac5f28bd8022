/**
 * The ten request frames of the golden client_frames.json (encoded by the official Iggy Node
 * SDK) replayed in order over one raw TCP connection against the compiled server. The frames name
 * 0-based ids (stream 1 is the SECOND stream, topic 1 the second topic of stream 1, partition 1
 * the second partition), so the SDK creates the first stream and the first topic on another
 * connection between the frames. `session` (bytes 184..192) is patched with the epoch the login
 * returned. Every reply must be the success the official SDK expects (classifyServerFrame is the
 * SDK's decode funnel) and echo the request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import {
  EvictionReason, FRAME_HEADER_SIZE, REPLY_HEADER, SHOAL_PROTOCOL_VERSION, classifyServerFrame, createStreamCommand,
  createTopicCommand, decodeLoginReplyBody, encodeRequestFrame, encodeLoginRegisterRequest, getStreamsCommand, Operation,
  pollMessagesCommand, sendMessagesCommand,
} from '@shoal/protocol';
import { loadVectorFile } from '../support/fixtures.js';
import { RawClient, hexBytes } from './support/raw-client.js';
import { removeDataDir, startServer, type ServerHandle } from './support/server.js';

interface RequestVector {
  readonly name: string;
  readonly hex: string;
  readonly header: { readonly request: string; readonly operation: number; readonly timestamp: string };
}

const vectors = loadVectorFile('client_frames.json') as { requests: RequestVector[] };
const byName = new Map(vectors.requests.map((v) => [v.name, v]));
const SESSION_AT = 184;

function frameOf(name: string, session: bigint): Uint8Array {
  const vector = byName.get(name);
  if (vector === undefined) throw new Error(`no vector ${name}`);
  const frame = hexBytes(vector.hex);
  new DataView(frame.buffer).setBigUint64(SESSION_AT, session, true);
  return frame;
}

function expectSuccessEcho(name: string, reply: Uint8Array | null): Uint8Array {
  expect(reply, `${name}: a reply`).not.toBeNull();
  const frame = reply as Uint8Array;
  const outcome = classifyServerFrame(frame);
  expect(outcome, `${name}: ${JSON.stringify(outcome)}`).toMatchObject({ outcome: 'ok' });
  const vector = byName.get(name) as RequestVector;
  const view = new DataView(frame.buffer, frame.byteOffset);
  expect(view.getBigUint64(REPLY_HEADER.request.offset, true), `${name}: request echo`).toBe(BigInt(vector.header.request));
  expect(view.getUint8(REPLY_HEADER.operation.offset), `${name}: operation echo`).toBe(vector.header.operation);
  expect(view.getBigUint64(REPLY_HEADER.timestamp.offset, true), `${name}: timestamp echo`).toBe(BigInt(vector.header.timestamp));
  return outcome.outcome === 'ok' ? outcome.payload : new Uint8Array(0);
}

describe('golden request frames of the official Node SDK', () => {
  let server: ServerHandle;
  let sdk: ShoalClient;

  beforeAll(async () => {
    server = await startServer({ shards: 2 });
    sdk = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
  });

  afterAll(async () => {
    await sdk?.destroy();
    expect((await server?.stop()).code).toBe(0);
    if (server !== undefined) removeDataDir(server.dataDir);
  });

  it('replays all ten frames in order and gets the success the SDK expects for each', async () => {
    const raw = await RawClient.connect(server.tcp);
    expectSuccessEcho('ping_before_login', await raw.request(frameOf('ping_before_login', 0n)));

    const login = expectSuccessEcho('login_register', await raw.request(frameOf('login_register', 0n)));
    const logged = decodeLoginReplyBody(login.length === 0 ? login : Uint8Array.from([0, 0, 0, 0, ...login]));
    expect(logged.ok).toBe(true);
    const session = logged.ok ? logged.value.session : 0n;
    expect(session > 0n).toBe(true);
    expect(logged.ok && logged.value.userId).toBe(0);
    expect(logged.ok && logged.value.serverProtocolVersion).toBe(SHOAL_PROTOCOL_VERSION);

    expectSuccessEcho('ping_after_login', await raw.request(frameOf('ping_after_login', session)));

    await sdk.stream.create({ name: 'first-stream' }); // stream 0: the frame's stream becomes 1
    const stream = createStreamCommand.decodeResponse(expectSuccessEcho('create_stream', await raw.request(frameOf('create_stream', session))));
    expect(stream.ok && stream.value.id).toBe(1);
    expect(stream.ok && stream.value.name).toBe('test-stream');

    await sdk.topic.create({ streamId: 1, name: 'first-topic', partitionsCount: 1 }); // topic 0 of stream 1
    const topic = createTopicCommand.decodeResponse(expectSuccessEcho('create_topic', await raw.request(frameOf('create_topic', session))));
    expect(topic.ok && topic.value.id).toBe(1);
    expect(topic.ok && topic.value.partitions.map((p) => p.id)).toEqual([0, 1, 2]);

    const sent = sendMessagesCommand.decodeResponse(expectSuccessEcho('send_messages', await raw.request(frameOf('send_messages', session))));
    expect(sent.ok && sent.value.confirmations).toEqual([{ streamId: 1, topicId: 1, partitionId: 1, baseOffset: 0n }]);

    const polled = pollMessagesCommand.decodeResponse(expectSuccessEcho('poll_messages', await raw.request(frameOf('poll_messages', session))));
    expect(polled.ok && polled.value.partitionId).toBe(1);
    expect(polled.ok && polled.value.messagesCount).toBe(3);
    expect(polled.ok && polled.value.currentOffset).toBe(2n);

    expectSuccessEcho('store_consumer_offset', await raw.request(frameOf('store_consumer_offset', session)));
    const stored = await sdk.offset.get({ streamId: 1, topicId: 1, partitionId: 1, consumer: 1 });
    expect(stored?.storedOffset).toBe(2n);

    const streams = getStreamsCommand.decodeResponse(expectSuccessEcho('get_streams', await raw.request(frameOf('get_streams', session))));
    expect(streams.ok && streams.value.map((s) => s.name)).toEqual(['first-stream', 'test-stream']);

    expectSuccessEcho('logout', await raw.request(frameOf('logout', session)));
    // Logged out: the session is gone, only PING is served.
    const after = classifyServerFrame(await raw.request(frameOf('get_streams', session)) as Uint8Array);
    expect(after).toMatchObject({ outcome: 'error', errorCode: 40 });
    raw.destroy();
  });

  it('answers the legacy logins 38 and 44 with Eviction 15 and an old protocol with Eviction 14', async () => {
    const raw = await RawClient.connect(server.tcp);
    const client = 0x42n;
    for (const code of [38, 44]) {
      const frame = encodeRequestFrame({ client, operation: Operation.NonReplicated, nonReplicatedCode: code }, new Uint8Array([4, 105, 103, 103, 121]));
      const reply = classifyServerFrame(await raw.request(frame) as Uint8Array);
      expect(reply).toMatchObject({ outcome: 'error', source: 'eviction', evictionReason: EvictionReason.MalformedLogin });
    }
    const old = encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION - (1 << 10), sdkName: 'old-sdk', sdkVersion: '0.0.1' },
      username: 'iggy', password: 'iggy', context: '',
    });
    const evicted = await raw.request(encodeRequestFrame({ client, operation: Operation.Register }, old)) as Uint8Array;
    expect(classifyServerFrame(evicted)).toMatchObject({ outcome: 'error', evictionReason: EvictionReason.IncompatibleProtocol });
    const view = new DataView(evicted.buffer, evicted.byteOffset);
    expect(view.getUint32(144, true)).toBe(SHOAL_PROTOCOL_VERSION);
    expect(view.getUint32(148, true)).toBe(SHOAL_PROTOCOL_VERSION);
    const garbage = await raw.request(encodeRequestFrame({ client, operation: Operation.Register }, new Uint8Array([1, 2, 3])));
    expect(classifyServerFrame(garbage as Uint8Array)).toMatchObject({ evictionReason: EvictionReason.MalformedLogin });
    // Before login only PING is served: a CreateStream is denied with status 40 (the vector's shape).
    const denied = await raw.request(encodeRequestFrame({ client, operation: Operation.CreateStream, session: 1n, request: 1n },
      createStreamCommand.encodeRequest({ name: 'x', options: [] }))) as Uint8Array;
    expect(classifyServerFrame(denied)).toMatchObject({ outcome: 'error', source: 'status', errorCode: 40 });
    expect(denied.length).toBe(FRAME_HEADER_SIZE);
    raw.destroy();
  });
});
