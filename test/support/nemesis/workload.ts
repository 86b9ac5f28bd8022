/**
 * What the nemesis runs against the cluster while faults happen, and the ledger of every outcome:
 *
 * - producers: each sends batches of uniquely named messages (`<run>-p<producer>-b<batch>-m<i>`)
 *   to a seeded partition, one batch at a time. A batch whose send fails (timeout, connection
 *   lost: the outcome is unknown) is re-sent, same payloads, until it is acknowledged or the run
 *   stops; its `attempts` bound how many copies may be stored (at-least-once from re-sends only).
 *   The SDK re-sends no lost-connection or timed-out write (`retryUncertainWrites: false`), but it
 *   does re-send after an answer 57 (TransientNotCommitted: outcome unknown): the session replays
 *   the identical frame on the same connection, then the router retries on another node, in
 *   another session. Each such re-send counts as an attempt (`sdkResends`; docs/nemesis.md).
 * - a metadata worker: creates uniquely named streams and deletes some of them again, recording
 *   which creates and deletes were acknowledged and which outcomes are unknown.
 *
 * Every acknowledgement records when it arrived: the longest gap between data acknowledgements is
 * the run's write stall figure (reported, never asserted).
 */
import { ShoalResponseError, type ShoalClient } from '@shoal/client';
import { ErrorCode } from '@shoal/protocol';
import { Prng } from '@shoal/stdx';

export interface BatchRecord {
  readonly producer: number;
  readonly partition: number;
  readonly payloads: readonly string[];
  attempts: number;
  /** What the SDK retried on its own (error class and code), for the report of a duplicate. */
  readonly sdkRetries: string[];
  /** Base offset of the acknowledgement, or null (never acknowledged: outcome unknown). */
  ackedAt: bigint | null;
}

export interface StreamRecord {
  readonly name: string;
  create: 'acked' | 'unknown';
  delete: 'none' | 'acked' | 'unknown';
}

export interface Ledger {
  readonly batches: BatchRecord[];
  readonly streams: Map<string, StreamRecord>;
  /** Wall-clock ms of every acknowledged data send, in arrival order. */
  readonly ackTimes: number[];
  /** The same for acknowledged metadata operations. */
  readonly metadataAckTimes: number[];
  /** First few send errors, for the report. */
  readonly errors: string[];
  /** Attempts the SDK made on its own after an answer 57 (outcome unknown). */
  sdkResends: number;
}

export function newLedger(): Ledger {
  return { batches: [], streams: new Map(), ackTimes: [], metadataAckTimes: [], errors: [], sdkResends: 0 };
}

export interface WorkloadOptions {
  readonly runTag: string;
  readonly seed: number;
  readonly stream: string;
  readonly topic: string;
  readonly partitions: number;
  readonly producers: number;
  readonly batchSize: number;
  /** Pause between two sends of one producer (keeps the 2-core machine responsive). */
  readonly pauseMs: number;
  /** Pause between two metadata operations. */
  readonly metadataPauseMs: number;
  /** A fresh client for a worker (leader-aware, bootstrapped from every node). */
  readonly client: () => ShoalClient;
}

const ERRORS_KEPT = 30;
const RESEND_BACKOFF_MS = 100;

export class Workload {
  readonly ledger = newLedger();
  readonly #options: WorkloadOptions;
  #running = true;
  #workers: Promise<void>[] = [];

  constructor(options: WorkloadOptions) {
    this.#options = options;
  }

  start(): void {
    const prng = new Prng(this.#options.seed ^ 0x5eed);
    for (let p = 0; p < this.#options.producers; p++) this.#workers.push(this.#produce(p, prng.fork()));
    this.#workers.push(this.#metadata(prng.fork()));
  }

  /** Stops every worker after its current request and waits for them. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
  }

  get acknowledged(): number {
    return this.ledger.ackTimes.length;
  }

  #error(what: string, error: unknown): void {
    if (this.ledger.errors.length < ERRORS_KEPT) this.ledger.errors.push(`${new Date().toISOString()} ${what}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  }

  async #produce(producer: number, prng: Prng): Promise<void> {
    const { stream, topic, partitions, batchSize, runTag, pauseMs } = this.#options;
    const client = this.#options.client();
    let current: BatchRecord | null = null;
    // One batch in flight per producer: an SDK retry of SendMessages belongs to `current`.
    const off = client.on('retry', (event) => {
      if (event.type !== 'retry' || current === null) return;
      current.sdkRetries.push(`${event.error.name}(${event.error.code}) at ${event.node}`);
      if (!isOutcomeUnknown(event.error)) return;
      current.attempts++;
      this.ledger.sdkResends++;
    });
    // The session writes the identical frame again on the same connection after a 57 (outcome
    // unknown; the partition plane keeps no client table, so a replay may store a second copy).
    const offReplay = client.on('replay', (event) => {
      if (event.type !== 'replay' || current === null) return;
      current.sdkRetries.push(`replay after 57 at ${event.node}`);
      current.attempts++;
      this.ledger.sdkResends++;
    });
    try {
      for (let b = 0; this.#running; b++) {
        const record: BatchRecord = {
          producer, partition: prng.below(partitions), attempts: 0, sdkRetries: [], ackedAt: null,
          payloads: Array.from({ length: batchSize }, (_, i) => `${runTag}-p${producer}-b${b}-m${i}`),
        };
        this.ledger.batches.push(record);
        current = record;
        while (this.#running && record.ackedAt === null) {
          record.attempts++;
          try {
            const sent = await client.sendMessages({
              streamId: stream, topicId: topic, partitioning: { partitionId: record.partition },
              messages: record.payloads.map((payload) => ({ payload })),
            });
            record.ackedAt = sent.confirmations[0]?.baseOffset ?? -1n;
            this.ledger.ackTimes.push(Date.now());
          } catch (error) {
            this.#error(`p${producer} b${b} attempt ${record.attempts}`, error);
            await sleep(RESEND_BACKOFF_MS);
          }
        }
        current = null;
        await sleep(pauseMs);
      }
    } finally {
      off();
      offReplay();
      await client.destroy().catch(() => undefined);
    }
  }

  async #metadata(prng: Prng): Promise<void> {
    const client = this.#options.client();
    const live: string[] = [];
    try {
      for (let i = 0; this.#running; i++) {
        if (live.length > 0 && prng.chance(1, 2)) {
          const [name] = live.splice(prng.below(live.length), 1);
          const record = this.ledger.streams.get(name as string) as StreamRecord;
          record.delete = 'unknown';
          if (await this.#try(`delete ${record.name}`, () => client.stream.delete({ streamId: record.name }))) record.delete = 'acked';
        } else {
          const record: StreamRecord = { name: `${this.#options.runTag}-s${i}`, create: 'unknown', delete: 'none' };
          this.ledger.streams.set(record.name, record);
          if (await this.#try(`create ${record.name}`, () => client.stream.create({ name: record.name }))) {
            record.create = 'acked';
            live.push(record.name);
          }
        }
        await sleep(this.#options.metadataPauseMs);
      }
    } finally {
      await client.destroy().catch(() => undefined);
    }
  }

  async #try(what: string, op: () => Promise<unknown>): Promise<boolean> {
    try {
      await op();
      this.ledger.metadataAckTimes.push(Date.now());
      return true;
    } catch (error) {
      this.#error(what, error);
      return false;
    }
  }
}

function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof ShoalResponseError && error.code === ErrorCode.TransientNotCommitted;
}

/** Longest time between two acknowledgements (or from `from` to the first), in ms. */
export function longestGap(times: readonly number[], from: number, to: number): { readonly ms: number; readonly endsAt: number } {
  let best = { ms: 0, endsAt: from };
  let previous = from;
  for (const at of [...times.filter((t) => t >= from && t <= to), to]) {
    if (at - previous > best.ms) best = { ms: at - previous, endsAt: at };
    previous = at;
  }
  return best;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
