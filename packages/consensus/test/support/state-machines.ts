/**
 * Small deterministic state machines for the consensus tests (NOT production code):
 *
 * - `KvStateMachine` (metadata plane): operation 128 (CreateStream) puts `key=value`; 132
 *   (CreateTopic) is rewritten by the primary into 64 (CreateTopicWithAssignments) with a
 *   server-built body, as the real metadata machine does; an empty body is rejected
 *   (eviction 5). Replies are result-framed.
 * - `BatchLogStateMachine` (partition plane): operation 160 (SendMessages) carries a fake batch
 *   `[base_offset u64][base_timestamp u64][count u32][payload]`; the primary stamps it with the next
 *   dirty offset and the prepare timestamp, backups check the stamp, apply appends to the log.
 *   Group commit: batches combine by summing counts and concatenating payloads; a member's
 *   reply is the op's base offset plus the count before it (its share).
 *
 * Both keep a running digest of everything applied so tests can compare replicas.
 */
import { assert } from '@shoal/stdx';
import { encodeResultSuccess, xxh3_64 } from '@shoal/protocol';
import type { CombineVerdict, JournalSource, PrepareInput, PreparePosition, PrepareRecord, PrepareVerdict, StateMachine } from '@shoal/consensus';

const text = new TextEncoder();
const untext = new TextDecoder();

function mix(digest: bigint, op: number, operation: number, body: Uint8Array): bigint {
  const input = new Uint8Array(16 + body.length);
  const view = new DataView(input.buffer);
  view.setBigUint64(0, digest, true);
  view.setUint32(8, op, true);
  view.setUint32(12, operation, true);
  input.set(body, 16);
  return xxh3_64(input);
}

export class KvStateMachine implements StateMachine {
  readonly map = new Map<string, string>();
  /** Ops applied, in order (exactly-once checks). */
  applied: number[] = [];
  digest = 0n;
  loggedOut: bigint[] = [];

  prepare(input: PrepareInput): PrepareVerdict {
    if (input.body.length === 0) return { ok: false, eviction: 5 };
    if (input.operation === 132) {
      const rewritten = text.encode(`topic:${untext.decode(input.body)}@${input.op}`);
      return { ok: true, operation: 64, body: rewritten };
    }
    if (input.operation !== 128 && input.operation !== 147) return { ok: false, eviction: 4 };
    return { ok: true, operation: input.operation, body: input.body };
  }

  verify(_prepare: PrepareRecord): string | null {
    return null;
  }

  journaled(_prepare: PrepareRecord, _source: JournalSource): void {}

  truncated(_fromOp: number): void {}

  apply(p: PrepareRecord): Uint8Array {
    assert(this.applied.length === 0 || p.op > (this.applied[this.applied.length - 1] as number), 'kv: apply out of order');
    this.applied.push(p.op);
    this.digest = mix(this.digest, p.op, p.operation, p.body);
    const s = untext.decode(p.body);
    const eq = s.indexOf('=');
    if (eq > 0) this.map.set(s.slice(0, eq), s.slice(eq + 1));
    else this.map.set(s, '');
    return encodeResultSuccess(text.encode(`ok@${p.op}`));
  }

  logout(client: bigint): void {
    this.loggedOut.push(client);
  }

  snapshot(): Uint8Array {
    return text.encode(JSON.stringify({ map: [...this.map], applied: this.applied, digest: this.digest.toString() }));
  }

  static restore(bytes: Uint8Array): KvStateMachine {
    const sm = new KvStateMachine();
    const parsed = JSON.parse(untext.decode(bytes)) as { map: [string, string][]; applied: number[]; digest: string };
    for (const [k, v] of parsed.map) sm.map.set(k, v);
    sm.applied = parsed.applied;
    sm.digest = BigInt(parsed.digest);
    return sm;
  }
}

export const BATCH_STAMP_SIZE = 20;

export function fakeBatch(payload: string, count = 1): Uint8Array {
  const p = text.encode(payload);
  const out = new Uint8Array(BATCH_STAMP_SIZE + p.length);
  new DataView(out.buffer).setUint32(16, count, true);
  out.set(p, BATCH_STAMP_SIZE);
  return out;
}

function fakeBatchBytes(payloads: readonly Uint8Array[], count: number): Uint8Array {
  const out = new Uint8Array(BATCH_STAMP_SIZE + payloads.reduce((n, p) => n + p.length, 0));
  new DataView(out.buffer).setUint32(16, count, true);
  let at = BATCH_STAMP_SIZE;
  for (const p of payloads) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function stampOf(body: Uint8Array): { base: bigint; timestamp: bigint; count: number } {
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  return { base: v.getBigUint64(0, true), timestamp: v.getBigUint64(8, true), count: v.getUint32(16, true) };
}

export class BatchLogStateMachine implements StateMachine {
  /** Committed batches: [base offset, count, payload]. */
  log: { op: number; base: number; count: number; payload: string }[] = [];
  applied: number[] = [];
  digest = 0n;
  /** Last offset of each journaled, un-applied op (for the dirty offset after truncation). */
  readonly pending = new Map<number, number>();
  /** Next offset after everything applied. */
  committedNext = 0;

  nextDirty(): number {
    let next = this.committedNext;
    for (const last of this.pending.values()) next = Math.max(next, last + 1);
    return next;
  }

  prepare(input: PrepareInput): PrepareVerdict {
    if (input.operation !== 160 || input.body.length < BATCH_STAMP_SIZE) return { ok: false, eviction: 5 };
    const count = stampOf(input.body).count;
    if (count === 0) return { ok: false, eviction: 5 };
    const body = input.body.slice();
    const v = new DataView(body.buffer);
    v.setBigUint64(0, BigInt(this.nextDirty()), true);
    v.setBigUint64(8, input.timestamp, true);
    return { ok: true, operation: 160, body };
  }

  /** Requests joined into one prepare so far, per group size (tests count them). */
  readonly combined: number[] = [];

  combinable(operation: number): boolean {
    return operation === 160;
  }

  combine(_operation: number, bodies: readonly Uint8Array[]): CombineVerdict {
    const shares: number[] = [];
    let count = 0;
    const payloads: Uint8Array[] = [];
    for (const body of bodies) {
      shares.push(count);
      count += stampOf(body).count;
      payloads.push(body.subarray(BATCH_STAMP_SIZE));
    }
    this.combined.push(bodies.length);
    return { ok: true, body: fakeBatchBytes(payloads, count), shares };
  }

  memberReply(payload: Uint8Array, share: number): Uint8Array {
    const reply = new Uint8Array(8);
    new DataView(reply.buffer).setBigUint64(0, new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0, true) + BigInt(share), true);
    return reply;
  }

  verify(p: PrepareRecord, position: PreparePosition): string | null {
    if (p.operation !== 160) return null;
    if (p.body.length < BATCH_STAMP_SIZE) return 'batch_short';
    const s = stampOf(p.body);
    if (s.count === 0) return 'batch_empty';
    if (position === 'append' && s.base !== BigInt(this.nextDirty())) return 'stamp_offset';
    if (s.timestamp !== p.timestamp) return 'stamp_timestamp';
    return null;
  }

  journaled(p: PrepareRecord, _source: JournalSource): void {
    if (p.operation !== 160 || p.body.length < BATCH_STAMP_SIZE) return;
    const s = stampOf(p.body);
    this.pending.set(p.op, Number(s.base) + s.count - 1);
  }

  truncated(fromOp: number): void {
    for (const op of [...this.pending.keys()]) if (op >= fromOp) this.pending.delete(op);
  }

  apply(p: PrepareRecord): Uint8Array {
    assert(this.applied.length === 0 || p.op > (this.applied[this.applied.length - 1] as number), 'batch: apply out of order');
    this.applied.push(p.op);
    this.pending.delete(p.op);
    this.digest = mix(this.digest, p.op, p.operation, p.body);
    if (p.operation !== 160) return new Uint8Array(0);
    const s = stampOf(p.body);
    this.log.push({ op: p.op, base: Number(s.base), count: s.count, payload: untext.decode(p.body.subarray(BATCH_STAMP_SIZE)) });
    this.committedNext = Math.max(this.committedNext, Number(s.base) + s.count);
    const reply = new Uint8Array(8);
    new DataView(reply.buffer).setBigUint64(0, s.base, true);
    return reply;
  }

  logout(_client: bigint): void {}

  snapshot(): Uint8Array {
    return text.encode(JSON.stringify({ log: this.log, applied: this.applied, digest: this.digest.toString(), next: this.committedNext }));
  }

  static restore(bytes: Uint8Array): BatchLogStateMachine {
    const sm = new BatchLogStateMachine();
    const parsed = JSON.parse(untext.decode(bytes)) as { log: BatchLogStateMachine['log']; applied: number[]; digest: string; next: number };
    sm.log = parsed.log;
    sm.applied = parsed.applied;
    sm.digest = BigInt(parsed.digest);
    sm.committedNext = parsed.next;
    return sm;
  }
}
