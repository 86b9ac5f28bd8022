/**
 * Consensus core cost: CPU time spent inside the PRIMARY's entry points per committed op, in a
 * 3-replica in-memory cluster (both planes). Frames are handed to the backups directly (no
 * network simulation) and storage completes synchronously; only the primary's calls are timed
 * (onRequest, onMessage for the PrepareOks, onStorageDone, takeEffects).
 *
 *   npm run bench:micro -- consensus
 */
import { Prng } from '@shoal/stdx';
import { encodeResultSuccess } from '@shoal/protocol';
import {
  Replica, metadataPlane, partitionPlane, type Effect, type PrepareInput, type PrepareRecord, type PrepareVerdict, type StateMachine,
} from '@shoal/consensus';
import type { BenchRow, Suite } from '../suite.js';

const CLUSTER = 0xabcdefn;
const CLIENTS = 8;

/** A counter machine: applies in order, answers 8 bytes (result-framed on the metadata plane). */
class CounterMachine implements StateMachine {
  applied = 0;
  constructor(readonly framed: boolean) {}
  prepare(input: PrepareInput): PrepareVerdict {
    return { ok: true, operation: input.operation, body: input.body };
  }
  verify(_p: PrepareRecord): string | null {
    return null;
  }
  journaled(): void {}
  truncated(): void {}
  apply(_p: PrepareRecord): Uint8Array {
    this.applied++;
    const out = new Uint8Array(8);
    return this.framed ? encodeResultSuccess(out) : out;
  }
  logout(): void {}
}

interface Harness {
  readonly replicas: Replica[];
  primaryNanos: bigint;
  replies: number;
  deliver(): void;
}

function harness(plane: 'metadata' | 'partition'): Harness {
  const queue: { to: number; frame: Uint8Array }[] = [];
  const h: Harness = {
    replicas: [],
    primaryNanos: 0n,
    replies: 0,
    deliver: () => {
      for (let m = queue.shift(); m !== undefined; m = queue.shift()) call(m.to, (r) => r.onMessage(m.frame));
    },
  };
  const perform = (index: number, e: Effect): void => {
    const r = h.replicas[index] as Replica;
    if (e.kind === 'send') queue.push({ to: e.to, frame: e.frame });
    else if (e.kind === 'client_frame') h.replies++;
    else if (e.kind === 'journal_append') call(index, () => r.onStorageDone({ kind: 'journal_written', op: e.op, checksum: e.checksum, ok: true }));
    else if (e.kind === 'superblock_write') call(index, () => r.onStorageDone({ kind: 'superblock_written', state: e.state, ok: true }));
  };
  const call = (index: number, f: (r: Replica) => unknown): void => {
    const r = h.replicas[index] as Replica;
    if (index === 0) {
      const start = process.hrtime.bigint();
      f(r);
      const effects = r.takeEffects();
      h.primaryNanos += process.hrtime.bigint() - start;
      for (const e of effects) perform(index, e);
    } else {
      f(r);
      for (const e of r.takeEffects()) perform(index, e);
    }
  };
  for (let i = 0; i < 3; i++) {
    const prng = new Prng(i + 1);
    h.replicas.push(
      new Replica({
        config: { cluster: CLUSTER, replica: i, replicaCount: 3, prepareQueueDepth: 32, journalSlots: 4096 },
        plane: plane === 'metadata' ? metadataPlane(prng.u128() | 1n) : partitionPlane(1n << 32n),
        stateMachine: new CounterMachine(plane === 'metadata'),
        time: { realtimeMicros: () => 1_700_000_000_000_000n },
        prng,
      }),
    );
  }
  h.replicas.forEach((_, i) => call(i, (r) => r.tick()));
  h.deliver();
  return Object.assign(h, { call });
}

/** Runs `ops` committed ops from CLIENTS concurrent clients; returns primary ns per op. */
function runPlane(plane: 'metadata' | 'partition', ops: number): number {
  const h = harness(plane) as Harness & { call: (i: number, f: (r: Replica) => unknown) => void };
  const epochs: bigint[] = [];
  for (let c = 1; c <= CLIENTS; c++) {
    if (plane === 'metadata') {
      h.call(0, (r) => r.submitSession({ session: 'register', client: BigInt(c), userId: 1, epoch: 0n, request: 0n, token: c }));
      h.deliver();
      epochs.push(BigInt(h.replicas[0]?.status.commitMin ?? 0));
    } else epochs.push(0n);
  }
  for (let i = 0; i < 4; i++) h.replicas.forEach((_, k) => h.call(k, (r) => r.tick()));
  h.deliver();
  h.primaryNanos = 0n;
  h.replies = 0;
  const body = new Uint8Array(64);
  let request = 1n;
  while (h.replies < ops) {
    for (let c = 1; c <= CLIENTS; c++) {
      const epoch = epochs[c - 1] as bigint;
      h.call(0, (r) => r.onRequest({
        client: BigInt(c), request, session: epoch, requestChecksum: 0n, operation: plane === 'metadata' ? 128 : 160,
        body, userId: 1, timestamp: 0n, token: c,
      }));
    }
    request++;
    h.deliver();
  }
  return Number(h.primaryNanos) / h.replies;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1] as number;
}

const suite: Suite = {
  name: 'consensus',
  description: 'CPU per committed op on the primary of a 3-replica in-memory cluster (frames delivered directly)',
  run(settings) {
    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const plane of ['metadata', 'partition'] as const) {
      const ops = Math.max(2000, settings.roundMillis * 100);
      for (let w = 0; w < settings.warmupRounds; w++) runPlane(plane, ops);
      const samples: number[] = [];
      for (let r = 0; r < settings.rounds; r++) samples.push(runPlane(plane, ops));
      const med = median(samples);
      rows.push({ name: `primary, ${plane} plane (${CLIENTS} clients)`, nsPerOp: med, spread: (Math.max(...samples) - Math.min(...samples)) / med });
      notes.push(`${plane}: ${(med / 1000).toFixed(2)} µs of primary CPU per committed op`);
    }
    return { rows, notes };
  },
};

export default suite;
