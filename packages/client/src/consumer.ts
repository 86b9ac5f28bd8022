import { ErrorCode } from '@shoal/protocol';
import type { ShoalClient } from './client.js';
import { ShoalAbortError, ShoalClosedError, ShoalInvalidArgumentError, ShoalResponseError } from './errors.js';
import { type ConsumerInput, type Id, type PollingStrategyInput } from './identifiers.js';
import type { ReceivedMessage } from './messages.js';
import { backoffDelay } from './scheduler.js';
import { type ReadableOptions, consumerReadable } from './transport/streams.js';

/**
 * An async iterator over the messages of one topic, as a single consumer or as a member of a
 * consumer group:
 *
 *   const consumer = client.consumer({ streamId: 'orders', topicId: 'created', group: { name: 'billing' } });
 *   for await (const message of consumer) handle(message);   // stop with `signal` or `break`
 *
 * Polling: the assigned partitions are polled in turn, `batchSize` messages at a time. The first
 * poll of a partition uses `strategy` (default `next`: after the stored offset); later polls ask
 * for the offset after the last message delivered, so progress does not depend on commits. When a
 * whole round returns nothing, the consumer sleeps with exponential back-off between
 * `pollIntervalMs` and `pollIntervalMaxMs`.
 *
 * Groups: the consumer joins the group (creating it unless `create: false`), asks for its
 * assignment (SyncConsumerGroup) and polls those partitions with the group as the consumer; it
 * re-syncs every `groupSyncIntervalMs`, re-joins when the server no longer knows it as a member
 * (a reconnect starts a new session), and leaves the group on `close()`.
 *
 * Commits (`autoCommit`):
 * - `after-process` (default): the offset of a message is stored (StoreConsumerOffset, ack
 *   Quorum) once it has been processed, that is once the loop asked for the next message; the
 *   consumer commits at the end of every polled batch and on close. A crash replays at most the
 *   uncommitted tail: at-least-once. On `break` the message in hand counts as not processed.
 * - `server`: the poll itself carries `auto_commit = 1` and the server stores the offset as it
 *   serves the messages: nothing to send, but messages polled and not yet processed when the
 *   consumer dies are skipped (at-most-once for them). A poll served by a follower does not
 *   advance the durable offset (clustering/client-failover.mdx).
 * - `none`: nothing is stored by itself; `commit()` stores the processed offsets (same rule as
 *   `after-process`: a message counts once the loop asked for the next one), or track offsets
 *   elsewhere.
 */
export type AutoCommit = 'after-process' | 'server' | 'none';

export interface ConsumerOptions {
  readonly streamId: Id;
  readonly topicId: Id;
  /** Single consumer id (default 0); ignored when `group` is set. */
  readonly consumer?: Id;
  /** Consume as a member of this group. */
  readonly group?: { readonly name: string; readonly create?: boolean } | { readonly id: number };
  /** Single consumer: the partitions to read (default: all of the topic's). */
  readonly partitionId?: number | readonly number[];
  readonly strategy?: PollingStrategyInput;
  /** Messages per poll (default 100). */
  readonly batchSize?: number;
  readonly autoCommit?: AutoCommit;
  readonly pollIntervalMs?: number;
  readonly pollIntervalMaxMs?: number;
  readonly groupSyncIntervalMs?: number;
  readonly verifyChecksums?: boolean;
  /** Stops the iteration (it ends normally, committing what was processed). */
  readonly signal?: AbortSignal;
}

export class Consumer implements AsyncIterable<ReceivedMessage> {
  readonly #client: ShoalClient;
  readonly #options: ConsumerOptions;
  readonly #stop = new AbortController();
  #consumer: ConsumerInput;
  #groupId: number | null = null;
  #partitions: number[] = [];
  #generation = -1n;
  #nextSync = 0;
  /** Next offset to ask for, per partition (absent: use the starting strategy). */
  readonly #position = new Map<number, bigint>();
  /** Last processed offset per partition not yet stored. */
  readonly #pending = new Map<number, bigint>();
  #iterating = false;
  #closed = false;

  constructor(client: ShoalClient, options: ConsumerOptions) {
    this.#client = client;
    this.#options = options;
    this.#consumer = { kind: 'consumer', id: options.consumer ?? 0 };
    if (options.signal !== undefined) {
      if (options.signal.aborted) this.#stop.abort(options.signal.reason);
      else options.signal.addEventListener('abort', () => this.#stop.abort(options.signal?.reason), { once: true });
    }
  }

  /** The partitions currently read. */
  get assignment(): readonly number[] {
    return this.#partitions;
  }

  /** The group's id once joined (null for a single consumer). */
  get groupId(): number | null {
    return this.#groupId;
  }

  [Symbol.asyncIterator](): AsyncIterator<ReceivedMessage> {
    if (this.#iterating) throw new ShoalInvalidArgumentError('a consumer can be iterated once at a time');
    if (this.#closed) throw new ShoalClosedError('consumer');
    this.#iterating = true;
    return this.#run();
  }

  /**
   * A Node `Readable` (object mode) of this consumer's messages, with back-pressure: it polls only
   * while its buffer (`highWaterMark`, default 16) has room. A message counts as processed (for
   * `after-process` commits) once the stream has handed it on and asked for the next; to commit
   * only after a sink finished with a message, use `autoCommit: 'none'` and `commit(message)`.
   * Destroying the stream closes the consumer.
   */
  readable(options: ReadableOptions = {}): ReturnType<typeof consumerReadable> {
    return consumerReadable(this, options);
  }

  /**
   * Stores offsets now: the processed ones, or with `message`, that message's offset on its
   * partition (everything up to it counts as processed).
   */
  async commit(message?: Pick<ReceivedMessage, 'partitionId' | 'offset'>): Promise<void> {
    if (message !== undefined) {
      await this.#client.offset.store({
        consumer: this.#consumer, streamId: this.#options.streamId, topicId: this.#options.topicId, partitionId: message.partitionId, offset: message.offset,
      });
      if ((this.#pending.get(message.partitionId) ?? -1n) <= message.offset) this.#pending.delete(message.partitionId);
      return;
    }
    for (const [partitionId, offset] of [...this.#pending]) {
      await this.#client.offset.store({
        consumer: this.#consumer, streamId: this.#options.streamId, topicId: this.#options.topicId, partitionId, offset,
      });
      if (this.#pending.get(partitionId) === offset) this.#pending.delete(partitionId);
    }
  }

  /** Stops the iteration, commits (after-process) and leaves the group. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop.abort(new ShoalClosedError('consumer'));
    if (!this.#iterating) await this.#finish();
  }

  async* #run(): AsyncGenerator<ReceivedMessage> {
    const signal = this.#stop.signal;
    const mode = this.#options.autoCommit ?? 'after-process';
    const batchSize = this.#options.batchSize ?? 100;
    let emptyRounds = 0;
    let cursor = 0;
    let emptyInRound = 0;
    try {
      await this.#start(signal);
      while (!signal.aborted) {
        if (this.#groupId !== null && this.#client.scheduler.now() >= this.#nextSync) await this.#sync(signal);
        if (this.#partitions.length === 0) {
          await this.#pause(emptyRounds++, signal);
          continue;
        }
        const partitionId = this.#partitions[cursor % this.#partitions.length] as number;
        cursor++;
        const position = this.#position.get(partitionId);
        const polled = await this.#client.pollMessages({
          streamId: this.#options.streamId,
          topicId: this.#options.topicId,
          consumer: this.#consumer,
          partitionId,
          strategy: position === undefined ? (this.#options.strategy ?? 'next') : { offset: position },
          count: batchSize,
          autoCommit: mode === 'server',
          ...(this.#options.verifyChecksums === undefined ? {} : { verifyChecksums: this.#options.verifyChecksums }),
        }, { signal });
        const fresh = polled.messages.filter((m) => position === undefined || m.offset >= position);
        if (fresh.length === 0) {
          emptyInRound++;
          if (emptyInRound >= this.#partitions.length) {
            emptyInRound = 0;
            await this.#pause(emptyRounds++, signal);
          }
          continue;
        }
        emptyRounds = 0;
        emptyInRound = 0;
        for (const message of fresh) {
          this.#position.set(partitionId, message.offset + 1n);
          yield message;
          // Processed: the loop asked for the next message. `commit()` stores it (by itself in after-process).
          if (mode !== 'server') this.#pending.set(partitionId, message.offset);
          if (signal.aborted) break;
        }
        if (mode === 'after-process') await this.commit();
      }
    } catch (error) {
      if (!(error instanceof ShoalAbortError) || !signal.aborted) throw error;
    } finally {
      this.#iterating = false;
      await this.#finish();
    }
  }

  async #start(signal: AbortSignal): Promise<void> {
    const group = this.#options.group;
    if (group !== undefined) {
      await this.#join(signal);
      await this.#sync(signal);
      return;
    }
    const explicit = this.#options.partitionId;
    if (explicit !== undefined) {
      this.#partitions = typeof explicit === 'number' ? [explicit] : [...explicit];
      return;
    }
    const topic = await this.#client.topic.get({ streamId: this.#options.streamId, topicId: this.#options.topicId }, { signal });
    if (topic === null) throw new ShoalInvalidArgumentError('consumer: topic not found', ErrorCode.TopicIdNotFound);
    this.#partitions = topic.partitions.map((p) => p.id);
  }

  async #join(signal: AbortSignal): Promise<void> {
    const group = this.#options.group;
    if (group === undefined) return;
    const ids = { streamId: this.#options.streamId, topicId: this.#options.topicId };
    if ('id' in group) {
      await this.#client.group.join({ ...ids, groupId: group.id }, { signal });
      this.#groupId = group.id;
    } else {
      const existing = await this.#client.group.get({ ...ids, groupId: group.name }, { signal });
      if (existing === null && group.create === false) throw new ShoalInvalidArgumentError(`consumer group '${group.name}' not found`, ErrorCode.ConsumerGroupNameNotFound);
      const details = existing ?? await this.#client.group.create({ ...ids, name: group.name }, { signal }).catch(async (error: unknown) => {
        // Another member created it first.
        if (!(error instanceof ShoalResponseError) || error.code !== ErrorCode.ConsumerGroupNameAlreadyExists) throw error;
        const raced = await this.#client.group.get({ ...ids, groupId: group.name }, { signal });
        if (raced === null) throw error;
        return raced;
      });
      await this.#client.group.join({ ...ids, groupId: details.id }, { signal });
      this.#groupId = details.id;
    }
    this.#consumer = { kind: 'consumer_group', id: this.#groupId };
  }

  async #sync(signal: AbortSignal): Promise<void> {
    if (this.#groupId === null) return;
    const ids = { streamId: this.#options.streamId, topicId: this.#options.topicId, groupId: this.#groupId };
    let assignment = await this.#client.group.sync(ids, { signal });
    if (assignment === null) {
      // Not a member any more (for instance a reconnect started a new session): join again.
      await this.#join(signal);
      assignment = await this.#client.group.sync(ids, { signal });
    }
    this.#nextSync = this.#client.scheduler.now() + (this.#options.groupSyncIntervalMs ?? 1000);
    const partitions = [...(assignment?.partitions ?? [])].sort((a, b) => a - b);
    if (assignment !== null && assignment.generation !== this.#generation) {
      // Partitions taken away: forget the local positions (what was processed there is committed
      // with the current batch or on close; the new owner starts at the stored offset).
      const kept = new Set(partitions);
      for (const p of this.#partitions) {
        if (!kept.has(p)) this.#position.delete(p);
      }
      this.#generation = assignment.generation;
    }
    this.#partitions = partitions;
  }

  async #pause(attempt: number, signal: AbortSignal): Promise<void> {
    const base = this.#options.pollIntervalMs ?? 100;
    const max = Math.max(base, this.#options.pollIntervalMaxMs ?? 1000);
    await this.#client.scheduler.sleep(backoffDelay(attempt, base, max, () => 1), signal);
  }

  async #finish(): Promise<void> {
    if ((this.#options.autoCommit ?? 'after-process') === 'after-process') await this.commit().catch(() => undefined);
    if (this.#closed && this.#groupId !== null) {
      await this.#client.group.leave({ streamId: this.#options.streamId, topicId: this.#options.topicId, groupId: this.#groupId }).catch(() => undefined);
    }
  }
}
