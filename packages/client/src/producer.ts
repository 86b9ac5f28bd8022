import { type BatchMessage, BATCH_HEADER_SIZE, ErrorCode, type Identifier, MESSAGE_FRAME_HEADER_SIZE, buildBatch } from '@shoal/protocol';
import type { ShoalClient } from './client.js';
import { ShoalClosedError, type ShoalError, ShoalInvalidArgumentError, asShoalError } from './errors.js';
import { type Id, toIdentifier, toU32 } from './identifiers.js';
import { type Message, toBatchMessages } from './messages.js';
import { BalancedPartitioner, keyBytes, loadXxh32 } from './partitioner.js';
import type { TimerHandle } from './scheduler.js';
import { type WritableOptions, producerWritable } from './transport/streams.js';

/**
 * A batching, pipelining producer for one topic.
 *
 *   send(msgs) ─▶ partition (balanced | id | key) ─▶ accumulator[p] ──full or linger──▶ ready
 *                                                                                        │
 *        ack (quorum commit) ◀── SendMessages to p's primary ◀── at most maxInFlight ◀───┘
 *
 * - A `send` call is never split: its messages go to one partition, in one batch, and its promise
 *   resolves when that batch is acknowledged (the server replies after the quorum commit) with
 *   the partition and the offset of its first message; it rejects with the batch's error.
 * - Batches close at `batchMaxMessages` or `batchMaxBytes`, or `lingerMs` after their first send.
 * - Up to `maxInFlight` batches are outstanding at once (pipelined on the connection); retries of
 *   transient failures (57, 58, a lost connection during a view change) happen below, in the
 *   router, within its budget. With more than one batch in flight a retried batch can land after
 *   a later one of the same partition; use `maxInFlight: 1` when per-partition order must survive
 *   failures. Delivery is at-least-once.
 * - `send` waits while more than `bufferMaxBytes` are buffered (back-pressure).
 * - Partitioning is resolved client-side: round robin per send call (`balanced`), a fixed
 *   partition, or XXH32(key, seed 0) mod partitions, as the server would resolve a key.
 */
export type ProducerPartitioning = 'balanced' | { readonly partitionId: number } | { readonly key: string | Uint8Array };

export interface ProducerOptions {
  readonly streamId: Id;
  readonly topicId: Id;
  readonly partitioning?: ProducerPartitioning;
  /** Default 1000. */
  readonly batchMaxMessages?: number;
  /** Default 1 MiB (frames included). */
  readonly batchMaxBytes?: number;
  /** Default 5 ms; 0 still coalesces the sends of one tick. */
  readonly lingerMs?: number;
  /** Batches in flight at most (W), default 4. */
  readonly maxInFlight?: number;
  /** Default 32 MiB. */
  readonly bufferMaxBytes?: number;
  /** How long the topic's partition count is trusted (default 30 s). */
  readonly partitionsCacheMs?: number;
  /** Per-request timeout for a batch (the client default otherwise). */
  readonly timeoutMs?: number;
}

export interface SendOptions {
  /** Overrides the producer's partitioning for this call. */
  readonly partitioning?: ProducerPartitioning;
}

export interface SendResult {
  readonly partitionId: number;
  /** Offset of the first message of this send call. */
  readonly offset: bigint;
  readonly count: number;
}

export interface ProducerStats {
  readonly batchesSent: number;
  readonly batchesFailed: number;
  readonly messagesSent: number;
  readonly inFlight: number;
  readonly bufferedBytes: number;
}

interface Entry {
  readonly messages: readonly BatchMessage[];
  readonly bytes: number;
  readonly resolve: (result: SendResult) => void;
  readonly reject: (error: ShoalError) => void;
}

interface Accumulator {
  readonly partitionId: number;
  readonly entries: Entry[];
  messages: number;
  bytes: number;
  timer: TimerHandle | null;
}

export class Producer {
  readonly #client: ShoalClient;
  readonly #streamId: Identifier;
  readonly #topicId: Identifier;
  readonly #partitioning: ProducerPartitioning;
  readonly #batchMaxMessages: number;
  readonly #batchMaxBytes: number;
  readonly #lingerMs: number;
  readonly #maxInFlight: number;
  readonly #bufferMaxBytes: number;
  readonly #partitionsCacheMs: number;
  readonly #timeoutMs: number | undefined;
  readonly #balanced = new BalancedPartitioner();
  readonly #accumulators = new Map<number, Accumulator>();
  readonly #ready: Accumulator[] = [];
  #inFlight = 0;
  #bufferedBytes = 0;
  #partitions: { readonly count: number; readonly at: number } | null = null;
  #closed = false;
  #idleWaiters: (() => void)[] = [];
  /** Sends still resolving their partition (not yet in an accumulator): flush waits for them. */
  readonly #entering = new Set<Promise<unknown>>();
  #roomWaiters: (() => void)[] = [];
  #stats = { batchesSent: 0, batchesFailed: 0, messagesSent: 0 };

  constructor(client: ShoalClient, options: ProducerOptions) {
    this.#client = client;
    this.#streamId = toIdentifier(options.streamId, 'stream id');
    this.#topicId = toIdentifier(options.topicId, 'topic id');
    this.#partitioning = options.partitioning ?? 'balanced';
    this.#batchMaxMessages = positive(options.batchMaxMessages ?? 1000, 'batchMaxMessages');
    this.#batchMaxBytes = positive(options.batchMaxBytes ?? 1024 * 1024, 'batchMaxBytes');
    this.#lingerMs = Math.max(0, options.lingerMs ?? 5);
    this.#maxInFlight = positive(options.maxInFlight ?? 4, 'maxInFlight');
    this.#bufferMaxBytes = positive(options.bufferMaxBytes ?? 32 * 1024 * 1024, 'bufferMaxBytes');
    this.#partitionsCacheMs = options.partitionsCacheMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs;
  }

  get stats(): ProducerStats {
    return { ...this.#stats, inFlight: this.#inFlight, bufferedBytes: this.#bufferedBytes };
  }

  /** Queues messages; resolves when their batch is acknowledged. */
  async send(messages: Message | readonly Message[], options: SendOptions = {}): Promise<SendResult> {
    if (this.#closed) throw new ShoalClosedError('producer');
    const list: readonly Message[] = Array.isArray(messages) ? messages : [messages as Message];
    if (list.length === 0) throw new ShoalInvalidArgumentError('send: no messages');
    const batchMessages = toBatchMessages(list, this.#client.encodeOptions);
    const bytes = batchMessages.reduce((sum, m) => sum + MESSAGE_FRAME_HEADER_SIZE + m.payload.length + (m.userHeaders?.length ?? 0), 0);
    let acked: Promise<SendResult> | null = null;
    const entering = (async () => {
      const partitionId = await this.#partitionFor(options.partitioning ?? this.#partitioning);
      while (this.#bufferedBytes > 0 && this.#bufferedBytes + bytes > this.#bufferMaxBytes) {
        await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
        if (this.#closed) throw new ShoalClosedError('producer');
      }
      acked = new Promise<SendResult>((resolve, reject) => {
        this.#bufferedBytes += bytes;
        this.#append(partitionId, { messages: batchMessages, bytes, resolve, reject });
      });
    })();
    this.#entering.add(entering);
    try {
      await entering;
    } finally {
      this.#entering.delete(entering);
    }
    return acked as unknown as Promise<SendResult>;
  }

  /** Sends everything buffered now and resolves when every batch has settled. */
  /**
   * A Node `Writable` (object mode) that sends every message written to it (a Message, or a
   * string / bytes payload) through this producer and calls back once the server acknowledged it;
   * `end()` flushes. The producer stays open (close it yourself).
   */
  writable(options: WritableOptions = {}): ReturnType<typeof producerWritable> {
    return producerWritable(this, options);
  }

  async flush(): Promise<void> {
    while (this.#entering.size > 0) await Promise.allSettled([...this.#entering]);
    for (const accumulator of [...this.#accumulators.values()]) this.#seal(accumulator);
    if (this.#idle()) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Flushes, then refuses further sends. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    for (const wake of this.#roomWaiters.splice(0)) wake();
  }

  // ── partitioning ─────────────────────────────────────────────────────────────────────────

  async #partitionFor(partitioning: ProducerPartitioning): Promise<number> {
    if (partitioning !== 'balanced' && 'partitionId' in partitioning) return toU32(partitioning.partitionId, 'partition id');
    const count = await this.#partitionsCount();
    if (partitioning === 'balanced') return this.#balanced.next(count);
    const hash = await loadXxh32();
    return hash(keyBytes(partitioning.key)) % count;
  }

  async #partitionsCount(): Promise<number> {
    const now = this.#client.scheduler.now();
    if (this.#partitions !== null && now - this.#partitions.at < this.#partitionsCacheMs) return this.#partitions.count;
    const topic = await this.#client.topic.get({ streamId: identifierInput(this.#streamId), topicId: identifierInput(this.#topicId) });
    if (topic === null) throw new ShoalInvalidArgumentError('producer: topic not found', ErrorCode.TopicIdNotFound);
    if (topic.partitionsCount < 1) throw new ShoalInvalidArgumentError('producer: topic has no partitions', ErrorCode.PartitionNotFound);
    this.#partitions = { count: topic.partitionsCount, at: now };
    return topic.partitionsCount;
  }

  // ── batching ─────────────────────────────────────────────────────────────────────────────

  #append(partitionId: number, entry: Entry): void {
    let accumulator = this.#accumulators.get(partitionId);
    if (accumulator !== undefined && accumulator.entries.length > 0 &&
      (accumulator.messages + entry.messages.length > this.#batchMaxMessages || accumulator.bytes + entry.bytes > this.#batchMaxBytes - BATCH_HEADER_SIZE)) {
      this.#seal(accumulator);
      accumulator = undefined;
    }
    if (accumulator === undefined) {
      accumulator = { partitionId, entries: [], messages: 0, bytes: 0, timer: null };
      this.#accumulators.set(partitionId, accumulator);
    }
    accumulator.entries.push(entry);
    accumulator.messages += entry.messages.length;
    accumulator.bytes += entry.bytes;
    if (accumulator.messages >= this.#batchMaxMessages || accumulator.bytes >= this.#batchMaxBytes - BATCH_HEADER_SIZE) {
      this.#seal(accumulator);
    } else if (accumulator.timer === null) {
      const sealing = accumulator;
      accumulator.timer = this.#client.scheduler.setTimer(this.#lingerMs, () => this.#seal(sealing));
    }
  }

  #seal(accumulator: Accumulator): void {
    if (this.#accumulators.get(accumulator.partitionId) !== accumulator) return;
    this.#accumulators.delete(accumulator.partitionId);
    if (accumulator.timer !== null) this.#client.scheduler.clearTimer(accumulator.timer);
    accumulator.timer = null;
    if (accumulator.entries.length === 0) return;
    this.#ready.push(accumulator);
    this.#dispatch();
  }

  #dispatch(): void {
    while (this.#inFlight < this.#maxInFlight && this.#ready.length > 0) {
      const batch = this.#ready.shift() as Accumulator;
      this.#inFlight++;
      void this.#sendBatch(batch).finally(() => {
        this.#inFlight--;
        this.#release(batch);
        this.#dispatch();
        if (this.#idle()) for (const wake of this.#idleWaiters.splice(0)) wake();
      });
    }
  }

  async #sendBatch(batch: Accumulator): Promise<void> {
    try {
      const built = buildBatch(batch.entries.flatMap((e) => e.messages));
      if (!built.ok) throw new ShoalInvalidArgumentError(`cannot build the batch: ${built.reason}`);
      const options = this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs };
      const reply = await this.#client.sendBatch(this.#streamId, this.#topicId, { kind: 'partition_id', partitionId: batch.partitionId }, built.value, batch.messages, options);
      const confirmation = reply.confirmations.find((c) => c.partitionId === batch.partitionId) ?? reply.confirmations[0];
      const base = confirmation?.baseOffset ?? 0n;
      const partitionId = confirmation?.partitionId ?? batch.partitionId;
      let index = 0;
      for (const entry of batch.entries) {
        entry.resolve({ partitionId, offset: base + BigInt(index), count: entry.messages.length });
        index += entry.messages.length;
      }
      this.#stats.batchesSent++;
      this.#stats.messagesSent += batch.messages;
    } catch (thrown) {
      const error = asShoalError(thrown);
      this.#stats.batchesFailed++;
      for (const entry of batch.entries) entry.reject(error);
    }
  }

  #release(batch: Accumulator): void {
    this.#bufferedBytes -= batch.bytes;
    for (const wake of this.#roomWaiters.splice(0)) wake();
  }

  #idle(): boolean {
    return this.#inFlight === 0 && this.#ready.length === 0 && this.#accumulators.size === 0;
  }
}

function positive(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1) throw new ShoalInvalidArgumentError(`${what} must be a positive integer (got ${value})`);
  return value;
}

function identifierInput(id: Identifier): Id {
  return id.value;
}
