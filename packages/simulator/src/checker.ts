/**
 * The safety checkers. They run continuously (every commit, every ack, every restart) and at the
 * end of a run; the first violation fails the seed with a message naming what broke.
 *
 *   committed prefix   every replica's committed op k of group g has the same prepare checksum
 *                      (the first commit anywhere fixes it; it is never rewritten)
 *   commit order       within one life a replica commits ops consecutively (a state-transfer
 *                      install may jump the floor); view / commit_min / commit_max never go back
 *   views across boot  a restarted replica's view is at least the view it had made durable
 *   exactly-once       a (client, request) appears at most once in the committed metadata log
 *   acked metadata     an acknowledged reply names a committed op carrying that (client, request)
 *   linearizable       the shadow model, fed the committed log in op order, predicts each acked
 *                      reply's code and created id, and each replica's applied outcome
 *   partitions         acknowledged batches occupy disjoint offset ranges; each stays readable,
 *                      byte for byte, on every replica that has caught up
 *   recovery           every journal entry a restarted replica recovered verifies
 *
 * (ack-oracle.ts: no DoViewChange nacks an op its sender acknowledged with the committed checksum.)
 */
import { type Replica } from '@shoal/consensus';
import { validateHeader } from '@shoal/protocol';
import type { AppliedOp } from '@shoal/replica';
import type { MetadataState } from '@shoal/state';
import type { AckRecord } from './client.js';
import { type Prediction, ShadowModel } from './shadow.js';

const METADATA = 1n << 63n;

export class SafetyViolation extends Error {
  override readonly name = 'SafetyViolation';
}

interface CanonicalOp {
  /** null until some replica's commit fixed it. */
  checksum: bigint | null;
  /** The committed operation (from the commit effect). */
  operation: number;
  /** The operation reported by the apply (metadata). */
  appliedOperation: number;
  client: bigint;
  request: bigint;
  /** Metadata details, once some replica applied it. */
  body: Uint8Array | null;
  code: number;
  detailed: boolean;
}

interface Watermarks {
  view: number;
  commitMin: number;
  commitMax: number;
}

export interface CheckerStats {
  commits: number;
  metadataAcks: number;
  sendAcks: number;
  predictions: number;
}

export class Checker {
  readonly #canonical = new Map<bigint, Map<number, CanonicalOp>>();
  /** Per node per group: last op committed in this life (undefined after a boot). */
  readonly #last: Map<bigint, number>[];
  readonly #watermarks: Map<bigint, Watermarks>[];
  readonly #durableView: number[];
  /** Per node: each partition group's highest durable view at a crash (by history key). */
  readonly #partitionDurableViews: Map<bigint, number>[];
  readonly #requests = new Map<string, number>();
  readonly shadow = new ShadowModel();
  readonly #predictions = new Map<number, Prediction>();
  readonly #metadataAcks: Extract<AckRecord, { kind: 'metadata' }>[] = [];
  readonly sends = new Map<number, { base: number; messages: number; frames: Uint8Array }[]>();
  readonly stats: CheckerStats = { commits: 0, metadataAcks: 0, sendAcks: 0, predictions: 0 };
  /** Test hook: pretend this op was committed with another checksum (checker self-tests). */
  forgeCommit: ((node: number, group: bigint, op: number, checksum: bigint) => bigint) | null = null;

  constructor(replicas: number) {
    this.#last = Array.from({ length: replicas }, () => new Map());
    this.#watermarks = Array.from({ length: replicas }, () => new Map());
    this.#durableView = Array.from({ length: replicas }, () => 0);
    this.#partitionDurableViews = Array.from({ length: replicas }, () => new Map());
  }

  fail(message: string): never {
    throw new SafetyViolation(message);
  }

  /** A metadata or partition op was committed (applied) by `node`. */
  committed(node: number, group: bigint, op: number, operation: number, checksumIn: bigint | null): void {
    this.stats.commits++;
    if (checksumIn === null) this.fail(`replica ${node} group ${group}: committed op ${op} is not in its journal`);
    const checksum = this.forgeCommit === null ? checksumIn : this.forgeCommit(node, group, op, checksumIn);
    const entry = this.#entry(group, op);
    if (entry.checksum === null) {
      entry.checksum = checksum;
      entry.operation = operation;
    } else if (entry.checksum !== checksum) {
      this.fail(`replica ${node} group ${group}: committed op ${op} with checksum ${hex(checksum)}, but op ${op} was committed as ${hex(entry.checksum)}`);
    }
    const lastMap = this.#last[node] as Map<bigint, number>;
    const last = lastMap.get(group);
    if (last !== undefined && op !== last + 1) this.fail(`replica ${node} group ${group}: committed op ${op} right after op ${last}`);
    lastMap.set(group, op);
    if (group === METADATA) this.#advanceShadow();
  }

  /** A replica applied op details (metadata: the body and outcome the shadow model needs). */
  applied(node: number, op: AppliedOp): void {
    if (op.group !== METADATA || op.operation === 1 || op.operation === 3) return;
    const entry = this.#entry(METADATA, op.op);
    if (!entry.detailed) {
      entry.detailed = true;
      entry.client = op.client;
      entry.request = op.request;
      entry.body = op.body.slice();
      entry.code = op.code;
      entry.appliedOperation = op.operation;
      if (op.request > 0n) {
        const key = `${op.client}:${op.request}`;
        const first = this.#requests.get(key);
        if (first !== undefined && first !== op.op) {
          this.fail(`exactly-once: client ${op.client} request ${op.request} committed twice, as ops ${first} and ${op.op}`);
        }
        this.#requests.set(key, op.op);
      }
      this.#advanceShadow();
      return;
    }
    if (entry.appliedOperation !== op.operation || entry.client !== op.client || entry.request !== op.request || entry.code !== op.code) {
      this.fail(`replica ${node}: metadata op ${op.op} applied as (operation ${op.operation}, client ${op.client}, request ${op.request}, code ${op.code}), `
        + `elsewhere as (operation ${entry.appliedOperation}, client ${entry.client}, request ${entry.request}, code ${entry.code})`);
    }
  }

  #entry(group: bigint, op: number): CanonicalOp {
    let log = this.#canonical.get(group);
    if (log === undefined) {
      log = new Map();
      this.#canonical.set(group, log);
    }
    let entry = log.get(op);
    if (entry === undefined) {
      entry = { checksum: null, operation: 0, appliedOperation: 0, client: 0n, request: 0n, body: null, code: 0, detailed: false };
      log.set(op, entry);
    }
    return entry;
  }

  /** A state transfer moved `node`'s commit floor. */
  installed(node: number, group: bigint, snapshotOp: number): void {
    (this.#last[node] as Map<bigint, number>).set(group, snapshotOp);
  }

  /** `node` crashed: remember the view it had made durable. */
  crashed(node: number, durableView: number, partitionViews: readonly (readonly [bigint, number])[] = []): void {
    this.#durableView[node] = Math.max(this.#durableView[node] as number, durableView);
    const views = this.#partitionDurableViews[node] as Map<bigint, number>;
    for (const [key, view] of partitionViews) views.set(key, Math.max(views.get(key) ?? 0, view));
    (this.#last[node] as Map<bigint, number>).clear();
    (this.#watermarks[node] as Map<bigint, Watermarks>).clear();
  }

  /**
   * `node` opened a partition group in `view`: never below a view it had made durable for that
   * group in an earlier life (a group that forgot its promised view, and with it every op it
   * acknowledged, booted brand new: seed 300962 of 3).
   */
  partitionOpened(node: number, key: bigint, view: number): void {
    const durable = (this.#partitionDurableViews[node] as Map<bigint, number>).get(key) ?? 0;
    if (view < durable) this.fail(`replica ${node} group ${key}: opened in view ${view} below its durable view ${durable}`);
  }

  /**
   * `node` destroyed a partition group (files removed) because its deletion or a re-creation of
   * its ids committed: that incarnation's promises are void. A boot whose metadata recovered from
   * before the deletion (the commit point is made durable later) opens it again, brand new and
   * empty, until the deletion is applied again: not a forgotten view (seeds 1001430 of 3, 1000095
   * of 5).
   */
  partitionDestroyed(node: number, key: bigint): void {
    (this.#partitionDurableViews[node] as Map<bigint, number>).delete(key);
  }

  /** `node` booted: views never behind the durable one, every recovered journal entry verifies. */
  booted(node: number, metadata: Replica): void {
    const view = metadata.status.view;
    if (view < (this.#durableView[node] as number)) {
      this.fail(`replica ${node}: booted in view ${view} below its durable view ${this.#durableView[node]}`);
    }
    for (const op of metadata.status.journalOps) {
      const frame = metadata.journalFrame(op);
      if (frame === null) continue;
      const reason = validateHeader(frame, 0);
      if (reason !== null) this.fail(`replica ${node}: recovered WAL entry op ${op} does not verify (${reason})`);
    }
  }

  /** Within a life: view, commit_min and commit_max never go back. */
  sample(node: number, group: bigint, replica: Replica): void {
    const s = replica.role;
    const map = this.#watermarks[node] as Map<bigint, Watermarks>;
    const w = map.get(group);
    if (w !== undefined) {
      if (s.view < w.view) this.fail(`replica ${node} group ${group}: view went back from ${w.view} to ${s.view}`);
      if (s.commitMin < w.commitMin) this.fail(`replica ${node} group ${group}: commit_min went back from ${w.commitMin} to ${s.commitMin}`);
      if (s.commitMax < w.commitMax) this.fail(`replica ${node} group ${group}: commit_max went back from ${w.commitMax} to ${s.commitMax}`);
    }
    map.set(group, { view: s.view, commitMin: s.commitMin, commitMax: s.commitMax });
  }

  ack(record: AckRecord): void {
    if (record.kind === 'metadata') {
      this.stats.metadataAcks++;
      this.#metadataAcks.push(record);
      return;
    }
    if (record.kind !== 'send') return;
    this.stats.sendAcks++;
    let list = this.sends.get(record.partitionId);
    if (list === undefined) {
      list = [];
      this.sends.set(record.partitionId, list);
    }
    // Kept sorted by base offset: an overlap can only be with a neighbour.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid] as { base: number }).base < record.baseOffset) lo = mid + 1;
      else hi = mid;
    }
    for (const other of [list[lo - 1], list[lo]]) {
      if (other === undefined) continue;
      const overlaps = record.baseOffset < other.base + other.messages && other.base < record.baseOffset + record.messages;
      if (overlaps) {
        this.fail(`partition ${record.partitionId}: acknowledged batches overlap: [${record.baseOffset}, +${record.messages}) and [${other.base}, +${other.messages})`);
      }
    }
    list.splice(lo, 0, { base: record.baseOffset, messages: record.messages, frames: record.frames });
  }

  /** Checks every metadata ack against the committed log and the shadow model (call at the end). */
  checkMetadataAcks(): void {
    const log = this.#canonical.get(METADATA) ?? new Map<number, CanonicalOp>();
    for (const a of this.#metadataAcks) {
      if (a.op === 0) continue; // pre-commit answer (admission reject, 59)
      const entry = log.get(a.op);
      if (entry === undefined || !entry.detailed) {
        this.fail(`client ${a.clientIndex}: reply names op ${a.op}, which was never committed (request ${a.request}, ${a.work.kind})`);
      }
      if (entry.client !== a.client || entry.request !== a.request) {
        this.fail(`client ${a.clientIndex}: reply for request ${a.request} names op ${a.op}, committed for client ${entry.client} request ${entry.request}`);
      }
      if (a.code !== entry.code) this.fail(`client ${a.clientIndex}: reply code ${a.code} for op ${a.op}, committed code ${entry.code}`);
      const predicted = this.#predictions.get(a.op);
      if (predicted === undefined) continue;
      this.stats.predictions++;
      if (predicted.code !== a.code) {
        this.fail(`linearizability: op ${a.op} (${a.work.kind}) acknowledged with code ${a.code}, the sequential model says ${predicted.code}`);
      }
      if (a.code === 0 && predicted.createdId !== null && a.createdId !== predicted.createdId) {
        this.fail(`linearizability: op ${a.op} (${a.work.kind}) created id ${a.createdId}, the sequential model says ${predicted.createdId}`);
      }
    }
  }

  /** The metadata state of a replica at the model's op must summarise like the model. */
  checkState(node: number, state: MetadataState, commitMin: number): void {
    if (commitMin !== this.shadow.op) return;
    const actual = summarise(state);
    const expected = this.shadow.summary();
    if (actual !== expected) this.fail(`replica ${node}: metadata state at op ${commitMin} differs from the model:\n  replica: ${actual}\n  model:   ${expected}`);
  }

  /** Distinct ops committed cluster-wide, over every group history. */
  committedOps(): number {
    let total = 0;
    for (const key of this.#canonical.keys()) total += this.committedHead(key);
    return total;
  }

  /** The committed log of `group` (op → checksum) as far as anyone committed it. */
  committedHead(group: bigint): number {
    const log = this.#canonical.get(group);
    if (log === undefined) return 0;
    let head = 0;
    while (log.get(head + 1)?.checksum != null) head++;
    return head;
  }

  #advanceShadow(): void {
    const log = this.#canonical.get(METADATA);
    if (log === undefined) return;
    for (;;) {
      const op = this.shadow.op + 1;
      const next = log.get(op);
      if (next === undefined || next.checksum === null) return;
      const sessionOp = next.operation === 1 || next.operation === 3;
      if (!sessionOp && !next.detailed) return;
      const prediction = this.shadow.apply(op, sessionOp ? next.operation : next.appliedOperation, next.body ?? new Uint8Array(0));
      if (prediction === null) continue;
      this.#predictions.set(op, prediction);
      if (prediction.code !== next.code) {
        this.fail(`state machine vs model: op ${op} (operation ${next.appliedOperation}) committed code ${next.code}, the model says ${prediction.code}`);
      }
    }
  }
}

export function hex(v: bigint): string {
  return `0x${v.toString(16)}`;
}

/** The model's view of a MetadataState (streams, topics, groups, users). */
export function summarise(state: MetadataState): string {
  const streams: string[] = [];
  for (const s of state.model.streams.values()) {
    const topics: string[] = [];
    for (const t of t_sorted(s.topics.values())) {
      const groups = [...t.consumerGroups.values()].sort((a, b) => a.id - b.id).map((g) => `${g.id}=${g.name}`);
      topics.push(`${t.id}:${t.name}:${t.partitions.length}[${groups.join(',')}]`);
    }
    streams.push(`${s.id}:${s.name}{${topics.join(';')}}`);
  }
  const users = [...state.model.users.values()].sort((a, b) => a.id - b.id).map((u) => `${u.id}:${u.username}`);
  return `streams=${streams.sort(byId).join('|')} users=${users.join(',')}`;
}

function t_sorted<T extends { id: number }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => a.id - b.id);
}

function byId(a: string, b: string): number {
  return Number(a.split(':')[0]) - Number(b.split(':')[0]);
}
