/**
 * What the cluster fault tests produce and check: tagged messages sent through the SDK, a record
 * of every acknowledgement (partition, offset), and a read-back of a whole partition from ONE
 * node (reads are served locally) to check that every acknowledged message is there exactly
 * once, at the offset its acknowledgement gave.
 */
import type { ShoalClient } from '@shoal/client';

export interface Acked {
  readonly partition: number;
  readonly offset: bigint;
  readonly payload: string;
}

export interface ProduceLog {
  readonly acked: Acked[];
  /** Payloads whose send failed (outcome unknown: each may or may not be stored, at most once). */
  readonly failed: string[];
  /** Why sends failed (first few), for the assertion messages. */
  readonly errors: string[];
  sends: number;
}

const decoder = new TextDecoder();

export function newLog(): ProduceLog {
  return { acked: [], failed: [], errors: [], sends: 0 };
}

/** One batch of `count` messages to `partition`; records the outcome. Never throws. */
export async function sendTagged(client: ShoalClient, log: ProduceLog, stream: string, topic: string, partition: number, tag: string, count: number): Promise<boolean> {
  const payloads = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  log.sends += 1;
  try {
    const sent = await client.sendMessages({
      streamId: stream, topicId: topic, partitioning: { partitionId: partition }, messages: payloads.map((payload) => ({ payload })),
    });
    const base = sent.confirmations[0]?.baseOffset ?? -1n;
    payloads.forEach((payload, i) => log.acked.push({ partition, offset: base + BigInt(i), payload }));
    return true;
  } catch (error) {
    log.failed.push(...payloads);
    if (log.errors.length < 20) log.errors.push(`${tag}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return false;
  }
}

/** Every message of a partition as one node serves it: offset → payload. */
export async function readPartition(client: ShoalClient, stream: string, topic: string, partition: number): Promise<Map<bigint, string>> {
  const out = new Map<bigint, string>();
  let next = 0n;
  for (;;) {
    const polled = await client.pollMessages({
      streamId: stream, topicId: topic, partitionId: partition, consumer: 1, strategy: { offset: next }, count: 1000,
    }, { timeoutMs: 10_000 });
    if (polled.messages.length === 0) return out;
    for (const m of polled.messages) {
      out.set(m.offset, decoder.decode(m.payload));
      next = m.offset + 1n;
    }
  }
}

/**
 * The exactly-once check on one node's copy: every acknowledged payload at its offset, no payload
 * twice, offsets dense from 0, and nothing that was never sent. Returns the problems (empty: ok).
 */
export function checkPartition(stored: ReadonlyMap<bigint, string>, partition: number, log: ProduceLog): string[] {
  const problems: string[] = [];
  for (const a of log.acked) {
    if (a.partition !== partition) continue;
    const got = stored.get(a.offset);
    if (got !== a.payload) problems.push(`p${partition} offset ${a.offset}: want ${a.payload}, got ${got ?? 'nothing'}`);
  }
  const seen = new Set<string>();
  const sent = new Set([...log.acked.map((a) => a.payload), ...log.failed]);
  let expected = 0n;
  for (const [offset, payload] of [...stored].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (offset !== expected) problems.push(`p${partition}: offset ${offset} where ${expected} was expected (gap)`);
    expected = offset + 1n;
    if (seen.has(payload)) problems.push(`p${partition}: ${payload} stored twice`);
    seen.add(payload);
    if (!sent.has(payload)) problems.push(`p${partition}: ${payload} was never sent`);
  }
  return problems.slice(0, 20);
}

/** `sendTagged` that must succeed: throws with the reason otherwise. */
export async function sendAcked(client: ShoalClient, log: ProduceLog, stream: string, topic: string, partition: number, tag: string, count: number): Promise<void> {
  if (!(await sendTagged(client, log, stream, topic, partition, tag, count))) throw new Error(`send ${tag} failed: ${log.errors.at(-1) ?? '?'}`);
}
