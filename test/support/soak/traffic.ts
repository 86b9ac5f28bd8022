/**
 * The soak's steady traffic: paced producers and a consumer that follows them, with a compact
 * ledger (one record per batch, the payloads derived from its name) so that half an hour of
 * traffic fits in memory, and the final per-node check against it.
 *
 * Payload of message i of batch b of lane l: `l<l>-b<b>-m<i>` padded to `messageSize` bytes.
 * A batch whose send fails is re-sent with the same payloads until acknowledged (a duplicate is
 * then possible, at most one per re-send); `attempts` bounds the copies the check accepts.
 */
import { ShoalResponseError, type ShoalClient } from '@shoal/client';
import { ErrorCode } from '@shoal/protocol';
import { sleep } from '../nemesis/workload.js';

export interface SoakBatch {
  readonly lane: number;
  readonly batch: number;
  readonly partition: number;
  attempts: number;
  base: bigint | null;
}

export interface TrafficOptions {
  readonly stream: string;
  readonly topic: string;
  readonly partitions: number;
  readonly lanes: number;
  readonly batchSize: number;
  readonly messageSize: number;
  /** Offered load over all lanes (messages per second). */
  readonly rate: number;
  readonly client: () => ShoalClient;
}

const RESEND_BACKOFF_MS = 100;
const POLL_COUNT = 500;
const POLL_IDLE_MS = 100;

export function payloadOf(lane: number, batch: number, i: number, size: number): string {
  return `l${lane}-b${batch}-m${i}`.padEnd(size, '.');
}

export class Traffic {
  readonly batches: SoakBatch[] = [];
  readonly batchSize: number;
  readonly messageSize: number;
  produced = 0;
  consumed = 0;
  /** Wall-clock ms of every acknowledged batch (the stall figures). */
  readonly ackTimes: number[] = [];
  /** Consumer problems seen on the way (an offset skipped, a poll error is not one). */
  readonly consumerProblems: string[] = [];
  readonly #o: TrafficOptions;
  #running = true;
  readonly #workers: Promise<void>[] = [];

  constructor(options: TrafficOptions) {
    this.#o = options;
    this.batchSize = options.batchSize;
    this.messageSize = options.messageSize;
  }

  start(): void {
    for (let lane = 0; lane < this.#o.lanes; lane++) this.#workers.push(this.#produce(lane));
    this.#workers.push(this.#consume());
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
  }

  async #produce(lane: number): Promise<void> {
    const o = this.#o;
    const client = o.client();
    let current: SoakBatch | null = null;
    // The SDK re-sends a write answered 57 (outcome unknown): its session replays the frame on the
    // same connection, then its router retries elsewhere. Each re-send may store a copy.
    const offReplay = client.on('replay', () => {
      if (current !== null) current.attempts++;
    });
    const offRetry = client.on('retry', (event) => {
      if (current !== null && event.type === 'retry' && event.error instanceof ShoalResponseError
        && event.error.code === ErrorCode.TransientNotCommitted) current.attempts++;
    });
    // Each lane paces itself: one batch every `period` ms keeps the offered load at `rate`.
    const periodMs = (1000 * o.batchSize * o.lanes) / o.rate;
    let due = Date.now();
    try {
      for (let b = 0; this.#running; b++) {
        const record: SoakBatch = { lane, batch: b, partition: (lane + b) % o.partitions, attempts: 0, base: null };
        this.batches.push(record);
        current = record;
        const messages = Array.from({ length: o.batchSize }, (_, i) => ({ payload: payloadOf(lane, b, i, o.messageSize) }));
        while (this.#running && record.base === null) {
          record.attempts++;
          try {
            const sent = await client.sendMessages({ streamId: o.stream, topicId: o.topic, partitioning: { partitionId: record.partition }, messages });
            record.base = sent.confirmations[0]?.baseOffset ?? -1n;
            this.produced += o.batchSize;
            this.ackTimes.push(Date.now());
          } catch {
            await sleep(RESEND_BACKOFF_MS);
          }
        }
        due += periodMs;
        await sleep(Math.max(0, due - Date.now()));
      }
    } finally {
      offReplay();
      offRetry();
      await client.destroy().catch(() => undefined);
    }
  }

  /** Follows every partition from offset 0; offsets must come dense and in order. */
  async #consume(): Promise<void> {
    const o = this.#o;
    const client = o.client();
    const next = Array.from({ length: o.partitions }, () => 0n);
    try {
      while (this.#running) {
        let got = 0;
        for (let p = 0; p < o.partitions && this.#running; p++) {
          try {
            const polled = await client.pollMessages({
              streamId: o.stream, topicId: o.topic, partitionId: p, consumer: 1, strategy: { offset: next[p] as bigint }, count: POLL_COUNT,
            }, { timeoutMs: 5_000 });
            for (const m of polled.messages) {
              if (m.offset !== next[p] && this.consumerProblems.length < 20) this.consumerProblems.push(`p${p}: consumed offset ${m.offset}, expected ${next[p]}`);
              next[p] = m.offset + 1n;
            }
            got += polled.messages.length;
            this.consumed += polled.messages.length;
          } catch {
            // a node restarting: poll again on the next round
          }
        }
        if (got === 0) await sleep(POLL_IDLE_MS);
      }
    } finally {
      await client.destroy().catch(() => undefined);
    }
  }
}

/** One node's copy of one partition against the ledger: problems (empty: every acknowledged message in place). */
export function checkSoakCopy(node: number, partition: number, copy: ReadonlyMap<bigint, string>, traffic: Traffic): string[] {
  const problems: string[] = [];
  const note = (problem: string): void => {
    if (problems.length < PROBLEMS_KEPT) problems.push(problem);
  };
  const attempts = new Map<string, number>();
  for (const batch of traffic.batches) {
    if (batch.partition !== partition) continue;
    attempts.set(`l${batch.lane}-b${batch.batch}`, batch.attempts);
    if (batch.base === null) continue;
    for (let i = 0; i < traffic.batchSize; i++) {
      const want = payloadOf(batch.lane, batch.batch, i, traffic.messageSize);
      const offset = batch.base + BigInt(i);
      const got = copy.get(offset);
      if (got !== want) note(`node ${node} p${partition} offset ${offset}: acknowledged ${nameOf(want)}, holds ${got === undefined ? 'nothing' : nameOf(got)}`);
    }
  }
  const copies = new Map<string, number>();
  let expected = 0n;
  for (const offset of [...copy.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (offset !== expected) note(`node ${node} p${partition}: offset ${offset} where ${expected} was expected (gap)`);
    expected = offset + 1n;
    const name = nameOf(copy.get(offset) as string);
    const sent = attempts.get(name.slice(0, name.lastIndexOf('-m'))) ?? 0;
    const count = (copies.get(name) ?? 0) + 1;
    copies.set(name, count);
    if (count > sent) note(`node ${node} p${partition} offset ${offset}: ${name} stored ${count} times, sent ${sent}`);
  }
  return problems;
}

const PROBLEMS_KEPT = 20;

function nameOf(payload: string): string {
  return payload.replace(/\.+$/, '');
}
