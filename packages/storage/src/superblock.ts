/**
 * The superblock pair `superblock.a` / `superblock.b` (replication-semantics.md §9.2): one pair
 * per group (metadata in `<root>/metadata/`, each partition in its directory). Record, LE:
 *
 *   off  size field
 *    0     4  magic 0x53424C4B (on disk 4b 4c 42 53)
 *    4     2  version = 1
 *    6     2  reserved = 0
 *    8     8  sequence (monotonic write counter)
 *   16     8  parent_checksum = 0 (unused)
 *   24     4  payload_len (<= 4096)
 *   28     n  payload (VsrState, 74 bytes; 66 and 58 legacy)
 *   28+n   8  XXH3 over bytes 0 .. 28+n
 *
 * Writes alternate: the next write goes to the slot NOT holding the newest record, with
 * `sequence = newest + 1`, as `<slot>.tmp` → fsync → rename → fsync dir. So a torn or lost write
 * only ever damages the `.tmp` (swept at read) or leaves the older record in place: the newest
 * durable state is never lost.
 *
 * Read: both valid → higher sequence wins (equal: `a`); one valid, other absent/empty → it;
 * both absent/empty → fresh; any slot holding bytes that do not verify, or an unknown version →
 * REFUSE (and refuse further writes). A slot that fails to verify is re-read twice before it is
 * called corrupt, so a transient read fault (a flipped bit in flight) does not refuse a boot.
 */
import { assert } from '@shoal/stdx';
import { xxh3_64 } from '@shoal/protocol';
import { type Disk, type IoResult, attempt, joinPath } from './disk.js';
import { readWholeFile, sweepTmpFiles, writeFileAtomic } from './durable-file.js';
import { type VsrState, decodeVsrState, encodeVsrState } from './vsr-state.js';

export const SUPERBLOCK_MAGIC = 0x53424c4b;
export const SUPERBLOCK_VERSION = 1;
export const SUPERBLOCK_HEADER_SIZE = 28;
export const SUPERBLOCK_PAYLOAD_MAX = 4096;
export const SUPERBLOCK_CHECKSUM_SIZE = 8;
export const SUPERBLOCK_FILE_MAX = SUPERBLOCK_HEADER_SIZE + SUPERBLOCK_PAYLOAD_MAX + SUPERBLOCK_CHECKSUM_SIZE;
export const SUPERBLOCK_SLOTS = ['a', 'b'] as const;
export type SuperblockSlot = (typeof SUPERBLOCK_SLOTS)[number];

/** How one slot file reads. */
export type SlotClass =
  | { readonly kind: 'absent' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'valid'; readonly sequence: bigint; readonly state: VsrState }
  | { readonly kind: 'corrupt'; readonly reason: string };

export type SuperblockRead =
  | { readonly kind: 'fresh'; readonly slots: Readonly<Record<SuperblockSlot, SlotClass>> }
  | {
      readonly kind: 'ok';
      readonly state: VsrState;
      readonly sequence: bigint;
      readonly slot: SuperblockSlot;
      readonly slots: Readonly<Record<SuperblockSlot, SlotClass>>;
    }
  | { readonly kind: 'refused'; readonly reason: string; readonly slots: Readonly<Record<SuperblockSlot, SlotClass>> };

export function encodeSuperblockRecord(sequence: bigint, state: VsrState): Uint8Array {
  assert(sequence >= 1n && sequence < 1n << 64n, 'superblock: sequence out of range');
  const payload = encodeVsrState(state);
  const out = new Uint8Array(SUPERBLOCK_HEADER_SIZE + payload.length + SUPERBLOCK_CHECKSUM_SIZE);
  const view = new DataView(out.buffer);
  view.setUint32(0, SUPERBLOCK_MAGIC, true);
  view.setUint16(4, SUPERBLOCK_VERSION, true);
  view.setUint16(6, 0, true);
  view.setBigUint64(8, sequence, true);
  view.setBigUint64(16, 0n, true);
  view.setUint32(24, payload.length, true);
  out.set(payload, SUPERBLOCK_HEADER_SIZE);
  const end = SUPERBLOCK_HEADER_SIZE + payload.length;
  view.setBigUint64(end, xxh3_64(out.subarray(0, end)), true);
  return out;
}

/** Classifies the bytes of one slot file (never throws). */
export function classifySuperblockRecord(bytes: Uint8Array | null): SlotClass {
  if (bytes === null) return { kind: 'absent' };
  if (bytes.length === 0) return { kind: 'empty' };
  if (bytes.length > SUPERBLOCK_FILE_MAX) return { kind: 'corrupt', reason: 'superblock_too_long' };
  if (bytes.length < SUPERBLOCK_HEADER_SIZE + SUPERBLOCK_CHECKSUM_SIZE) return { kind: 'corrupt', reason: 'superblock_truncated' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== SUPERBLOCK_MAGIC) return { kind: 'corrupt', reason: 'superblock_bad_magic' };
  const payloadLength = view.getUint32(24, true);
  if (payloadLength > SUPERBLOCK_PAYLOAD_MAX) return { kind: 'corrupt', reason: 'superblock_payload_too_long' };
  const end = SUPERBLOCK_HEADER_SIZE + payloadLength;
  if (bytes.length !== end + SUPERBLOCK_CHECKSUM_SIZE) return { kind: 'corrupt', reason: 'superblock_length_mismatch' };
  if (view.getBigUint64(end, true) !== xxh3_64(bytes.subarray(0, end))) {
    return { kind: 'corrupt', reason: 'superblock_checksum_mismatch' };
  }
  if (view.getUint16(4, true) !== SUPERBLOCK_VERSION) return { kind: 'corrupt', reason: 'superblock_unknown_version' };
  const state = decodeVsrState(bytes.subarray(SUPERBLOCK_HEADER_SIZE, end));
  if (!state.ok) return { kind: 'corrupt', reason: state.reason };
  return { kind: 'valid', sequence: view.getBigUint64(8, true), state: state.value };
}

/** Re-reads of a slot that failed to verify before it is called corrupt. */
/** A record `prepare`d for a slot, written by the caller and then `confirm`ed. */
export interface PreparedSuperblockWrite {
  readonly slot: SuperblockSlot;
  readonly sequence: bigint;
  readonly path: string;
  readonly record: Uint8Array;
}

const REREADS = 2;

export class SuperblockStore {
  readonly #disk: Disk;
  readonly dir: string;
  #newest: { slot: SuperblockSlot; sequence: bigint } | null = null;
  #loaded = false;
  #poisoned: string | null = null;

  constructor(disk: Disk, dir: string) {
    this.#disk = disk;
    this.dir = dir;
  }

  pathOf(slot: SuperblockSlot): string {
    return joinPath(this.dir, `superblock.${slot}`);
  }

  /** Sequence of the newest durable record (0 when fresh). */
  get sequence(): bigint {
    return this.#newest?.sequence ?? 0n;
  }

  /** Reads and classifies both slots (sweeping torn `.tmp` files first). */
  read(): IoResult<SuperblockRead> {
    return attempt(() => {
      sweepTmpFiles(this.#disk, this.dir);
      const slots = { a: this.#readSlot('a'), b: this.#readSlot('b') };
      const verdict = chooseSuperblock(slots);
      this.#loaded = true;
      if (verdict.kind === 'refused') {
        this.#poisoned = verdict.reason;
        this.#newest = null;
      } else {
        this.#poisoned = null;
        this.#newest = verdict.kind === 'ok' ? { slot: verdict.slot, sequence: verdict.sequence } : null;
      }
      return verdict;
    });
  }

  /**
   * Durably writes `state` into the slot not holding the newest record. Refused (assertion) when
   * the last read refused the superblock; reads first when nothing was read yet.
   */
  write(state: VsrState): IoResult<{ readonly slot: SuperblockSlot; readonly sequence: bigint }> {
    const prepared = this.prepare(state);
    if (!prepared.ok) return prepared;
    const { slot, sequence, path, record } = prepared.value;
    return attempt(() => {
      writeFileAtomic(this.#disk, path, [record]);
      this.confirm(prepared.value);
      return { slot, sequence };
    });
  }

  /**
   * The record `write` would put where, without writing it: for a caller that has the bytes
   * written elsewhere (a disk job) and `confirm`s once they are durable. Until then no other write
   * may be prepared (the caller serializes: one superblock write in flight per store).
   */
  prepare(state: VsrState): IoResult<PreparedSuperblockWrite> {
    if (!this.#loaded) {
      const first = this.read();
      if (!first.ok) return first;
    }
    assert(this.#poisoned === null, `superblock: write refused after a refused read (${this.#poisoned ?? ''})`);
    const slot: SuperblockSlot = this.#newest === null ? 'a' : this.#newest.slot === 'a' ? 'b' : 'a';
    const sequence = (this.#newest?.sequence ?? 0n) + 1n;
    return { ok: true, value: { slot, sequence, path: this.pathOf(slot), record: encodeSuperblockRecord(sequence, state) } };
  }

  /** A prepared record is durable in its slot (`writeFileAtomic` returned): it is the newest now. */
  confirm(written: PreparedSuperblockWrite): void {
    assert(written.sequence === (this.#newest?.sequence ?? 0n) + 1n, 'superblock: confirmed write out of sequence');
    this.#newest = { slot: written.slot, sequence: written.sequence };
  }

  #readSlot(slot: SuperblockSlot): SlotClass {
    let verdict = classifySuperblockRecord(readWholeFile(this.#disk, this.pathOf(slot)));
    for (let i = 0; i < REREADS && verdict.kind === 'corrupt'; i++) {
      verdict = classifySuperblockRecord(readWholeFile(this.#disk, this.pathOf(slot)));
    }
    return verdict;
  }
}

/** The §9.2 choice between the two classified slots. */
export function chooseSuperblock(slots: Readonly<Record<SuperblockSlot, SlotClass>>): SuperblockRead {
  const { a, b } = slots;
  if (a.kind === 'corrupt' || b.kind === 'corrupt') {
    const reasons = [a.kind === 'corrupt' ? `a: ${a.reason}` : null, b.kind === 'corrupt' ? `b: ${b.reason}` : null]
      .filter((r) => r !== null)
      .join(', ');
    return { kind: 'refused', reason: `superblock_corrupt (${reasons})`, slots };
  }
  if (a.kind === 'valid' && b.kind === 'valid') {
    const slot: SuperblockSlot = b.sequence > a.sequence ? 'b' : 'a';
    const chosen = slot === 'a' ? a : b;
    return { kind: 'ok', state: chosen.state, sequence: chosen.sequence, slot, slots };
  }
  if (a.kind === 'valid') return { kind: 'ok', state: a.state, sequence: a.sequence, slot: 'a', slots };
  if (b.kind === 'valid') return { kind: 'ok', state: b.state, sequence: b.sequence, slot: 'b', slots };
  return { kind: 'fresh', slots };
}

export interface SuperblockIdentity {
  readonly clusterId: bigint;
  readonly replicaId: number;
  readonly replicaCount: number;
}

/** §9.2: boot refuses a record whose cluster id, replica id or replica count differs. */
export function checkSuperblockIdentity(state: VsrState, expected: SuperblockIdentity): string | null {
  if (state.clusterId !== expected.clusterId) {
    return `superblock cluster id 0x${state.clusterId.toString(16)} != configured 0x${expected.clusterId.toString(16)}`;
  }
  if (state.replicaId !== expected.replicaId) return `superblock replica id ${state.replicaId} != configured ${expected.replicaId}`;
  if (state.replicaCount !== expected.replicaCount) {
    return `superblock replica count ${state.replicaCount} != configured ${expected.replicaCount}`;
  }
  return null;
}
