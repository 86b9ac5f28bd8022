/**
 * The consumer-offset checker. Store/DeleteConsumerOffset with ack Quorum go through the
 * partition's consensus group: the committed op order is the truth (commands.mdx "Ack levels";
 * framing.mdx: partition ops are at-least-once, a replay may apply again). Checked:
 *
 *   durable      every acknowledged write (code 0) is in its partition's committed log (values
 *                are unique per key, so the value names the write)
 *   monotone     one key's committed writes follow its (single) writer's order: a value at or
 *                below one committed before is allowed only as a replay of an earlier committed
 *                write or of a write whose outcome its client never learned (given up, evicted)
 *   state        every converged replica's offset table equals the committed log applied in op
 *                order up to its commit (last write wins, a delete removes the key)
 *
 * The workload (workload.ts) gives each key one writer and values that grow with the writer's
 * operation counter, which is what makes "follows the writer's order" observable.
 */
import { Operation } from '@shoal/protocol';
import { decodeDeleteOffsetBody, decodeStoreOffsetBody, type PartitionState } from '@shoal/state';
import type { AckRecord } from './client.js';
import { SafetyViolation } from './checker.js';

interface OffsetWrite {
  /** The consumer key (numeric consumer ids are their own key). */
  readonly key: number;
  /** null: delete. */
  readonly value: bigint | null;
}

type OffsetAck = Extract<AckRecord, { kind: 'offset' }>;

export class OffsetChecker {
  /** Per partition history key (checker group key): op → committed offset write. */
  readonly #logs = new Map<bigint, Map<number, OffsetWrite>>();
  /** Partition id of each history key. */
  readonly #partitionOf = new Map<bigint, number>();
  readonly #acks: OffsetAck[] = [];
  /** Per partition id: "key:value" of writes whose outcome a client never learned. */
  readonly #unknown = new Set<string>();
  checked = 0;

  /** A replica committed an offset write (`frame`: the prepare). */
  committed(historyKey: bigint, partitionId: number, op: number, operation: number, body: Uint8Array): void {
    const write = decodeWrite(operation, body);
    if (write === null) throw new SafetyViolation(`partition ${partitionId} op ${op}: committed offset write does not decode`);
    let log = this.#logs.get(historyKey);
    if (log === undefined) {
      log = new Map();
      this.#logs.set(historyKey, log);
      this.#partitionOf.set(historyKey, partitionId);
    }
    const seen = log.get(op);
    if (seen === undefined) log.set(op, write);
    else if (seen.key !== write.key || seen.value !== write.value) {
      // The committed-prefix checker catches this first (same op, other checksum); kept as a backstop.
      throw new SafetyViolation(`partition ${partitionId} op ${op}: committed offset write differs between replicas`);
    }
  }

  ack(record: OffsetAck): void {
    this.#acks.push(record);
  }

  unknown(partitionId: number, consumer: number, offset: bigint | null): void {
    this.#unknown.add(`${partitionId}:${consumer}:${offset ?? 'delete'}`);
  }

  /** Durable and monotone (end of run, over every history of the partition). */
  checkLogs(): void {
    for (const a of this.#acks) {
      if (a.code !== 0) continue;
      if (!this.#inLog(a)) {
        throw new SafetyViolation(`consumer offsets: partition ${a.partitionId} consumer ${a.consumer}: acknowledged ${describe(a.offset)} `
          + `(reply op ${a.op}) is not in the committed log`);
      }
    }
    for (const [history, log] of this.#logs) {
      const partitionId = this.#partitionOf.get(history) as number;
      const high = new Map<number, bigint>();
      const committed = new Set<string>();
      for (const op of [...log.keys()].sort((x, y) => x - y)) {
        const w = log.get(op) as OffsetWrite;
        if (w.value === null) continue;
        const id = `${w.key}:${w.value}`;
        const top = high.get(w.key);
        if (top !== undefined && w.value <= top && !committed.has(id) && !this.#unknown.has(`${partitionId}:${id}`)) {
          throw new SafetyViolation(`consumer offsets: partition ${partitionId} consumer ${w.key}: op ${op} stores ${w.value} after ${top} `
            + `was committed, and it is neither a replay nor a write of unknown outcome (the offset went back)`);
        }
        committed.add(id);
        if (top === undefined || w.value > top) high.set(w.key, w.value);
      }
    }
  }

  /** A converged replica's offset table against its history's log applied up to `commit`. */
  checkState(node: number, historyKey: bigint, partitionId: number, commit: number, state: PartitionState): void {
    const log = this.#logs.get(historyKey) ?? new Map<number, OffsetWrite>();
    const expected = new Map<number, bigint>();
    for (const op of [...log.keys()].sort((x, y) => x - y)) {
      if (op > commit) break;
      const w = log.get(op) as OffsetWrite;
      if (w.value === null) expected.delete(w.key);
      else expected.set(w.key, w.value);
    }
    const actual = new Map(state.offsets.entries('consumer'));
    for (const [key, value] of expected) {
      if (actual.get(key) !== value) {
        throw new SafetyViolation(`consumer offsets: replica ${node} partition ${partitionId} consumer ${key}: stored ${actual.get(key) ?? 'nothing'} `
          + `at op ${commit}, the committed log says ${value}`);
      }
    }
    for (const [key, value] of actual) {
      if (!expected.has(key)) {
        throw new SafetyViolation(`consumer offsets: replica ${node} partition ${partitionId} consumer ${key}: stored ${value} at op ${commit}, `
          + `the committed log says nothing (deleted or never written)`);
      }
    }
    this.checked += expected.size;
  }

  get acknowledged(): number {
    return this.#acks.filter((a) => a.code === 0).length;
  }

  #inLog(a: OffsetAck): boolean {
    for (const [history, log] of this.#logs) {
      if (this.#partitionOf.get(history) !== a.partitionId) continue;
      for (const w of log.values()) if (w.key === a.consumer && w.value === a.offset && a.offset !== null) return true;
      if (a.offset === null && [...log.values()].some((w) => w.key === a.consumer && w.value === null)) return true;
    }
    return false;
  }
}

function decodeWrite(operation: number, body: Uint8Array): OffsetWrite | null {
  if (operation === Operation.StoreConsumerOffset) {
    const d = decodeStoreOffsetBody(body);
    return d.ok && d.value.consumer.kind === 'consumer' ? { key: d.value.consumer.key, value: d.value.offset } : null;
  }
  const d = decodeDeleteOffsetBody(body);
  return d.ok && d.value.kind === 'consumer' ? { key: d.value.key, value: null } : null;
}

function describe(offset: bigint | null): string {
  return offset === null ? 'delete' : `store ${offset}`;
}
