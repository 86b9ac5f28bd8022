/**
 * The client table of the metadata plane (§7): one entry per client id (never 0), derived from
 * the committed log on every replica; the session fence, the dedupe watermark and a ring of the
 * last 5 committed replies.
 *
 *   slots: [ e0 | e1 | -- | e3 | ... ]   fixed capacity; eviction picks the entry with the smallest
 *   index: client id → entry             latest_commit (ties: lowest slot)
 *
 * Forms: ICT2 (state-transfer artifact, via the protocol codec) and the checkpoint form (plain data
 * for snapshot.bin: newest reply only, explicit slots), both here as data.
 */
import { assert } from '@shoal/stdx';
import type { ClientTableEntry, DecodedClientTableEntry } from '@shoal/protocol';
import { REPLY_RING_CAPACITY } from '@shoal/protocol';

const REPLY_COMMIT_AT = 184;
const REPLY_REQUEST_AT = 200;

function replyCommit(reply: Uint8Array): bigint {
  return new DataView(reply.buffer, reply.byteOffset, reply.byteLength).getBigUint64(REPLY_COMMIT_AT, true);
}
function replyRequest(reply: Uint8Array): bigint {
  return new DataView(reply.buffer, reply.byteOffset, reply.byteLength).getBigUint64(REPLY_REQUEST_AT, true);
}

export interface ClientEntry {
  readonly client: bigint;
  slot: number;
  /** Op of the latest committed Register (the session fence). */
  epoch: bigint;
  userId: number;
  /** Highest committed request number (0 = only registered). */
  watermark: bigint;
  watermarkChecksum: bigint;
  /** Cached Reply frames, oldest first, request numbers unique, at most 5. */
  replies: Uint8Array[];
  latestCommit: bigint;
}

/** §7.3 outcomes of the request preflight (in-flight and caught-up checks are the caller's). */
export type RequestCheck =
  | { readonly kind: 'no_session' }
  | { readonly kind: 'fenced' }
  | { readonly kind: 'epoch_ahead' }
  | { readonly kind: 'new' }
  | { readonly kind: 'checksum_mismatch' }
  | { readonly kind: 'duplicate'; readonly reply: Uint8Array }
  | { readonly kind: 'already_applied' };

/** One slot of the checkpoint form (§9.3 `client_table`): the newest reply only. */
export interface ClientTableCheckpointEntry {
  readonly slot: number;
  readonly client: bigint;
  readonly epoch: bigint;
  readonly userId: number;
  readonly watermark: bigint;
  readonly watermarkChecksum: bigint;
  readonly reply: Uint8Array;
}

export const CLIENT_TABLE_HARD_MAX = 65536;

export class ClientTable {
  #capacity: number;
  #slots: (ClientEntry | null)[];
  readonly #index = new Map<bigint, ClientEntry>();

  constructor(capacity: number) {
    assert(Number.isInteger(capacity) && capacity >= 2 && capacity <= CLIENT_TABLE_HARD_MAX, 'client table capacity');
    this.#capacity = capacity;
    this.#slots = new Array<ClientEntry | null>(capacity).fill(null);
  }

  get capacity(): number {
    return this.#capacity;
  }
  get size(): number {
    return this.#index.size;
  }

  get(client: bigint): ClientEntry | undefined {
    return this.#index.get(client);
  }

  /** §7.3 steps 3-8. */
  check(client: bigint, session: bigint, request: bigint, requestChecksum: bigint): RequestCheck {
    const entry = this.#index.get(client);
    if (entry === undefined) return { kind: 'no_session' };
    if (session < entry.epoch) return { kind: 'fenced' };
    if (session > entry.epoch) return { kind: 'epoch_ahead' };
    if (request > entry.watermark) return { kind: 'new' };
    if (request === entry.watermark && entry.watermarkChecksum !== 0n && requestChecksum !== 0n && entry.watermarkChecksum !== requestChecksum) {
      return { kind: 'checksum_mismatch' };
    }
    for (const reply of entry.replies) {
      if (replyRequest(reply) !== request) continue;
      const cached = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
      const cachedChecksum = cached.getBigUint64(128, true) | (cached.getBigUint64(136, true) << 64n);
      if (cachedChecksum !== 0n && requestChecksum !== 0n && cachedChecksum !== requestChecksum) return { kind: 'checksum_mismatch' };
      return { kind: 'duplicate', reply };
    }
    return { kind: 'already_applied' };
  }

  /** §7.2 committed Register: rebind an existing entry or create one (evicting if full). */
  register(client: bigint, userId: number, registerOp: bigint, reply: Uint8Array): void {
    assert(client !== 0n, 'client table: register of client 0');
    const existing = this.#index.get(client);
    if (existing !== undefined) {
      existing.epoch = registerOp;
      existing.userId = userId;
      existing.replies = existing.replies.filter((r) => replyRequest(r) !== 0n);
      this.#push(existing, reply);
      existing.latestCommit = replyCommit(reply);
      return;
    }
    let slot = this.#slots.indexOf(null);
    if (slot < 0) slot = this.#evict();
    const entry: ClientEntry = {
      client,
      slot,
      epoch: registerOp,
      userId,
      watermark: 0n,
      watermarkChecksum: 0n,
      replies: [reply],
      latestCommit: replyCommit(reply),
    };
    this.#slots[slot] = entry;
    this.#index.set(client, entry);
  }

  /** §7.2 committed Logout. Returns whether an entry was removed. */
  logout(client: bigint): boolean {
    const entry = this.#index.get(client);
    if (entry === undefined) return false;
    this.#slots[entry.slot] = null;
    this.#index.delete(client);
    return true;
  }

  /** §7.4: records a committed reply. Client 0 (server-originated) or no entry: nothing cached. */
  record(client: bigint, request: bigint, requestChecksum: bigint, reply: Uint8Array): void {
    if (client === 0n) return;
    const entry = this.#index.get(client);
    if (entry === undefined) return;
    const commit = replyCommit(reply);
    if (commit < entry.latestCommit || request < entry.watermark) return;
    if (request === entry.watermark) {
      const at = entry.replies.findIndex((r) => replyRequest(r) === request);
      if (at >= 0) entry.replies[at] = reply;
      else this.#push(entry, reply);
    } else {
      this.#push(entry, reply);
      entry.watermark = request;
    }
    entry.watermarkChecksum = requestChecksum;
    entry.latestCommit = commit;
  }

  #push(entry: ClientEntry, reply: Uint8Array): void {
    entry.replies.push(reply);
    while (entry.replies.length > REPLY_RING_CAPACITY) entry.replies.shift();
  }

  /** Evicts the entry with the smallest latest_commit (ties: lowest slot); returns the freed slot. */
  #evict(): number {
    let victim: ClientEntry | null = null;
    for (const entry of this.#slots) {
      if (entry === null) continue;
      if (victim === null || entry.latestCommit < victim.latestCommit) victim = entry;
    }
    assert(victim !== null, 'client table: evict from an empty table');
    this.#slots[victim.slot] = null;
    this.#index.delete(victim.client);
    return victim.slot;
  }

  /** Occupied entries in slot order (ICT2 export). */
  exportEntries(): ClientTableEntry[] {
    const out: ClientTableEntry[] = [];
    for (const e of this.#slots) {
      if (e === null) continue;
      out.push({
        clientId: e.client,
        epoch: e.epoch,
        userId: e.userId,
        watermark: e.watermark,
        watermarkChecksum: e.watermarkChecksum,
        replies: e.replies.map((r) => r.slice()),
      });
    }
    return out;
  }

  /** §7.6 install: capacity max(current, count), entries compacted into slots 0..count. */
  importEntries(entries: readonly DecodedClientTableEntry[]): void {
    assert(entries.length <= CLIENT_TABLE_HARD_MAX, 'client table: import too large');
    this.#capacity = Math.max(this.#capacity, entries.length);
    this.#slots = new Array<ClientEntry | null>(this.#capacity).fill(null);
    this.#index.clear();
    entries.forEach((d, slot) => {
      const entry: ClientEntry = {
        client: d.clientId,
        slot,
        epoch: d.epoch,
        userId: d.userId,
        watermark: d.watermark,
        watermarkChecksum: d.watermarkChecksum,
        replies: d.replies.map((r) => r.slice()),
        latestCommit: d.latestCommit,
      };
      this.#slots[slot] = entry;
      this.#index.set(d.clientId, entry);
    });
  }

  checkpointEntries(): ClientTableCheckpointEntry[] {
    const out: ClientTableCheckpointEntry[] = [];
    for (const e of this.#slots) {
      if (e === null) continue;
      const newest = e.replies[e.replies.length - 1];
      assert(newest !== undefined, 'client table: entry without a reply');
      out.push({ slot: e.slot, client: e.client, epoch: e.epoch, userId: e.userId, watermark: e.watermark, watermarkChecksum: e.watermarkChecksum, reply: newest.slice() });
    }
    return out;
  }

  /** Restores the checkpoint form; capacity grows to the highest occupied slot + 1. */
  restoreCheckpoint(entries: readonly ClientTableCheckpointEntry[]): void {
    let capacity = this.#capacity;
    for (const e of entries) capacity = Math.max(capacity, e.slot + 1);
    assert(capacity <= CLIENT_TABLE_HARD_MAX, 'client table: checkpoint slot too high');
    this.#capacity = capacity;
    this.#slots = new Array<ClientEntry | null>(capacity).fill(null);
    this.#index.clear();
    for (const e of entries) {
      assert(e.client !== 0n && this.#slots[e.slot] === null && !this.#index.has(e.client), 'client table: bad checkpoint entry');
      const entry: ClientEntry = {
        client: e.client, slot: e.slot, epoch: e.epoch, userId: e.userId, watermark: e.watermark,
        watermarkChecksum: e.watermarkChecksum, replies: [e.reply.slice()], latestCommit: replyCommit(e.reply),
      };
      this.#slots[e.slot] = entry;
      this.#index.set(e.client, entry);
    }
  }

  checkStructure(): void {
    assert(this.#slots.length === this.#capacity, 'client table: slot array size');
    let occupied = 0;
    this.#slots.forEach((e, slot) => {
      if (e === null) return;
      occupied++;
      assert(e.slot === slot && this.#index.get(e.client) === e, 'client table: index/slot mismatch');
      assert(e.replies.length >= 1 && e.replies.length <= REPLY_RING_CAPACITY, 'client table: ring size');
    });
    assert(occupied === this.#index.size, 'client table: occupied count');
  }
}
