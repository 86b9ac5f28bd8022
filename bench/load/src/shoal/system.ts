import { FrameCursor, BATCH_HEADER_SIZE, GROUP_PRIMARY_UNKNOWN, pollMessagesCommand, readBatchHeader, sendMessagesCommand } from '@shoal/protocol';
import { type Message, ShoalClient } from '@shoal/client';
import type { Workload } from '../flags.js';
import type {
  AckInfo, BenchSystem, BenchTarget, ConsumeSink, ConsumerChannel, OutgoingRequest, ProducerChannel, RetryObserver, RunSpec,
  RunningCluster,
} from '../target.js';
import { LeanConnection, LeanConnectionLost, type LeanCredentials, LeanReplyError } from './lean.js';
import { benchMessageId, buildSendMessagesFrame, payloadTemplate } from './wire.js';
import { IDENTITY_BYTES, encodeIdentity } from '../exactly-once.js';
import type { NodeThreads } from '../cpu.js';

/**
 * Shoal as a bench target, through the SDK (packages/client) against given client addresses
 * (a cluster the bench started, or `--target`).
 *
 * - Setup (SDK): a stream `bench-<run>` with one topic of `partitions` partitions; each
 *   partition's primary from GetClusterMetadata's extension is where the lean producers send it
 *   (`--entry backup`: the next node, which forwards); a move is learned by elimination on 58
 *   TransientNotAccepted, as the SDK router does.
 * - Lean path (headline): `LeanConnection` + `buildSendMessagesFrame`: one SendMessages per
 *   request with the batch written in place; acknowledged = the reply, sent after the quorum
 *   commit; the reply's base offset places every message for the exactly-once check.
 * - SDK path (secondary): `client.sendMessages({ partitioning: { partitionId }, messages })`
 *   (message objects → `encodeBatch` → router with retries), `client.pollMessages` to consume
 *   (checksums verified).
 * - Consume (lean): PollMessages by offset, 1,000 messages per poll, frames walked in place
 *   (no re-hash: the SDK path verifies checksums), until every acknowledged message is back and
 *   the partition's current offset is reached.
 */
export const SHOAL_POLL_COUNT = 1000;

export function shoalCredentials(env: NodeJS.ProcessEnv = process.env): LeanCredentials {
  return { username: env['IGGY_USERNAME'] ?? 'iggy', password: env['IGGY_PASSWORD'] ?? 'iggy' };
}

export interface ShoalSystemOptions {
  readonly addresses: readonly string[];
  /** The cluster the bench started (null for --target). */
  readonly cluster: RunningCluster | null;
  readonly credentials?: LeanCredentials;
  readonly facts?: Readonly<Record<string, string | number | boolean>>;
}

export class ShoalSystem implements BenchSystem {
  readonly name = 'shoal' as const;
  readonly addresses: readonly string[];
  readonly cluster: RunningCluster | null;
  readonly credentials: LeanCredentials;
  readonly facts: Readonly<Record<string, string | number | boolean>>;
  readonly client: ShoalClient;
  /**
   * View changes during the runs: for each run, how far the metadata view and each of the run's
   * partition views moved between its prepare and its cleanup (GetClusterMetadata's extension).
   * Under a fault-free load any change is a spurious one (a backup that gave up on a live primary).
   */
  readonly viewChanges = { metadata: 0, partition: 0 };

  constructor(options: ShoalSystemOptions) {
    this.addresses = options.addresses;
    this.cluster = options.cluster;
    this.credentials = options.credentials ?? shoalCredentials();
    this.facts = { nodes: options.addresses.length, ...options.facts };
    this.client = new ShoalClient({
      address: [...options.addresses],
      credentials: { username: this.credentials.username, password: this.credentials.password },
      requestTimeoutMs: 30_000,
    });
  }

  serverPids(): readonly number[] {
    return this.cluster === null ? [] : this.cluster.processes.filter((p) => p.alive).map((p) => p.pid);
  }

  serverThreads(): readonly NodeThreads[] {
    const cluster = this.cluster;
    if (cluster === null || cluster.threads === undefined) return [];
    const out: NodeThreads[] = [];
    for (const p of cluster.processes) {
      const table = p.alive ? cluster.threads(p.index) : null;
      if (table !== null) out.push(table);
    }
    return out;
  }

  targets(workload: Workload): readonly BenchTarget[] {
    const lean = new ShoalTarget(this, 'lean');
    return workload.batch === 1 && workload.inFlight > 1 ? [lean, new ShoalTarget(this, 'sdk')] : [lean];
  }

  /** The metadata primary's client address, or the first address when the server has no roster. */
  async primaryAddress(): Promise<string> {
    try {
      const view = await this.client.getClusterMetadata({ timeoutMs: 5000 });
      if (view.leader !== null) {
        const host = view.leader.address.host === 'localhost' ? '127.0.0.1' : view.leader.address.host;
        return `${host}:${view.leader.address.port}`;
      }
    } catch {
      // FeatureUnavailable or a single node without a roster: the home node.
    }
    return this.addresses[0] as string;
  }

  /** The metadata view and the views of `streamId`'s partitions, or null without the extension. */
  async views(streamId: number): Promise<{ readonly metadata: number; readonly partitions: ReadonlyMap<number, number> } | null> {
    try {
      const groups = (await this.client.getClusterMetadata({ timeoutMs: 5000 })).groups;
      if (groups === null) return null;
      const partitions = new Map<number, number>();
      for (const topic of groups.topics) if (topic.streamId === streamId) for (const p of topic.partitions) partitions.set(p.partitionId, p.view);
      return { metadata: groups.metadataView, partitions };
    } catch {
      return null; // mid-failover or a node without the extension: not counted
    }
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
    await this.cluster?.stop();
  }
}

interface RunIds {
  readonly streamId: number;
  readonly topicId: number;
  readonly primary: string;
  /** Where the producers send each partition first (its primary, or a backup: `Workload.entry`). */
  readonly entries: ReadonlyMap<number, string>;
}

const ROUTES_WAIT_MS = 15_000;

function hostPort(address: { host: string; port: number }): string {
  return `${address.host === 'localhost' ? '127.0.0.1' : address.host}:${address.port}`;
}

/**
 * Each partition's entry node: its primary as the cluster reports it (waiting until every node
 * of the topic names one), or with `entry = 'backup'` the next node of the roster after it, which
 * forwards every write. Empty without the extension (single node): the home node serves all.
 */
async function partitionEntries(system: ShoalSystem, streamId: number, topicId: number, workload: Workload): Promise<Map<number, string>> {
  const deadline = Date.now() + ROUTES_WAIT_MS;
  for (;;) {
    const view = await system.client.getClusterMetadata({ timeoutMs: 5000 }).catch(() => null);
    const topic = view?.groups?.topics.find((t) => t.streamId === streamId && t.topicId === topicId);
    if (view !== null && view !== undefined && view.groups === null) return new Map();
    const ready = topic !== undefined && topic.partitions.length === workload.partitions && topic.partitions.every((p) => p.primary !== GROUP_PRIMARY_UNKNOWN);
    if (view !== null && view !== undefined && topic !== undefined && ready) {
      const ids = view.groups?.nodeReplicaIds ?? [];
      const entries = new Map<number, string>();
      for (const p of topic.partitions) {
        const at = ids.indexOf(p.primary);
        const node = view.nodes[workload.entry === 'backup' ? (at + 1) % view.nodes.length : at];
        if (node !== undefined) entries.set(p.partitionId, hostPort(node.address));
      }
      const layout = topic.partitions.map((p) => `p${p.partitionId}→replica ${p.primary}`).join(', ');
      process.stderr.write(`shoal: partition primaries ${layout}; producers connect to ${workload.entry === 'backup' ? 'the next node (forwarded)' : 'the primary'}\n`);
      return entries;
    }
    if (Date.now() > deadline) throw new Error(`the topic's partitions have no known primary after ${ROUTES_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

class ShoalTarget implements BenchTarget {
  readonly system = 'shoal' as const;
  readonly path: 'lean' | 'sdk';
  readonly description: string;
  readonly #system: ShoalSystem;
  #run: RunSpec | null = null;
  #ids: RunIds | null = null;
  #startViews: Awaited<ReturnType<ShoalSystem['views']>> = null;
  #retry: RetryObserver | null = null;

  constructor(system: ShoalSystem, path: 'lean' | 'sdk') {
    this.#system = system;
    this.path = path;
    this.description = path === 'lean'
      ? 'SendMessages frames built in place (one allocation per request), replies matched by timestamp'
      : 'SDK client.sendMessages(): message objects, encodeBatch, router with retries; pollMessages with checksums verified';
  }

  async prepare(run: RunSpec, retry: RetryObserver | null): Promise<void> {
    this.#run = run;
    this.#retry = retry;
    const client = this.#system.client;
    const stream = await client.stream.create({ name: `bench-${run.id}` });
    const topic = await client.topic.create({ streamId: stream.id, name: 'load', partitionsCount: run.workload.partitions });
    const entries = await partitionEntries(this.#system, stream.id, topic.id, run.workload);
    this.#ids = { streamId: stream.id, topicId: topic.id, primary: await this.#system.primaryAddress(), entries };
    this.#startViews = await this.#system.views(stream.id);
  }

  #context(): { run: RunSpec; ids: RunIds } {
    if (this.#run === null || this.#ids === null) throw new Error('prepare() first');
    return { run: this.#run, ids: this.#ids };
  }

  async openProducer(index: number): Promise<ProducerChannel> {
    const { run, ids } = this.#context();
    if (this.path === 'sdk') return new SdkProducer(this.#system.client, run, ids);
    const producer = new LeanProducer(this.#system, run, ids, this.#retry, index);
    await producer.connect(ids.primary);
    // Logged in on every node up front, as a production client keeps its connections warm: a
    // login during a failover is a metadata operation that waits for the new metadata primary,
    // which would add itself to the partition failover being measured.
    await Promise.allSettled(this.#system.addresses.map((address) => producer.connect(address)));
    return producer;
  }

  async openConsumer(_index: number): Promise<ConsumerChannel> {
    const { ids } = this.#context();
    if (this.path === 'sdk') return new SdkConsumer(this.#system.client, ids);
    // Asked again: after a failover the primary the run started with may be gone.
    return new LeanConsumer(await LeanConnection.open(await this.#system.primaryAddress(), this.#system.credentials), ids);
  }

  async cleanup(): Promise<void> {
    if (this.#ids === null) return;
    const before = this.#startViews;
    const after = await this.#system.views(this.#ids.streamId);
    if (before !== null && after !== null) {
      this.#system.viewChanges.metadata += after.metadata - before.metadata;
      for (const [p, view] of after.partitions) this.#system.viewChanges.partition += view - (before.partitions.get(p) ?? view);
    }
    await this.#system.client.stream.delete({ streamId: this.#ids.streamId }).catch(() => undefined);
  }
}

const RESEND_BUDGET_MS = 60_000;

/**
 * Lean producer: one connection per node it has used; each partition goes to the node that last
 * accepted it (its entry node first: the primary, or a backup that forwards). 58 → next node, same request (never entered a
 * pipeline, so no duplicate). A lost connection: without a retry observer the run fails; with one
 * (failover mode) the request is reported as re-sent and sent again on the next node.
 */
class LeanProducer implements ProducerChannel {
  readonly #system: ShoalSystem;
  readonly #run: RunSpec;
  readonly #ids: RunIds;
  readonly #retry: RetryObserver | null;
  readonly #template: Uint8Array;
  readonly #connections = new Map<string, Promise<LeanConnection>>();
  readonly #partitionNode = new Map<number, string>();
  #home: string;

  constructor(system: ShoalSystem, run: RunSpec, ids: RunIds, retry: RetryObserver | null, _index: number) {
    this.#system = system;
    this.#run = run;
    this.#ids = ids;
    this.#retry = retry;
    this.#template = payloadTemplate(run.workload.messageSize);
    this.#home = ids.primary;
  }

  async connect(address: string): Promise<LeanConnection> {
    let connection = this.#connections.get(address);
    if (connection === undefined) {
      connection = LeanConnection.open(address, this.#system.credentials, { connectTimeoutMs: 2000 });
      this.#connections.set(address, connection);
      connection.catch(() => this.#connections.delete(address));
    }
    const open = await connection;
    if (!open.open) {
      this.#connections.delete(address);
      return this.connect(address);
    }
    return open;
  }

  #nextNode(address: string): string {
    const nodes = this.#system.addresses;
    const at = nodes.indexOf(address);
    return nodes[(at + 1) % nodes.length] as string;
  }

  async send(request: OutgoingRequest): Promise<AckInfo> {
    const started = Date.now();
    let node = this.#partitionNode.get(request.partition) ?? this.#ids.entries.get(request.partition) ?? this.#home;
    for (let attempt = 0; ; attempt++) {
      try {
        const connection = await this.connect(node);
        const payload = await connection.request((fields) => buildSendMessagesFrame(fields, {
          streamId: this.#ids.streamId, topicId: this.#ids.topicId, partitionId: request.partition, count: request.count,
          messageSize: this.#run.workload.messageSize,
        }, {
          runTag: this.#run.runTag, producer: request.producer, firstSeq: request.firstSeq, template: this.#template,
          originTimestamp: BigInt(Date.now()) * 1000n,
        }));
        const reply = sendMessagesCommand.decodeResponse(payload);
        if (!reply.ok) throw new Error(`undecodable SendMessages reply from ${node}: ${reply.reason}`);
        const confirmation = reply.value.confirmations[0];
        this.#partitionNode.set(request.partition, node);
        this.#home = node;
        return {
          partition: confirmation?.partitionId ?? request.partition,
          offsets: confirmation === undefined ? null : Number(confirmation.baseOffset),
          node,
        };
      } catch (error) {
        const notAccepted = error instanceof LeanReplyError && error.notAccepted;
        const lost = error instanceof LeanConnectionLost;
        if (!(notAccepted || (lost && this.#retry !== null)) || Date.now() - started > RESEND_BUDGET_MS) throw error;
        if (lost) this.#retry?.resent(request);
        node = this.#nextNode(node);
        if (attempt >= this.#system.addresses.length - 1) await new Promise((resolve) => setTimeout(resolve, Math.min(200, 10 * attempt)));
      }
    }
  }

  async close(): Promise<void> {
    const connections = await Promise.allSettled([...this.#connections.values()]);
    await Promise.all(connections.map((c) => (c.status === 'fulfilled' ? c.value.close() : undefined)));
  }
}

class LeanConsumer implements ConsumerChannel {
  readonly #connection: LeanConnection;
  readonly #ids: RunIds;

  constructor(connection: LeanConnection, ids: RunIds) {
    this.#connection = connection;
    this.#ids = ids;
  }

  async readPartition(partition: number, expected: number, sink: ConsumeSink, idleMs: number): Promise<void> {
    let offset = 0;
    let read = 0;
    let lastProgress = Date.now();
    for (;;) {
      const started = performance.now();
      const payload = await this.#connection.poll(this.#ids.streamId, this.#ids.topicId, partition, offset, SHOAL_POLL_COUNT);
      const polled = pollMessagesCommand.decodeResponse(payload);
      if (!polled.ok) throw new Error(`undecodable PollMessages reply: ${polled.reason}`);
      let count = 0;
      let bytes = 0;
      let rest = polled.value.batches;
      while (rest.length >= BATCH_HEADER_SIZE) {
        const header = readBatchHeader(rest);
        const length = header === null ? 0 : Number(header.batchLength);
        if (header === null || length < BATCH_HEADER_SIZE || length > rest.length) throw new Error('malformed batch in a poll reply');
        const base = Number(header.baseOffset);
        const cursor = new FrameCursor(rest.subarray(0, length));
        while (cursor.next()) {
          const at = base + cursor.offsetDelta;
          const body = cursor.payload();
          sink.message(partition, at, body);
          if (at >= offset) offset = at + 1;
          count++;
          bytes += body.length;
        }
        if (cursor.reason !== null) throw new Error(`malformed frame in a poll reply: ${cursor.reason}`);
        rest = rest.subarray(length);
      }
      if (count > 0) {
        sink.poll((performance.now() - started) * 1e6, count, bytes);
        read += count;
        lastProgress = Date.now();
      }
      const current = Number(polled.value.currentOffset);
      const drained = count === 0 || offset > current;
      if (read >= expected && drained) return;
      if (count === 0) {
        if (Date.now() - lastProgress > idleMs) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  async close(): Promise<void> {
    await this.#connection.close();
  }
}

class SdkProducer implements ProducerChannel {
  readonly #client: ShoalClient;
  readonly #run: RunSpec;
  readonly #ids: RunIds;
  readonly #template: Uint8Array;

  constructor(client: ShoalClient, run: RunSpec, ids: RunIds) {
    this.#client = client;
    this.#run = run;
    this.#ids = ids;
    this.#template = payloadTemplate(run.workload.messageSize);
  }

  async send(request: OutgoingRequest): Promise<AckInfo> {
    const messages: Message[] = [];
    for (let i = 0; i < request.count; i++) {
      const payload = new Uint8Array(IDENTITY_BYTES + this.#template.length);
      encodeIdentity(payload, 0, this.#run.runTag, request.producer, request.firstSeq + i);
      payload.set(this.#template, IDENTITY_BYTES);
      messages.push({ id: benchMessageId(this.#run.runTag, request.producer, request.firstSeq + i), payload });
    }
    const reply = await this.#client.sendMessages({
      streamId: this.#ids.streamId, topicId: this.#ids.topicId, partitioning: { partitionId: request.partition }, messages,
    });
    const confirmation = reply.confirmations[0];
    return { partition: confirmation?.partitionId ?? request.partition, offsets: confirmation === undefined ? null : Number(confirmation.baseOffset) };
  }

  async close(): Promise<void> {
    // The client is shared with the system (closed with it).
  }
}

class SdkConsumer implements ConsumerChannel {
  readonly #client: ShoalClient;
  readonly #ids: RunIds;

  constructor(client: ShoalClient, ids: RunIds) {
    this.#client = client;
    this.#ids = ids;
  }

  async readPartition(partition: number, expected: number, sink: ConsumeSink, idleMs: number): Promise<void> {
    let offset = 0n;
    let read = 0;
    let lastProgress = Date.now();
    for (;;) {
      const started = performance.now();
      const polled = await this.#client.pollMessages({
        streamId: this.#ids.streamId, topicId: this.#ids.topicId, partitionId: partition, strategy: { offset }, count: SHOAL_POLL_COUNT,
      });
      let bytes = 0;
      for (const m of polled.messages) {
        sink.message(partition, Number(m.offset), m.payload);
        if (m.offset >= offset) offset = m.offset + 1n;
        bytes += m.payload.length;
      }
      const count = polled.messages.length;
      if (count > 0) {
        sink.poll((performance.now() - started) * 1e6, count, bytes);
        read += count;
        lastProgress = Date.now();
      }
      if (read >= expected && (count === 0 || offset > polled.currentOffset)) return;
      if (count === 0) {
        if (Date.now() - lastProgress > idleMs) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  async close(): Promise<void> {
    // Shared client.
  }
}
