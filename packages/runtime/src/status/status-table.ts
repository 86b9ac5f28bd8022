/**
 * The node's shared status table: node-wide facts that any shard needs to answer a
 * non-replicated read locally (GetClients / GetClient / GetMe, GetStats, GetStream / GetTopic
 * counters, GetClusterMetadata), published by the thread that owns each fact. One
 * SharedArrayBuffer, created by the supervisor, attached by every worker.
 *
 * Every region has exactly one writer per record; readers never block writers. Records of more
 * than one word are read under a per-record sequence lock (the writer makes SEQ odd, stores the
 * fields, makes SEQ even; a reader retries while SEQ is odd or moved). All accesses are Atomics,
 * so there is no data race and no torn value.
 *
 * ```
 *  word 0                      header (HEADER_WORDS)           written by
 *    MAGIC VERSION SHARDS SLOTS PARTITION_SLOTS                supervisor (immutable)
 *    NEXT_CLIENT_ID CONNECTIONS_OPEN                           every shard (Atomics.add)
 *    LOG_GENERATION                                            supervisor (log rotation)
 *    METADATA_VIEW STATUS PRIMARY COMMIT_LO COMMIT_HI          metadata worker
 *    START_TIME_LO START_TIME_HI                               supervisor (immutable)
 *    BOUND_TCP_PORT                                            shard 0, once bound (port 0 = ephemeral)
 *    BOUND_HTTP_PORT                                           supervisor, once bound
 *    METADATA_CAUGHT_UP  1 = applied all it knows committed    metadata worker (readiness)
 *    METADATA_APPLIED_SEQ _LO _HI  op last sent to the shards    metadata worker (before any reply to it)
 *    METADATA_CURRENT _LO _HI  1 once current since boot, and   metadata worker (once: the boot latch)
 *                              the op then sent to the shards
 *    REPLICA_OWNER[32]  thread + 1 holding each peer's link    the adopting worker (cluster issue)
 *  threads   (threadCount × THREAD_WORDS)                      each thread its own record
 *    SEQ BYTES_IN(2) BYTES_OUT(2) MESSAGES_IN(2) CONNECTIONS
 *  sessions  (shards × slotsPerShard × SESSION_WORDS)          shard s: slots [s·n, (s+1)·n)
 *    SEQ STATE CLIENT_ID USER_ID TRANSPORT VSR_CLIENT(4) ADDRESS_LEN ADDRESS(22 words)
 *  partitions (partitionSlots × PARTITION_WORDS, open addressing on murmur3(group))
 *    STATE SEQ GROUP(2) CURRENT_OFFSET(2) SEGMENTS - SIZE(2) MESSAGES(2) VIEW PRIMARY   the group's owner shard
 * ```
 *
 * Partition slots are claimed with a compare-exchange (EMPTY → CLAIMING), then the key is stored
 * and the state becomes LIVE; a deleted partition keeps its key (DELETED) so probes still pass
 * it, and a re-created partition with the same group reuses its slot. A full table only means
 * some counters read as zero (the owner logs it once); it never fails a request.
 */
import { murmur3OfU64 } from '../shard/shard-of.js';

const MAGIC = 0x5453_4853; // "SHST"
const VERSION = 1;

export const Header = {
  MAGIC: 0,
  VERSION: 1,
  SHARDS: 2,
  SESSION_SLOTS_PER_SHARD: 3,
  PARTITION_SLOTS: 4,
  NEXT_CLIENT_ID: 5,
  CONNECTIONS_OPEN: 6,
  LOG_GENERATION: 7,
  METADATA_VIEW: 8,
  METADATA_STATUS: 9,
  METADATA_PRIMARY: 10,
  METADATA_COMMIT_LO: 11,
  METADATA_COMMIT_HI: 12,
  START_TIME_LO: 13,
  START_TIME_HI: 14,
  THREADS: 15,
  BOUND_TCP_PORT: 16,
  BOUND_HTTP_PORT: 17,
  /** 1 while the metadata replica has applied everything it knows committed (and transfers nothing). */
  METADATA_CAUGHT_UP: 18,
  /**
   * The op the metadata worker last sent to every shard's copy, published before any reply that
   * reflects it (a sequence-locked u64): a shard whose copy is behind it holds a connection's next
   * frame until the copy catches up (client-plane/connection.ts "metadata fence").
   */
  METADATA_APPLIED_SEQ: 19,
  METADATA_APPLIED_LO: 20,
  METADATA_APPLIED_HI: 21,
  /**
   * The boot latch (docs/cluster.md "Incarnations and the boot latch"): 1 once the metadata
   * replica has been current since this boot (status normal, commit_min ≥ commit_max, not ceded,
   * not transferring), set once and never cleared; _LO/_HI hold the op the worker had sent to the
   * shards by then (stored before the flag). A shard opens no partition group before the flag is
   * set and its copy has applied that op.
   */
  METADATA_CURRENT: 22,
  METADATA_CURRENT_LO: 23,
  METADATA_CURRENT_HI: 24,
  /** 32 words: replica r's connection is on mesh thread REPLICA_OWNER[r] - 1 (0 = not connected). */
  REPLICA_OWNER: 32,
} as const;
const REPLICAS_MAX = 32;
const HEADER_WORDS = 64;

const ThreadWord = { SEQ: 0, BYTES_IN: 1, BYTES_OUT: 3, MESSAGES_IN: 5, CONNECTIONS: 7 } as const;
const THREAD_WORDS = 16;

const SessionWord = { SEQ: 0, STATE: 1, CLIENT_ID: 2, USER_ID: 3, TRANSPORT: 4, VSR_CLIENT: 5, ADDRESS_LEN: 9, ADDRESS: 10 } as const;
const SESSION_WORDS = 32;
/** Bytes of a peer address kept per session (IPv6 with port is at most 47 characters). */
export const SESSION_ADDRESS_BYTES_MAX = (SESSION_WORDS - SessionWord.ADDRESS) * 4;

const PartitionWord = { STATE: 0, SEQ: 1, GROUP: 2, CURRENT_OFFSET: 4, SEGMENTS: 6, SIZE: 8, MESSAGES: 10, VIEW: 12, PRIMARY: 13 } as const;
const PARTITION_WORDS = 16;
const PartitionState = { EMPTY: 0, CLAIMING: 1, LIVE: 2, DELETED: 3 } as const;

export const MetadataStatusCode = { normal: 0, view_change: 1, recovering: 2 } as const;
export type MetadataStatusName = keyof typeof MetadataStatusCode;

/** Structured-clone-safe: post it to workers in workerData. */
export interface StatusTableHandle {
  readonly kind: 'shoal.status';
  readonly buffer: SharedArrayBuffer;
}

export interface StatusTableOptions {
  readonly shardCount: number;
  /** Threads with a traffic record: the metadata worker (0) and the shards (1..N). */
  readonly threadCount: number;
  readonly sessionSlotsPerShard: number;
  /** A power of two. */
  readonly partitionSlots: number;
  readonly startTimeMicros: bigint;
}

export interface SessionRecord {
  readonly clientId: number;
  /** null before login. */
  readonly userId: number | null;
  /** 1 TCP. */
  readonly transport: number;
  /** The VSR client id of the logged-in session; null before login. */
  readonly vsrClient: bigint | null;
  readonly address: string;
}

export interface PartitionCounterRecord {
  readonly currentOffset: bigint;
  readonly segmentsCount: number;
  readonly sizeBytes: bigint;
  readonly messagesCount: bigint;
}

export interface ThreadTraffic {
  readonly bytesIn: bigint;
  readonly bytesOut: bigint;
  readonly messagesIn: bigint;
  readonly connections: number;
}

const SEQLOCK_RETRIES = 64;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class StatusTable {
  readonly shardCount: number;
  readonly threadCount: number;
  readonly sessionSlotsPerShard: number;
  readonly partitionSlots: number;
  readonly words: Int32Array;
  readonly #threadsAt: number;
  readonly #sessionsAt: number;
  readonly #partitionsAt: number;

  private constructor(buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer);
    const w = this.words;
    if (Atomics.load(w, Header.MAGIC) !== MAGIC || Atomics.load(w, Header.VERSION) !== VERSION) {
      throw new Error('status table: bad magic or version');
    }
    this.shardCount = Atomics.load(w, Header.SHARDS);
    this.threadCount = Atomics.load(w, Header.THREADS);
    this.sessionSlotsPerShard = Atomics.load(w, Header.SESSION_SLOTS_PER_SHARD);
    this.partitionSlots = Atomics.load(w, Header.PARTITION_SLOTS);
    this.#threadsAt = HEADER_WORDS;
    this.#sessionsAt = this.#threadsAt + this.threadCount * THREAD_WORDS;
    this.#partitionsAt = this.#sessionsAt + this.shardCount * this.sessionSlotsPerShard * SESSION_WORDS;
  }

  static create(options: StatusTableOptions): StatusTableHandle {
    const { shardCount, threadCount, sessionSlotsPerShard, partitionSlots } = options;
    if ((partitionSlots & (partitionSlots - 1)) !== 0 || partitionSlots < 2) throw new RangeError('status table: partitionSlots must be a power of two');
    const words = HEADER_WORDS + threadCount * THREAD_WORDS + shardCount * sessionSlotsPerShard * SESSION_WORDS + partitionSlots * PARTITION_WORDS;
    const buffer = new SharedArrayBuffer(words * 4);
    const w = new Int32Array(buffer);
    w[Header.MAGIC] = MAGIC;
    w[Header.VERSION] = VERSION;
    w[Header.SHARDS] = shardCount;
    w[Header.THREADS] = threadCount;
    w[Header.SESSION_SLOTS_PER_SHARD] = sessionSlotsPerShard;
    w[Header.PARTITION_SLOTS] = partitionSlots;
    w[Header.NEXT_CLIENT_ID] = 1;
    w[Header.METADATA_PRIMARY] = 0;
    w[Header.START_TIME_LO] = Number(options.startTimeMicros & 0xffff_ffffn) | 0;
    w[Header.START_TIME_HI] = Number((options.startTimeMicros >> 32n) & 0xffff_ffffn) | 0;
    return { kind: 'shoal.status', buffer };
  }

  static attach(handle: StatusTableHandle): StatusTable {
    return new StatusTable(handle.buffer);
  }

  get byteLength(): number {
    return this.words.byteLength;
  }

  // ---- node header ------------------------------------------------------------------------

  /** A node-unique u32 id for a new connection (GetClient addresses it). Never 0. */
  nextClientId(): number {
    const id = Atomics.add(this.words, Header.NEXT_CLIENT_ID, 1) >>> 0;
    return id === 0 ? this.nextClientId() : id;
  }

  /** Counts a connection against `max`; false (and nothing counted) when the node is full. */
  tryOpenConnection(max: number): boolean {
    for (;;) {
      const open = Atomics.load(this.words, Header.CONNECTIONS_OPEN);
      if (open >= max) return false;
      if (Atomics.compareExchange(this.words, Header.CONNECTIONS_OPEN, open, open + 1) === open) return true;
    }
  }

  closeConnection(): void {
    Atomics.sub(this.words, Header.CONNECTIONS_OPEN, 1);
  }

  get connectionsOpen(): number {
    return Atomics.load(this.words, Header.CONNECTIONS_OPEN);
  }

  /** The ports actually bound (tcp.address / http.address may ask for port 0). */
  publishBoundPort(which: 'tcp' | 'http', port: number): void {
    Atomics.store(this.words, which === 'tcp' ? Header.BOUND_TCP_PORT : Header.BOUND_HTTP_PORT, port);
  }

  boundPort(which: 'tcp' | 'http'): number {
    return Atomics.load(this.words, which === 'tcp' ? Header.BOUND_TCP_PORT : Header.BOUND_HTTP_PORT);
  }

  /** The mesh thread holding replica `replica`'s connection, or -1. */
  replicaOwner(replica: number): number {
    if (!Number.isInteger(replica) || replica < 0 || replica >= REPLICAS_MAX) return -1;
    return Atomics.load(this.words, Header.REPLICA_OWNER + replica) - 1;
  }

  publishReplicaOwner(replica: number, thread: number | null): void {
    if (!Number.isInteger(replica) || replica < 0 || replica >= REPLICAS_MAX) throw new RangeError(`status table: replica ${replica}`);
    Atomics.store(this.words, Header.REPLICA_OWNER + replica, thread === null ? 0 : thread + 1);
  }

  get startTimeMicros(): bigint {
    return joinWords(Atomics.load(this.words, Header.START_TIME_LO), Atomics.load(this.words, Header.START_TIME_HI));
  }

  publishMetadata(view: number, status: MetadataStatusName, primary: number, commit: bigint): void {
    const w = this.words;
    Atomics.store(w, Header.METADATA_VIEW, view | 0);
    Atomics.store(w, Header.METADATA_STATUS, MetadataStatusCode[status]);
    Atomics.store(w, Header.METADATA_PRIMARY, primary);
    Atomics.store(w, Header.METADATA_COMMIT_LO, Number(commit & 0xffff_ffffn) | 0);
    Atomics.store(w, Header.METADATA_COMMIT_HI, Number((commit >> 32n) & 0xffff_ffffn) | 0);
  }

  publishMetadataCaughtUp(caughtUp: boolean): void {
    Atomics.store(this.words, Header.METADATA_CAUGHT_UP, caughtUp ? 1 : 0);
  }

  get metadataCaughtUp(): boolean {
    return Atomics.load(this.words, Header.METADATA_CAUGHT_UP) === 1;
  }

  /** Single writer (the metadata worker): the op of the last commit or snapshot it sent to the shards. */
  publishMetadataApplied(op: bigint): void {
    const w = this.words;
    Atomics.add(w, Header.METADATA_APPLIED_SEQ, 1);
    storeU64(w, Header.METADATA_APPLIED_LO, op);
    Atomics.add(w, Header.METADATA_APPLIED_SEQ, 1);
  }

  /** Single writer (the metadata worker), once per boot: the boot latch opens at `op` (see Header). */
  publishMetadataCurrent(op: bigint): void {
    const w = this.words;
    if (Atomics.load(w, Header.METADATA_CURRENT) === 1) return;
    storeU64(w, Header.METADATA_CURRENT_LO, op);
    Atomics.store(w, Header.METADATA_CURRENT, 1);
  }

  /** The op at which the metadata replica was first current since boot, or null while it has not been. */
  metadataCurrent(): bigint | null {
    const w = this.words;
    if (Atomics.load(w, Header.METADATA_CURRENT) !== 1) return null;
    return joinWords(Atomics.load(w, Header.METADATA_CURRENT_LO), Atomics.load(w, Header.METADATA_CURRENT_HI));
  }

  /** Read on every client frame a shard pulls: no closure, no retry helper. */
  metadataApplied(): bigint {
    const w = this.words;
    for (let attempt = 0; ; attempt++) {
      const before = Atomics.load(w, Header.METADATA_APPLIED_SEQ);
      const lo = Atomics.load(w, Header.METADATA_APPLIED_LO);
      const hi = Atomics.load(w, Header.METADATA_APPLIED_HI);
      if (((before & 1) === 0 && Atomics.load(w, Header.METADATA_APPLIED_SEQ) === before) || attempt >= SEQLOCK_RETRIES) return joinWords(lo, hi);
    }
  }

  metadata(): { view: number; status: MetadataStatusName; primary: number; commit: bigint } {
    const w = this.words;
    const code = Atomics.load(w, Header.METADATA_STATUS);
    const status = (Object.keys(MetadataStatusCode) as MetadataStatusName[]).find((k) => MetadataStatusCode[k] === code) ?? 'normal';
    return {
      view: Atomics.load(w, Header.METADATA_VIEW) >>> 0,
      status,
      primary: Atomics.load(w, Header.METADATA_PRIMARY),
      commit: joinWords(Atomics.load(w, Header.METADATA_COMMIT_LO), Atomics.load(w, Header.METADATA_COMMIT_HI)),
    };
  }

  // ---- per-thread traffic (published by each thread about once a second) ------------------

  publishTraffic(thread: number, traffic: ThreadTraffic): void {
    const at = this.#threadAt(thread);
    const w = this.words;
    Atomics.add(w, at + ThreadWord.SEQ, 1);
    storeU64(w, at + ThreadWord.BYTES_IN, traffic.bytesIn);
    storeU64(w, at + ThreadWord.BYTES_OUT, traffic.bytesOut);
    storeU64(w, at + ThreadWord.MESSAGES_IN, traffic.messagesIn);
    Atomics.store(w, at + ThreadWord.CONNECTIONS, traffic.connections);
    Atomics.add(w, at + ThreadWord.SEQ, 1);
  }

  traffic(thread: number): ThreadTraffic {
    const at = this.#threadAt(thread);
    const w = this.words;
    return readConsistent(w, at + ThreadWord.SEQ, () => ({
      bytesIn: loadU64(w, at + ThreadWord.BYTES_IN),
      bytesOut: loadU64(w, at + ThreadWord.BYTES_OUT),
      messagesIn: loadU64(w, at + ThreadWord.MESSAGES_IN),
      connections: Atomics.load(w, at + ThreadWord.CONNECTIONS),
    }));
  }

  // ---- sessions (one record per client connection, written by its shard) -----------------

  /** Writes a session record into slot `slot` (0-based within `shard`). */
  writeSession(shard: number, slot: number, record: SessionRecord): void {
    const at = this.#sessionAt(shard, slot);
    const w = this.words;
    Atomics.add(w, at + SessionWord.SEQ, 1);
    Atomics.store(w, at + SessionWord.STATE, 1);
    Atomics.store(w, at + SessionWord.CLIENT_ID, record.clientId | 0);
    Atomics.store(w, at + SessionWord.USER_ID, record.userId === null ? -1 : record.userId | 0);
    Atomics.store(w, at + SessionWord.TRANSPORT, record.transport);
    const vsr = record.vsrClient ?? 0n;
    for (let i = 0; i < 4; i++) Atomics.store(w, at + SessionWord.VSR_CLIENT + i, Number((vsr >> BigInt(32 * i)) & 0xffff_ffffn) | 0);
    const bytes = encoder.encode(record.address).subarray(0, SESSION_ADDRESS_BYTES_MAX);
    Atomics.store(w, at + SessionWord.ADDRESS_LEN, bytes.length);
    const padded = new Uint8Array(SESSION_ADDRESS_BYTES_MAX);
    padded.set(bytes);
    const addressWords = new Int32Array(padded.buffer);
    for (let i = 0; i < addressWords.length; i++) Atomics.store(w, at + SessionWord.ADDRESS + i, addressWords[i] as number);
    Atomics.add(w, at + SessionWord.SEQ, 1);
  }

  clearSession(shard: number, slot: number): void {
    const at = this.#sessionAt(shard, slot);
    Atomics.add(this.words, at + SessionWord.SEQ, 1);
    Atomics.store(this.words, at + SessionWord.STATE, 0);
    Atomics.add(this.words, at + SessionWord.SEQ, 1);
  }

  /** Every open connection of the node, every shard. */
  sessions(): SessionRecord[] {
    const out: SessionRecord[] = [];
    for (let shard = 0; shard < this.shardCount; shard++) {
      for (let slot = 0; slot < this.sessionSlotsPerShard; slot++) {
        const record = this.readSession(shard, slot);
        if (record !== null) out.push(record);
      }
    }
    return out.sort((a, b) => a.clientId - b.clientId);
  }

  readSession(shard: number, slot: number): SessionRecord | null {
    const at = this.#sessionAt(shard, slot);
    const w = this.words;
    if (Atomics.load(w, at + SessionWord.STATE) === 0) return null;
    return readConsistent(w, at + SessionWord.SEQ, () => {
      if (Atomics.load(w, at + SessionWord.STATE) === 0) return null;
      const userId = Atomics.load(w, at + SessionWord.USER_ID);
      let vsr = 0n;
      for (let i = 3; i >= 0; i--) vsr = (vsr << 32n) | BigInt(Atomics.load(w, at + SessionWord.VSR_CLIENT + i) >>> 0);
      const length = Math.min(Atomics.load(w, at + SessionWord.ADDRESS_LEN), SESSION_ADDRESS_BYTES_MAX);
      const addressWords = new Int32Array(Math.ceil(length / 4));
      for (let i = 0; i < addressWords.length; i++) addressWords[i] = Atomics.load(w, at + SessionWord.ADDRESS + i);
      return {
        clientId: Atomics.load(w, at + SessionWord.CLIENT_ID) >>> 0,
        userId: userId === -1 ? null : userId >>> 0,
        transport: Atomics.load(w, at + SessionWord.TRANSPORT),
        vsrClient: userId === -1 ? null : vsr,
        address: decoder.decode(new Uint8Array(addressWords.buffer, 0, length)),
      };
    });
  }

  // ---- partition counters (written by the owner shard) -------------------------------------

  /**
   * Publishes the counters of `group` (claiming a slot on first use). Returns false when the
   * table is full.
   */
  publishPartition(group: bigint, counters: PartitionCounterRecord): boolean {
    const at = this.#claimPartition(group);
    if (at < 0) return false;
    const w = this.words;
    Atomics.add(w, at + PartitionWord.SEQ, 1);
    storeU64(w, at + PartitionWord.CURRENT_OFFSET, counters.currentOffset);
    Atomics.store(w, at + PartitionWord.SEGMENTS, counters.segmentsCount);
    storeU64(w, at + PartitionWord.SIZE, counters.sizeBytes);
    storeU64(w, at + PartitionWord.MESSAGES, counters.messagesCount);
    Atomics.store(w, at + PartitionWord.STATE, PartitionState.LIVE);
    Atomics.add(w, at + PartitionWord.SEQ, 1);
    return true;
  }

  /**
   * The group's view and its primary as this replica sees them (0xFF: none known, a view change
   * or probing). Single words: readers take each as it is (GetClusterMetadata routing hints).
   */
  publishPartitionRole(group: bigint, view: number, primary: number): void {
    const at = this.#claimPartition(group);
    if (at < 0) return;
    Atomics.store(this.words, at + PartitionWord.VIEW, view | 0);
    Atomics.store(this.words, at + PartitionWord.PRIMARY, primary);
  }

  partitionRole(group: bigint): { readonly view: number; readonly primary: number } | null {
    const at = this.#findPartition(group);
    if (at < 0 || Atomics.load(this.words, at + PartitionWord.STATE) !== PartitionState.LIVE) return null;
    return { view: Atomics.load(this.words, at + PartitionWord.VIEW) >>> 0, primary: Atomics.load(this.words, at + PartitionWord.PRIMARY) };
  }

  /** The partition was deleted: its counters read as absent (the slot keeps its key). */
  retirePartition(group: bigint): void {
    const at = this.#findPartition(group);
    if (at < 0) return;
    Atomics.add(this.words, at + PartitionWord.SEQ, 1);
    Atomics.store(this.words, at + PartitionWord.STATE, PartitionState.DELETED);
    Atomics.add(this.words, at + PartitionWord.SEQ, 1);
  }

  partition(group: bigint): PartitionCounterRecord | null {
    const at = this.#findPartition(group);
    if (at < 0) return null;
    const w = this.words;
    return readConsistent(w, at + PartitionWord.SEQ, () => {
      if (Atomics.load(w, at + PartitionWord.STATE) !== PartitionState.LIVE) return null;
      return {
        currentOffset: loadU64(w, at + PartitionWord.CURRENT_OFFSET),
        segmentsCount: Atomics.load(w, at + PartitionWord.SEGMENTS) >>> 0,
        sizeBytes: loadU64(w, at + PartitionWord.SIZE),
        messagesCount: loadU64(w, at + PartitionWord.MESSAGES),
      };
    });
  }

  #threadAt(thread: number): number {
    if (!Number.isInteger(thread) || thread < 0 || thread >= this.threadCount) throw new RangeError(`status table: thread ${thread}`);
    return this.#threadsAt + thread * THREAD_WORDS;
  }

  #sessionAt(shard: number, slot: number): number {
    if (shard < 0 || shard >= this.shardCount || slot < 0 || slot >= this.sessionSlotsPerShard) {
      throw new RangeError(`status table: session ${shard}/${slot}`);
    }
    return this.#sessionsAt + (shard * this.sessionSlotsPerShard + slot) * SESSION_WORDS;
  }

  #partitionIndexAt(index: number): number {
    return this.#partitionsAt + index * PARTITION_WORDS;
  }

  #findPartition(group: bigint): number {
    const mask = this.partitionSlots - 1;
    const w = this.words;
    let index = murmur3OfU64(group) & mask;
    for (let probes = 0; probes < this.partitionSlots; probes++) {
      const at = this.#partitionIndexAt(index);
      const state = Atomics.load(w, at + PartitionWord.STATE);
      if (state === PartitionState.EMPTY) return -1;
      if (state !== PartitionState.CLAIMING && loadU64(w, at + PartitionWord.GROUP) === group) return at;
      index = (index + 1) & mask;
    }
    return -1;
  }

  #claimPartition(group: bigint): number {
    const found = this.#findPartition(group);
    if (found >= 0) return found;
    const mask = this.partitionSlots - 1;
    const w = this.words;
    let index = murmur3OfU64(group) & mask;
    for (let probes = 0; probes < this.partitionSlots; probes++) {
      const at = this.#partitionIndexAt(index);
      if (Atomics.compareExchange(w, at + PartitionWord.STATE, PartitionState.EMPTY, PartitionState.CLAIMING) === PartitionState.EMPTY) {
        storeU64(w, at + PartitionWord.GROUP, group);
        return at;
      }
      index = (index + 1) & mask;
    }
    return -1;
  }
}

function readConsistent<T>(w: Int32Array, seqWord: number, read: () => T): T {
  for (let attempt = 0; ; attempt++) {
    const before = Atomics.load(w, seqWord);
    const value = read();
    if ((before & 1) === 0 && Atomics.load(w, seqWord) === before) return value;
    // A writer that keeps rewriting the record is publishing fresh values: the last read will do.
    if (attempt >= SEQLOCK_RETRIES) return value;
  }
}

function joinWords(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

function storeU64(w: Int32Array, at: number, value: bigint): void {
  Atomics.store(w, at, Number(value & 0xffff_ffffn) | 0);
  Atomics.store(w, at + 1, Number((value >> 32n) & 0xffff_ffffn) | 0);
}

function loadU64(w: Int32Array, at: number): bigint {
  return joinWords(Atomics.load(w, at), Atomics.load(w, at + 1));
}
