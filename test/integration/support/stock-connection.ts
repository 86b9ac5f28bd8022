/**
 * A logged-in raw connection speaking only stock 0.11.0 client frames (nothing Shoal-specific),
 * to one node, for one stream and topic: what a stock client puts on the wire, in the order it
 * writes it (requests pipelined on one socket keep their order).
 */
import {
  Operation, SHOAL_PROTOCOL_VERSION, buildBatch, classifyServerFrame, decodeLoginReplyBody, encodeLoginRegisterRequest,
  encodeRequestFrame, numericIdentifier, pollMessagesCommand, sendMessagesCommand, stringIdentifier,
} from '@shoal/protocol';
import type { TestCluster } from './cluster.js';
import { RawClient } from './raw-client.js';

const encoder = new TextEncoder();

export class StockConnection {
  readonly raw: RawClient;
  readonly client: bigint;
  readonly stream: string;
  readonly topic: string;
  session = 0n;
  #request = 0n;

  private constructor(raw: RawClient, client: bigint, stream: string, topic: string) {
    this.raw = raw;
    this.client = client;
    this.stream = stream;
    this.topic = topic;
  }

  static async open(cluster: TestCluster, node: number, client: bigint, target: { stream: string; topic: string }): Promise<StockConnection> {
    const [host, port] = (cluster.addresses[node] as string).split(':') as [string, string];
    const connection = new StockConnection(await RawClient.connect({ host, port: Number(port) }), client, target.stream, target.topic);
    const login = encodeRequestFrame({ client, operation: Operation.Register }, encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'stock', sdkVersion: '1' }, username: 'iggy', password: 'iggy', context: '',
    }));
    const reply = classifyServerFrame(await connection.raw.request(login) as Uint8Array);
    if (reply.outcome !== 'ok') throw new Error(`login failed: ${JSON.stringify(reply)}`);
    const decoded = decodeLoginReplyBody(Uint8Array.from([0, 0, 0, 0, ...reply.payload]));
    if (!decoded.ok) throw new Error('login reply undecodable');
    connection.session = decoded.value.session;
    return connection;
  }

  frame(operation: number, body: Uint8Array, code?: number): Uint8Array {
    this.#request += 1n;
    return encodeRequestFrame({
      client: this.client, session: this.session, request: this.#request, operation,
      ...(code === undefined ? {} : { nonReplicatedCode: code }), timestamp: 1000n + this.#request,
    }, body);
  }

  send(partitionId: number, payloads: readonly string[]): Uint8Array {
    const batch = buildBatch(payloads.map((p, i) => ({ id: BigInt(i + 1), payload: encoder.encode(p), originTimestamp: 1n })));
    if (!batch.ok) throw new Error(batch.reason);
    return this.frame(Operation.SendMessages, sendMessagesCommand.encodeRequest({
      streamId: stringIdentifier(this.stream), topicId: stringIdentifier(this.topic), partitioning: { kind: 'partition_id', partitionId },
      messagesCount: payloads.length, batch: batch.value,
    }));
  }

  poll(partitionId: number, offset: bigint, count = 1000): Uint8Array {
    return this.frame(Operation.NonReplicated, pollMessagesCommand.encodeRequest({
      consumer: { kind: 'consumer', id: numericIdentifier(1) }, streamId: stringIdentifier(this.stream), topicId: stringIdentifier(this.topic),
      partitionId, strategy: { kind: 'offset', value: offset }, count, autoCommit: false,
    }), pollMessagesCommand.code);
  }

  close(): void {
    this.raw.destroy();
  }
}
