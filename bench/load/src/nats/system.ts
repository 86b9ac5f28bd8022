import {
  type JetStreamClient, type JetStreamManager, type Msg, type NatsConnection, StorageType, type Subscription, connect, createInbox,
} from 'nats';
import { IDENTITY_BYTES, encodeIdentity } from '../exactly-once.js';
import type { Workload } from '../flags.js';
import type {
  AckInfo, BenchSystem, BenchTarget, ConsumeSink, ConsumerChannel, OutgoingRequest, ProducerChannel, RetryObserver, RunSpec,
  RunningCluster,
} from '../target.js';
import { natsServerVersion } from './launcher.js';

/**
 * NATS JetStream as a bench target.
 *
 * - Stream: one per run, `num_replicas` = the workload's replicas (3 for the R3 figures),
 *   file storage, subjects `bench.<run>.p<i>`: a workload partition is a subject of the stream.
 * - Lean publish path (the headline figure, mirroring Shoal's lean path): core `PUB` with a
 *   per-message reply subject under one inbox per producer, and ONE subscription on that inbox
 *   collecting the JetStream acks (`{"stream":…,"seq":N}`), so the client library's per-publish
 *   promise machinery is not what is measured. "Batch" M = M messages published back to back,
 *   then the request is complete when all M acks are in; `inFlight` W = W such requests per
 *   producer.
 * - JetStream API path (secondary figure): `js.publish()` per message, the same windows.
 * - Consume: an ordered consumer (ephemeral, pull-based, ack policy none: no per-message ack)
 *   per partition subject, read with `consume({ max_messages: 1000 })`: a continuous pull that
 *   the client refills at half its buffer, the fastest way nats.js reads a stream (measured here:
 *   ~2× a loop of `fetch(1000)` calls, whose every pull is a round trip). No per-pull latency
 *   exists on that path, so NATS consume latency is reported as n/a.
 */
export const NATS_FETCH_MAX = 1000;
const REQUEST_TIMEOUT_MS = 30_000;

export class NatsSystem implements BenchSystem {
  readonly name = 'nats' as const;
  readonly cluster: RunningCluster;
  readonly facts: Readonly<Record<string, string | number | boolean>>;
  #admin: NatsConnection | null = null;

  constructor(cluster: RunningCluster, binary: string) {
    this.cluster = cluster;
    this.facts = {
      server: natsServerVersion(binary),
      nodes: cluster.processes.length,
      storage: 'file (JetStream default sync: the OS flushes; nats-server fsyncs every 2 min)',
      client: 'nats 2.29.3 (nats.js)',
    };
  }

  get addresses(): readonly string[] {
    return this.cluster.addresses;
  }

  serverPids(): readonly number[] {
    return this.cluster.processes.filter((p) => p.alive).map((p) => p.pid);
  }

  async admin(): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
    if (this.#admin === null) this.#admin = await connect({ servers: [...this.addresses], reconnect: true, maxReconnectAttempts: 10 });
    return { nc: this.#admin, jsm: await this.#admin.jetstreamManager({ timeout: 10_000 }) };
  }

  targets(workload: Workload): readonly BenchTarget[] {
    const lean = new NatsTarget(this, 'lean');
    // The client-API figure is the secondary number for windowed single-message publish.
    return workload.batch === 1 && workload.inFlight > 1 ? [lean, new NatsTarget(this, 'jetstream-api')] : [lean];
  }

  async close(): Promise<void> {
    const admin = this.#admin;
    this.#admin = null;
    if (admin !== null) await admin.close().catch(() => undefined);
    await this.cluster.stop();
  }
}

/**
 * Creates a file-storage stream of `replicas` replicas and waits until its group has a leader
 * and every replica is current. Right after the servers start, JetStream's meta group may not
 * know every peer yet and refuses placement ("no suitable peers for placement"): that is retried.
 */
export async function addReplicatedStream(jsm: JetStreamManager, stream: string, subjects: string, replicas: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await jsm.streams.add({ name: stream, subjects: [subjects], storage: StorageType.File, num_replicas: replicas });
      break;
    } catch (error) {
      const transient = error instanceof Error && /no suitable peers|insufficient resources|timeout/i.test(error.message);
      if (!transient || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  // The stream group must have a leader and caught-up peers before the clock starts.
  for (;;) {
    const info = await jsm.streams.info(stream);
    const peers = info.cluster?.replicas ?? [];
    if (info.cluster?.leader !== undefined && peers.length === replicas - 1 && peers.every((p) => p.current)) return;
    if (Date.now() > deadline) throw new Error(`NATS stream ${stream}: no leader with current replicas within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function streamNames(run: RunSpec): { stream: string; subjectPrefix: string } {
  const token = run.id.replace(/[^A-Za-z0-9_-]/g, '_');
  return { stream: `BENCH_${token}`, subjectPrefix: `bench.${token}` };
}

class NatsTarget implements BenchTarget {
  readonly system = 'nats' as const;
  readonly path: 'lean' | 'jetstream-api';
  readonly description: string;
  readonly #system: NatsSystem;
  #run: RunSpec | null = null;

  constructor(system: NatsSystem, path: 'lean' | 'jetstream-api') {
    this.#system = system;
    this.path = path;
    this.description = path === 'lean'
      ? 'core PUB with a reply inbox per message, one subscription collecting the JetStream acks'
      : 'nats.js JetStream API: js.publish() per message, awaiting each PubAck promise';
  }

  get run(): RunSpec {
    if (this.#run === null) throw new Error('prepare() first');
    return this.#run;
  }

  async prepare(run: RunSpec, _retry: RetryObserver | null): Promise<void> {
    this.#run = run;
    const { jsm } = await this.#system.admin();
    const { stream, subjectPrefix } = streamNames(run);
    await addReplicatedStream(jsm, stream, `${subjectPrefix}.>`, run.workload.replicas);
  }

  async openProducer(index: number): Promise<ProducerChannel> {
    const nc = await connect({ servers: [...this.#system.addresses], name: `bench-producer-${index}`, reconnect: false });
    const { subjectPrefix } = streamNames(this.run);
    return this.path === 'lean'
      ? new LeanProducer(nc, subjectPrefix, this.run)
      : new ApiProducer(nc, nc.jetstream({ timeout: REQUEST_TIMEOUT_MS }), subjectPrefix, this.run);
  }

  async openConsumer(index: number): Promise<ConsumerChannel> {
    const nc = await connect({ servers: [...this.#system.addresses], name: `bench-consumer-${index}`, reconnect: false });
    const { stream, subjectPrefix } = streamNames(this.run);
    return new NatsConsumer(nc, nc.jetstream(), stream, subjectPrefix);
  }

  async cleanup(): Promise<void> {
    if (this.#run === null) return;
    const { jsm } = await this.#system.admin();
    await jsm.streams.delete(streamNames(this.#run).stream).catch(() => false);
  }
}

/** A payload template; each message is a copy with its identity written in (nats.js keeps a reference until flushed). */
function payloadFor(template: Uint8Array, run: RunSpec, producer: number, seq: number): Uint8Array {
  const payload = template.slice();
  encodeIdentity(payload, 0, run.runTag, producer, seq);
  return payload;
}

function template(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = IDENTITY_BYTES; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return bytes;
}

interface PendingRequest {
  readonly request: OutgoingRequest;
  readonly offsets: number[];
  remaining: number;
  readonly resolve: (ack: AckInfo) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

const decoder = new TextDecoder();

/** Reads `"seq":N` from a JetStream publish ack without a full JSON parse; null when it is an error. */
export function parsePubAck(data: Uint8Array): { seq: number } | { error: string } {
  const text = decoder.decode(data);
  const at = text.indexOf('"seq":');
  if (at >= 0 && !text.includes('"error"')) {
    let end = at + 6;
    while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
    return { seq: Number(text.slice(at + 6, end)) };
  }
  return { error: text.length === 0 ? 'empty ack (no JetStream responder?)' : text };
}

class LeanProducer implements ProducerChannel {
  readonly #nc: NatsConnection;
  readonly #subjectPrefix: string;
  readonly #run: RunSpec;
  readonly #template: Uint8Array;
  readonly #inbox: string;
  readonly #sub: Subscription;
  /** message id (the reply subject's last token) → its request and index. */
  readonly #byMessage = new Map<number, { pending: PendingRequest; index: number }>();
  #nextId = 1;

  constructor(nc: NatsConnection, subjectPrefix: string, run: RunSpec) {
    this.#nc = nc;
    this.#subjectPrefix = subjectPrefix;
    this.#run = run;
    this.#template = template(run.workload.messageSize);
    this.#inbox = createInbox();
    this.#sub = nc.subscribe(`${this.#inbox}.*`, { callback: (error, msg) => this.#onAck(error, msg) });
  }

  #onAck(error: Error | null, msg: Msg): void {
    if (error !== null) return;
    const id = Number(msg.subject.slice(this.#inbox.length + 1));
    const entry = this.#byMessage.get(id);
    if (entry === undefined) return;
    this.#byMessage.delete(id);
    const { pending, index } = entry;
    const ack = parsePubAck(msg.data);
    if ('error' in ack) {
      this.#fail(pending, new Error(`JetStream rejected a publish: ${ack.error}`));
      return;
    }
    pending.offsets[index] = ack.seq;
    if (--pending.remaining === 0) {
      clearTimeout(pending.timer);
      pending.resolve({ partition: pending.request.partition, offsets: pending.offsets });
    }
  }

  #fail(pending: PendingRequest, error: Error): void {
    clearTimeout(pending.timer);
    for (const [id, entry] of this.#byMessage) if (entry.pending === pending) this.#byMessage.delete(id);
    pending.reject(error);
  }

  send(request: OutgoingRequest): Promise<AckInfo> {
    return new Promise((resolve, reject) => {
      const pending: PendingRequest = {
        request, offsets: new Array<number>(request.count).fill(Number.NaN), remaining: request.count, resolve, reject,
        timer: setTimeout(() => this.#fail(pending, new Error(`no JetStream ack within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS),
      };
      const subject = `${this.#subjectPrefix}.p${request.partition}`;
      for (let i = 0; i < request.count; i++) {
        const id = this.#nextId++;
        this.#byMessage.set(id, { pending, index: i });
        this.#nc.publish(subject, payloadFor(this.#template, this.#run, request.producer, request.firstSeq + i), { reply: `${this.#inbox}.${id}` });
      }
    });
  }

  async close(): Promise<void> {
    this.#sub.unsubscribe();
    await this.#nc.close();
  }
}

class ApiProducer implements ProducerChannel {
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #subjectPrefix: string;
  readonly #run: RunSpec;
  readonly #template: Uint8Array;

  constructor(nc: NatsConnection, js: JetStreamClient, subjectPrefix: string, run: RunSpec) {
    this.#nc = nc;
    this.#js = js;
    this.#subjectPrefix = subjectPrefix;
    this.#run = run;
    this.#template = template(run.workload.messageSize);
  }

  async send(request: OutgoingRequest): Promise<AckInfo> {
    const subject = `${this.#subjectPrefix}.p${request.partition}`;
    const acks = await Promise.all(Array.from({ length: request.count }, (_, i) =>
      this.#js.publish(subject, payloadFor(this.#template, this.#run, request.producer, request.firstSeq + i))));
    return { partition: request.partition, offsets: acks.map((a) => a.seq) };
  }

  async close(): Promise<void> {
    await this.#nc.close();
  }
}

class NatsConsumer implements ConsumerChannel {
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #stream: string;
  readonly #subjectPrefix: string;

  constructor(nc: NatsConnection, js: JetStreamClient, stream: string, subjectPrefix: string) {
    this.#nc = nc;
    this.#js = js;
    this.#stream = stream;
    this.#subjectPrefix = subjectPrefix;
  }

  async readPartition(partition: number, expected: number, sink: ConsumeSink, idleMs: number): Promise<void> {
    const consumer = await this.#js.consumers.get(this.#stream, { filterSubjects: `${this.#subjectPrefix}.p${partition}` });
    if (expected === 0) {
      const info = await consumer.info(true).catch(() => null);
      if (info === null || info.num_pending === 0) return;
    }
    const messages = await consumer.consume({ max_messages: NATS_FETCH_MAX });
    let read = 0;
    let chunk = 0;
    let chunkBytes = 0;
    let lastProgress = Date.now();
    const idle = setInterval(() => {
      if (Date.now() - lastProgress > idleMs) void messages.close();
    }, 250);
    try {
      for await (const m of messages) {
        sink.message(partition, m.seq, m.data);
        read++;
        chunk++;
        chunkBytes += m.data.length;
        lastProgress = Date.now();
        const drained = m.info.pending === 0 && read >= expected;
        // The pull is continuous (refilled at half the buffer); account messages in chunks of one pull's size.
        if (chunk === NATS_FETCH_MAX || drained) {
          sink.poll(null, chunk, chunkBytes);
          chunk = 0;
          chunkBytes = 0;
        }
        if (drained) break;
      }
    } finally {
      clearInterval(idle);
      if (chunk > 0) sink.poll(null, chunk, chunkBytes);
    }
    await consumer.delete().catch(() => false);
  }

  async close(): Promise<void> {
    await this.#nc.close();
  }
}
