/**
 * A small deterministic in-test cluster: N consensus cores wired by an in-memory message queue
 * with controllable delivery (latency, drop filters, isolation), synchronous / delayed / stalled /
 * failing storage completions, crash (discard the core, keep only what was durably written) and
 * restart (rebuild from the retained journal, superblock and snapshot), and a tick loop.
 *
 * Safety is checked as the cluster runs: every op applied anywhere must be the same prepare
 * (identity checksum) on every replica that applies it, and no replica applies an op twice.
 */
import { Prng, assert } from '@shoal/stdx';
import {
  ArtifactKind, decodeClientTable, manifestEntryFor, verifyArtifact, xxh3_64, type ManifestEntry,
} from '@shoal/protocol';
import {
  FRESH_RESTORE, Replica, metadataPlane, partitionPlane, type ClientTableCheckpointEntry, type Completion,
  type ConfigInput, type DurableVsrState, type Effect, type RestoreRecord, type SessionOutcome,
} from '@shoal/consensus';
import { BatchLogStateMachine, KvStateMachine } from '../../../packages/consensus/test/support/state-machines.js';

export const CLUSTER_ID = 0x1234_5678_9abc_def0_1122_3344_5566_7788n;
export const PARTITION_GROUP = (1n << 32n) | (2n << 20n) | 3n;

export type StorageMode = 'sync' | 'stall' | 'fail' | number;
type Sm = KvStateMachine | BatchLogStateMachine;

interface Message {
  readonly seq: number;
  readonly from: number;
  readonly to: number;
  readonly frame: Uint8Array;
  readonly due: number;
}

interface PendingCompletion {
  readonly due: number;
  readonly completion: Completion;
  readonly apply: () => void;
  readonly kind: 'journal' | 'superblock' | 'other';
}

interface Durable {
  superblock: DurableVsrState | null;
  /** The journal: metadata WAL / partition journal file (both survive a crash as written). */
  wal: Map<number, Uint8Array>;
  /** Ops a truncation dropped that this replica may have acked (recorded before the truncation). */
  faulty: Set<number>;
  snapshot: { op: number; checksum: bigint; bytes: Uint8Array; table: ClientTableCheckpointEntry[] | null } | null;
  flushed: { op: number; bytes: Uint8Array } | null;
}

export interface ClientAnswer {
  readonly token: number;
  readonly client: bigint;
  readonly frame: Uint8Array;
}

export class Node {
  readonly index: number;
  replica: Replica | null = null;
  sm: Sm;
  readonly durable: Durable = { superblock: null, wal: new Map(), faulty: new Set(), snapshot: null, flushed: null };
  journalMode: StorageMode = 'sync';
  superblockMode: StorageMode = 'sync';
  stalled: PendingCompletion[] = [];
  readonly staging = new Map<bigint, Map<number, Uint8Array>>();
  readonly offers = new Map<string, Uint8Array[]>();
  /** op → identity checksum of every op this incarnation applied. */
  applied = new Map<number, bigint>();
  boots = 0;
  fatal: string | null = null;
  /** Restart as if the journal were gone (a `--fresh` rejoin): the core votes blind. */
  journalLost = false;

  constructor(index: number, sm: Sm) {
    this.index = index;
    this.sm = sm;
  }

  get r(): Replica {
    assert(this.replica !== null, `node ${this.index} is down`);
    return this.replica;
  }
}

export interface ClusterOptions {
  readonly replicas: number;
  readonly plane?: 'metadata' | 'partition';
  readonly seed?: number;
  readonly config?: Partial<ConfigInput>;
  readonly latency?: number;
  readonly storage?: StorageMode;
  /**
   * Partition plane: the flushed state is durable only every this many commits (the segments'
   * fsync threshold; a restart comes back at the last such op, as a real restart cuts unsynced
   * segment bytes back to the recorded frontier). Default 1: every commit.
   */
  readonly flushEvery?: number;
}

export class Cluster {
  readonly n: number;
  readonly plane: 'metadata' | 'partition';
  readonly nodes: Node[] = [];
  readonly prng: Prng;
  readonly config: Partial<ConfigInput>;
  readonly flushEvery: number;
  now = 0;
  latency: number;
  #seq = 0;
  network: Message[] = [];
  completions: PendingCompletion[] = [];
  /** Return true to drop a message. */
  readonly filters: ((m: { from: number; to: number; command: number; frame: Uint8Array }) => boolean)[] = [];
  readonly isolated = new Set<number>();
  readonly answers: ClientAnswer[] = [];
  readonly sessionResults: { node: number; token: number; client: bigint; outcome: SessionOutcome; epoch: bigint }[] = [];
  /** Global op → checksum of the applied prepare (the committed log). */
  readonly committed = new Map<number, bigint>();
  readonly trace: string[] = [];
  #token = 1;
  sent = 0;

  constructor(options: ClusterOptions) {
    this.n = options.replicas;
    this.plane = options.plane ?? 'metadata';
    this.prng = new Prng(options.seed ?? 1);
    this.config = options.config ?? {};
    this.latency = options.latency ?? 1;
    this.flushEvery = options.flushEvery ?? 1;
    for (let i = 0; i < this.n; i++) {
      const node = new Node(i, this.freshSm());
      if (options.storage !== undefined) node.journalMode = options.storage;
      this.nodes.push(node);
      this.boot(node, FRESH_RESTORE);
    }
  }

  freshSm(): Sm {
    return this.plane === 'metadata' ? new KvStateMachine() : new BatchLogStateMachine();
  }

  boot(node: Node, restore: RestoreRecord): void {
    node.boots += 1;
    node.applied = new Map();
    const prng = new Prng(this.prng.u32() + node.index * 7919 + node.boots * 104729);
    const plane = this.plane === 'metadata' ? metadataPlane(prng.u128() | 1n) : partitionPlane(PARTITION_GROUP);
    node.replica = new Replica({
      config: {
        cluster: CLUSTER_ID,
        replica: node.index,
        replicaCount: this.n,
        deepInvariants: true,
        ...this.config,
      },
      plane,
      stateMachine: node.sm,
      time: { realtimeMicros: () => 1_700_000_000_000_000n + BigInt(this.now) * 10_000n },
      prng,
      restore,
    });
    this.process(node);
  }

  // -------------------------------------------------------------------------------------------
  // Driving.

  step(): void {
    this.now += 1;
    this.deliverDue();
    for (const node of this.nodes) {
      if (node.replica === null || node.fatal !== null) continue;
      node.replica.tick();
      this.process(node);
    }
    this.deliverDue();
  }

  run(ticks: number): void {
    for (let i = 0; i < ticks; i++) this.step();
  }

  runUntil(predicate: () => boolean, maxTicks = 5000): number {
    for (let i = 0; i < maxTicks; i++) {
      if (predicate()) return i;
      this.step();
    }
    if (predicate()) return maxTicks;
    throw new Error(`condition not reached in ${maxTicks} ticks\n${this.describe()}`);
  }

  deliverDue(): void {
    for (;;) {
      const completion = this.completions.find((p) => p.due <= this.now);
      if (completion !== undefined) {
        this.completions.splice(this.completions.indexOf(completion), 1);
        this.complete(completion);
        continue;
      }
      let best: Message | undefined;
      for (const m of this.network) if (m.due <= this.now && (best === undefined || m.seq < best.seq)) best = m;
      if (best === undefined) return;
      this.network.splice(this.network.indexOf(best), 1);
      this.deliver(best);
    }
  }

  deliver(m: Message): void {
    const node = this.nodes[m.to] as Node;
    if (node.replica === null || node.fatal !== null) return;
    // A Buffer, as a socket hands it over (its slice() is a view, not a copy).
    const copy = Buffer.from(m.frame);
    node.replica.onMessage(copy);
    copy.fill(0xee); // the core must have copied whatever it keeps
    this.process(node);
  }

  complete(p: PendingCompletion): void {
    p.apply();
  }

  // -------------------------------------------------------------------------------------------
  // Effects.

  process(node: Node): void {
    const r = node.replica;
    if (r === null) return;
    for (let effects = r.takeEffects(); effects.length > 0; effects = r.takeEffects()) {
      for (const effect of effects) this.perform(node, effect);
      if (node.replica !== r) return;
    }
  }

  #schedule(node: Node, mode: StorageMode, kind: PendingCompletion['kind'], completion: Completion, onDurable: () => void): void {
    const r = node.replica as Replica;
    const apply = (): void => {
      if (node.replica !== r) return; // crashed meanwhile: the write never happened
      onDurable();
      r.onStorageDone(completion);
      this.process(node);
    };
    if (mode === 'sync') apply();
    else if (mode === 'stall') node.stalled.push({ due: 0, completion, apply, kind });
    else if (typeof mode === 'number') this.completions.push({ due: this.now + mode, completion, apply, kind });
    else apply();
  }

  /** Completes every stalled write of `kind` on a node. */
  release(index: number, kind: 'journal' | 'superblock' | 'other' | 'all' = 'all'): void {
    const node = this.nodes[index] as Node;
    const ready = node.stalled.filter((p) => kind === 'all' || p.kind === kind);
    node.stalled = node.stalled.filter((p) => !ready.includes(p));
    for (const p of ready) p.apply();
  }

  /** Completes every stalled journal write of a node as FAILED (EIO): nothing reached its disk. */
  failStalledJournal(index: number): void {
    const node = this.nodes[index] as Node;
    const r = node.replica as Replica;
    const failed = node.stalled.filter((p) => p.kind === 'journal');
    node.stalled = node.stalled.filter((p) => !failed.includes(p));
    for (const p of failed) {
      if (node.replica !== r || p.completion.kind !== 'journal_written') continue;
      r.onStorageDone({ ...p.completion, ok: false });
      this.process(node);
    }
  }

  perform(node: Node, e: Effect): void {
    const r = node.replica as Replica;
    switch (e.kind) {
      case 'send': {
        this.sent += 1;
        const command = e.frame[60] as number;
        if (this.isolated.has(node.index) || this.isolated.has(e.to)) return;
        if (this.filters.some((f) => f({ from: node.index, to: e.to, command, frame: e.frame }))) return;
        this.network.push({ seq: this.#seq++, from: node.index, to: e.to, frame: e.frame, due: this.now + this.latency });
        return;
      }
      case 'client_frame':
        this.answers.push({ token: e.token ?? -1, client: e.client, frame: e.frame });
        return;
      case 'journal_append': {
        const frame = e.frame;
        this.#schedule(node, node.journalMode, 'journal', { kind: 'journal_written', op: e.op, checksum: e.checksum, ok: node.journalMode !== 'fail' }, () => {
          if (node.journalMode !== 'fail') {
            node.durable.wal.set(e.op, frame);
            node.durable.faulty.delete(e.op);
          }
        });
        return;
      }
      case 'journal_truncate':
        for (const op of [...node.durable.faulty]) if (op >= e.fromOp) node.durable.faulty.delete(op);
        for (let op = e.fromOp; op <= e.faultyThrough; op++) node.durable.faulty.add(op);
        for (const op of [...node.durable.wal.keys()]) if (op >= e.fromOp) node.durable.wal.delete(op);
        return;
      case 'journal_drain':
        for (const op of [...node.durable.wal.keys()]) if (op < e.beforeOp) node.durable.wal.delete(op);
        return;
      case 'superblock_write': {
        const mode = node.superblockMode;
        this.#schedule(node, mode, 'superblock', { kind: 'superblock_written', state: e.state, ok: mode !== 'fail' }, () => {
          if (mode !== 'fail') node.durable.superblock = e.state;
        });
        return;
      }
      case 'checkpoint': {
        const bytes = (node.sm as KvStateMachine).snapshot();
        const checksum = xxh3_64(bytes);
        const table = r.clientTableCheckpoint();
        node.durable.snapshot = { op: e.op, checksum, bytes, table };
        r.onStorageDone({ kind: 'checkpoint_done', op: e.op, checksum, ok: true });
        return;
      }
      case 'transfer_offer':
        this.#buildOffer(node, e);
        return;
      case 'transfer_read': {
        const artifacts = node.offers.get(`${e.requester}:${e.nonce}`);
        const artifact = artifacts?.[e.artifact];
        const bytes = artifact === undefined ? null : artifact.slice(e.offset, e.offset + e.len);
        r.onStorageDone({ kind: 'chunk_read', requester: e.requester, nonce: e.nonce, artifact: e.artifact, offset: e.offset, bytes });
        return;
      }
      case 'transfer_offer_dropped':
        node.offers.delete(`${e.requester}:${e.nonce}`);
        return;
      case 'transfer_stage': {
        const staged = node.staging.get(e.nonce) ?? new Map<number, Uint8Array>();
        const prev = staged.get(e.artifact) ?? new Uint8Array(0);
        assert(prev.length === e.offset, 'staging: chunk out of order');
        const next = new Uint8Array(prev.length + e.bytes.length);
        next.set(prev);
        next.set(e.bytes, prev.length);
        staged.set(e.artifact, next);
        node.staging.set(e.nonce, staged);
        return;
      }
      case 'transfer_discard':
        node.staging.delete(e.nonce);
        return;
      case 'transfer_install':
        this.#install(node, e);
        return;
      case 'committed': {
        const frame = r.journalFrame(e.op);
        const checksum = frame === null ? -1n : new DataView(frame.buffer).getBigUint64(0, true);
        assert(!node.applied.has(e.op), `node ${node.index} applied op ${e.op} twice`);
        node.applied.set(e.op, checksum);
        const known = this.committed.get(e.op);
        if (known === undefined) this.committed.set(e.op, checksum);
        else if (checksum !== -1n && known !== -1n) assert(known === checksum, `SAFETY: op ${e.op} differs on node ${node.index}`);
        // (The partition journal is compacted at restart: only ops above the flushed state return.)
        if (this.plane === 'partition' && e.op % this.flushEvery === 0) node.durable.flushed = { op: e.op, bytes: node.sm.snapshot() };
        return;
      }
      case 'session_result':
        this.sessionResults.push({ node: node.index, token: e.token, client: e.client, outcome: e.outcome, epoch: e.epoch });
        return;
      case 'dropped':
        this.trace.push(`${this.now} n${node.index} drop cmd=${e.command} from=${e.from} ${e.reason}`);
        return;
      case 'event':
        this.trace.push(`${this.now} n${node.index} ${e.name}: ${e.detail}`);
        return;
      case 'fatal':
        node.fatal = e.reason;
        this.trace.push(`${this.now} n${node.index} FATAL ${e.reason}`);
        return;
    }
  }

  #buildOffer(node: Node, e: Extract<Effect, { kind: 'transfer_offer' }>): void {
    const r = node.replica as Replica;
    let artifacts: Uint8Array[];
    let entries: ManifestEntry[];
    if (this.plane === 'metadata') {
      const snap = node.durable.snapshot;
      if (snap === null || e.clientTable === null) {
        r.onStorageDone({ kind: 'offer_built', requester: e.requester, nonce: e.nonce, entries: null, transient: false });
        return;
      }
      artifacts = [snap.bytes, e.clientTable];
      entries = [manifestEntryFor(ArtifactKind.MetadataSnapshot, BigInt(snap.op), snap.bytes), manifestEntryFor(ArtifactKind.ClientTable, BigInt(e.commitOp), e.clientTable)];
    } else {
      const log = node.sm.snapshot();
      artifacts = [log, new Uint8Array(0)];
      entries = [manifestEntryFor(ArtifactKind.SegmentLog, 0n, log), manifestEntryFor(ArtifactKind.ConsumerOffsets, BigInt(e.commitOp), new Uint8Array(0))];
    }
    node.offers.set(`${e.requester}:${e.nonce}`, artifacts);
    r.onStorageDone({ kind: 'offer_built', requester: e.requester, nonce: e.nonce, entries, transient: false });
  }

  /** Tests can corrupt staged artifacts to exercise the decode budget. */
  corruptInstall: ((node: number) => boolean) | null = null;

  #install(node: Node, e: Extract<Effect, { kind: 'transfer_install' }>): void {
    const r = node.replica as Replica;
    const staged = node.staging.get(e.nonce) ?? new Map<number, Uint8Array>();
    const artifacts = e.manifest.map((_, i) => staged.get(i) ?? new Uint8Array(0));
    const first = artifacts[0];
    if (this.corruptInstall?.(node.index) === true && first !== undefined && first.length > 0) first[0] = (first[0] as number) ^ 0xff;
    for (let i = 0; i < e.manifest.length; i++) {
      const problem = verifyArtifact(e.manifest[i] as ManifestEntry, artifacts[i] as Uint8Array);
      if (problem !== null) {
        r.onStorageDone({ kind: 'install_done', nonce: e.nonce, ok: false, failure: 'verify', reason: problem });
        return;
      }
    }
    node.staging.delete(e.nonce);
    if (this.plane === 'metadata') {
      const snapEntry = e.manifest[0] as ManifestEntry;
      const snapshotOp = Number(snapEntry.frontier);
      const table = decodeClientTable(artifacts[1] as Uint8Array);
      if (!table.ok) {
        r.onStorageDone({ kind: 'install_done', nonce: e.nonce, ok: false, failure: 'decode', reason: table.reason });
        return;
      }
      const current = node.sm as KvStateMachine;
      const have = current.applied[current.applied.length - 1] ?? 0;
      const bytes = artifacts[0] as Uint8Array;
      const checksum = xxh3_64(bytes);
      if (snapshotOp > have) {
        const restored = KvStateMachine.restore(bytes);
        Object.assign(current, { applied: restored.applied, digest: restored.digest });
        current.map.clear();
        for (const [k, v] of restored.map) current.map.set(k, v);
        for (let op = snapshotOp + 1; op <= e.journalHead; op++) node.durable.faulty.add(op);
        for (const op of [...node.durable.wal.keys()]) if (op > snapshotOp) node.durable.wal.delete(op);
        node.durable.snapshot = { op: snapshotOp, checksum, bytes, table: null };
        for (const op of [...node.applied.keys()]) if (op > 0) node.applied.delete(op);
      }
      r.onStorageDone({ kind: 'install_done', nonce: e.nonce, ok: true, snapshotOp, checkpointChecksum: checksum, clientTable: table.value, tableFrontier: Number((e.manifest[1] as ManifestEntry).frontier) });
      return;
    }
    const restored = BatchLogStateMachine.restore(artifacts[0] as Uint8Array);
    const current = node.sm as BatchLogStateMachine;
    Object.assign(current, { log: restored.log, applied: restored.applied, digest: restored.digest, committedNext: restored.committedNext });
    current.pending.clear();
    node.applied = new Map();
    for (let op = e.commitOp + 1; op <= e.journalHead; op++) node.durable.faulty.add(op);
    node.durable.wal.clear();
    node.durable.flushed = { op: e.commitOp, bytes: current.snapshot() };
    r.onStorageDone({ kind: 'install_done', nonce: e.nonce, ok: true, snapshotOp: e.commitOp, checkpointChecksum: 0n, clientTable: null, tableFrontier: 0 });
  }

  // -------------------------------------------------------------------------------------------
  // Faults.

  /** Crash: the core and every in-flight write are gone; only durable state survives. */
  crash(index: number): void {
    const node = this.nodes[index] as Node;
    node.replica = null;
    node.stalled = [];
    node.staging.clear();
    node.offers.clear();
    this.network = this.network.filter((m) => m.to !== index && m.from !== index);
    this.trace.push(`${this.now} n${index} CRASH`);
  }

  restart(index: number): void {
    const node = this.nodes[index] as Node;
    assert(node.replica === null, 'restart of a live node');
    node.fatal = null;
    const d = node.durable;
    let restore: RestoreRecord;
    if (this.plane === 'metadata') {
      node.sm = d.snapshot === null ? new KvStateMachine() : KvStateMachine.restore(d.snapshot.bytes);
      const journal = [...d.wal.entries()].sort((a, b) => a[0] - b[0]).map(([, f]) => f);
      restore = {
        priorState: d.wal.size > 0 || d.snapshot !== null || d.superblock !== null,
        superblock: d.superblock,
        checkpointOp: d.snapshot?.op ?? 0,
        checkpointChecksum: d.snapshot?.checksum ?? 0n,
        journal,
        faultyOps: [...d.faulty],
        lostThrough: 0,
        journalLost: false,
        clientTable: d.snapshot?.table ?? null,
        commit: 0,
      };
    } else {
      node.sm = d.flushed === null ? new BatchLogStateMachine() : BatchLogStateMachine.restore(d.flushed.bytes);
      const flushedOp = d.flushed?.op ?? 0;
      const journal = [...d.wal.entries()].filter(([op]) => op > flushedOp).sort((a, b) => a[0] - b[0]).map(([, f]) => f);
      restore = {
        priorState: d.superblock !== null || d.flushed !== null || d.wal.size > 0,
        superblock: d.superblock,
        checkpointOp: 0,
        checkpointChecksum: 0n,
        journal,
        faultyOps: [...d.faulty],
        lostThrough: 0,
        journalLost: node.journalLost,
        clientTable: null,
        commit: flushedOp,
      };
    }
    this.trace.push(`${this.now} n${index} RESTART`);
    this.boot(node, restore);
  }

  isolate(index: number): void {
    this.isolated.add(index);
  }

  heal(): void {
    this.isolated.clear();
    this.filters.length = 0;
  }

  // -------------------------------------------------------------------------------------------
  // Clients.

  request(
    index: number,
    fields: { client: bigint; request: bigint; session?: bigint; operation?: number; body?: Uint8Array; userId?: number; requestChecksum?: bigint },
  ): { token: number; outcome: string } {
    const node = this.nodes[index] as Node;
    const token = this.#token++;
    const outcome = node.r.onRequest({
      client: fields.client,
      request: fields.request,
      session: fields.session ?? 0n,
      requestChecksum: fields.requestChecksum ?? 0n,
      operation: fields.operation ?? (this.plane === 'metadata' ? 128 : 160),
      body: fields.body ?? new Uint8Array(0),
      userId: fields.userId ?? 7,
      timestamp: 42n,
      token,
    });
    this.process(node);
    return { token, outcome };
  }

  session(index: number, session: 'register' | 'logout', client: bigint, userId = 7, epoch = 0n, request = 0n): number {
    const node = this.nodes[index] as Node;
    const token = this.#token++;
    node.r.submitSession({ session, client, userId, epoch, request, token });
    this.process(node);
    return token;
  }

  answersFor(token: number): ClientAnswer[] {
    return this.answers.filter((a) => a.token === token);
  }

  // -------------------------------------------------------------------------------------------
  // Reads.

  live(): Node[] {
    return this.nodes.filter((n) => n.replica !== null && n.fatal === null);
  }

  primary(): number | null {
    let best: Node | null = null;
    for (const node of this.live()) {
      const s = node.r.status;
      if (!s.primary) continue;
      if (best === null || s.view > best.r.status.view) best = node;
    }
    return best?.index ?? null;
  }

  commitMins(): number[] {
    return this.nodes.map((n) => (n.replica === null ? -1 : n.replica.status.commitMin));
  }

  /** Every live node applied ops 1..op and agrees on each. */
  converged(op: number): boolean {
    return this.live().every((n) => n.r.status.commitMin >= op);
  }

  describe(): string {
    const lines = this.nodes.map((n) => {
      if (n.replica === null) return `n${n.index}: down`;
      const s = n.replica.status;
      return `n${n.index}: view=${s.view} log_view=${s.logView} ${s.status} op=${s.op} commit=${s.commitMin}/${s.commitMax} primary=${s.primary} stage=${s.transferStage} pipeline=${s.pipelineLength}+${s.requestQueueLength}${n.fatal !== null ? ` FATAL ${n.fatal}` : ''}`;
    });
    return [...lines, ...this.trace.slice(-40)].join('\n');
  }
}

export const text = new TextEncoder();
