/**
 * The DoViewChange / StartView suffix (replication-semantics.md §5.3, §5.4; vectors README
 * fact 3): the body is up to 128 packed 256-byte PrepareHeaders, HIGHEST op first, so entry i
 * holds op `head_op - i` where head_op is the frame's `op` field. Bit i of each u128 bitset
 * speaks about entry i:
 *
 *   body:     [ entry 0: op = head ][ entry 1: op = head-1 ] ... [ entry k-1 ]
 *   nack:      bit 0                 bit 1                         bit k-1    (DVC only)
 *   present:   bit 0                 bit 1                         bit k-1    (DVC only)
 *
 * A blank entry (the sender lacks that op) is 256 zero bytes except `command = 6` and `op`.
 * StartView bodies use the same decoder with both bitsets taken as zero.
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { Command } from './command.js';
import { isOperation } from './discriminants.js';
import { DO_VIEW_CHANGE_LAYOUT, HEADER_SIZE, OFFSET_CHECKSUM, OFFSET_COMMAND, OFFSET_SIZE, PREPARE_LAYOUT } from './header-layout.js';
import {
  allZero,
  equalsWidened,
  rangesEqual,
  readU32,
  readU64Big,
  readU64Number,
  u64IsSafe,
  writeU64Big,
} from './little-endian.js';
import { prepareIdentityOf } from './seal.js';

/** At most 128 entries in a suffix (and 128 bits in each bitset). */
export const SUFFIX_ENTRIES_MAX = 128;
export const SUFFIX_BODY_MAX = SUFFIX_ENTRIES_MAX * HEADER_SIZE;

const BITSET_LIMIT = 1n << 128n;

// ---------------------------------------------------------------------------------------------
// u128 bitsets as bigint (control paths; the validator reads bits from bytes instead).

function checkIndex(index: number): void {
  assert(Number.isInteger(index) && index >= 0 && index < SUFFIX_ENTRIES_MAX, `bitset index ${index} out of 0..127`);
}
function checkBitset(bits: bigint): void {
  assert(bits >= 0n && bits < BITSET_LIMIT, 'bitset outside u128');
}

export function bitsetHas(bits: bigint, index: number): boolean {
  checkBitset(bits);
  checkIndex(index);
  return ((bits >> BigInt(index)) & 1n) === 1n;
}

export function bitsetWith(bits: bigint, index: number): bigint {
  checkBitset(bits);
  checkIndex(index);
  return bits | (1n << BigInt(index));
}

export function bitsetWithout(bits: bigint, index: number): bigint {
  checkBitset(bits);
  checkIndex(index);
  return bits & ~(1n << BigInt(index));
}

export function bitsetCount(bits: bigint): number {
  checkBitset(bits);
  let count = 0;
  for (let rest = bits; rest !== 0n; rest &= rest - 1n) count++;
  return count;
}

/** Bits 0..count-1 set: the bits a `count`-entry suffix may use. */
export function bitsetBelow(count: number): bigint {
  assert(Number.isInteger(count) && count >= 0 && count <= SUFFIX_ENTRIES_MAX, 'bitsetBelow: count out of 0..128');
  return (1n << BigInt(count)) - 1n;
}

export function bitsetFromIndices(indices: Iterable<number>): bigint {
  let bits = 0n;
  for (const index of indices) bits = bitsetWith(bits, index);
  return bits;
}

export function bitsetIndices(bits: bigint): number[] {
  checkBitset(bits);
  const out: number[] = [];
  for (let i = 0; i < SUFFIX_ENTRIES_MAX; i++) if (((bits >> BigInt(i)) & 1n) === 1n) out.push(i);
  return out;
}

/** True when any bit at index >= count is set in the u128 at `at` (no bigint). */
export function bitsetBytesHaveBitFrom(bytes: Uint8Array, at: number, count: number): boolean {
  if (count >= SUFFIX_ENTRIES_MAX) return false;
  const firstByte = count >>> 3;
  const partial = count & 7;
  let i = firstByte;
  if (partial !== 0) {
    if (((bytes[at + i] as number) >>> partial) !== 0) return true;
    i++;
  }
  for (; i < 16; i++) if (bytes[at + i] !== 0) return true;
  return false;
}

function bitAt(bytes: Uint8Array, at: number, index: number): boolean {
  return (((bytes[at + (index >>> 3)] as number) >>> (index & 7)) & 1) === 1;
}

// ---------------------------------------------------------------------------------------------
// Blank entries.

const OP_AT = PREPARE_LAYOUT.op.offset;
const OPERATION_AT = PREPARE_LAYOUT.operation.offset;
const PARENT_AT = PREPARE_LAYOUT.parent.offset;
const TIMESTAMP_AT = PREPARE_LAYOUT.timestamp.offset;
const PREPARE_RESERVED_FRAME = PREPARE_LAYOUT.reservedFrame;
const PREPARE_RESERVED = PREPARE_LAYOUT.reserved;

/** Writes a blank entry for `op` at `base`: all zero but command 6 and op. */
export function writeBlankPrepareHeader(target: Uint8Array, base: number, op: bigint): void {
  assert(op >= 0n && op < 1n << 64n, 'blank op outside u64');
  assert(base >= 0 && base + HEADER_SIZE <= target.length, 'writeBlankPrepareHeader: target too short');
  target.fill(0, base, base + HEADER_SIZE);
  target[base + OFFSET_COMMAND] = Command.Prepare;
  writeU64Big(target, base + OP_AT, op);
}

export function blankPrepareHeader(op: bigint): Uint8Array {
  const out = new Uint8Array(HEADER_SIZE);
  writeBlankPrepareHeader(out, 0, op);
  return out;
}

/** True when the 256 bytes at `base` are exactly a blank entry (any op). */
export function isBlankPrepareHeader(bytes: Uint8Array, base = 0): boolean {
  if (bytes[base + OFFSET_COMMAND] !== Command.Prepare) return false;
  return (
    allZero(bytes, base, base + OFFSET_COMMAND) &&
    allZero(bytes, base + OFFSET_COMMAND + 1, base + OP_AT) &&
    allZero(bytes, base + OP_AT + 8, base + HEADER_SIZE)
  );
}

// ---------------------------------------------------------------------------------------------
// Packing (sender side).

export interface SuffixEntryInput {
  /** The journaled PrepareHeader (256 bytes, command 6), or null for a blank. */
  readonly header: Uint8Array | null;
  readonly op: bigint;
  /** "I never prepared this op" (only meaningful on a blank above the sender's commit). */
  readonly nack?: boolean;
  /** "I can serve this op's body". */
  readonly present?: boolean;
}

export interface PackedSuffix {
  readonly body: Uint8Array;
  readonly nackBitset: bigint;
  readonly presentBitset: bigint;
}

/**
 * Packs entries given high-to-low (entry 0 = the head op) into a body and the two bitsets.
 * Ops must descend by exactly one; every header must be a 256-byte Prepare header for its op.
 */
export function packSuffix(entries: readonly SuffixEntryInput[]): PackedSuffix {
  assert(entries.length <= SUFFIX_ENTRIES_MAX, `suffix of ${entries.length} entries exceeds 128`);
  const body = new Uint8Array(entries.length * HEADER_SIZE);
  let nackBitset = 0n;
  let presentBitset = 0n;
  let previousOp: bigint | null = null;
  entries.forEach((entry, index) => {
    if (previousOp !== null) assert(entry.op === previousOp - 1n, 'suffix ops must descend by one');
    previousOp = entry.op;
    const base = index * HEADER_SIZE;
    if (entry.header === null) {
      writeBlankPrepareHeader(body, base, entry.op);
    } else {
      assert(entry.header.length === HEADER_SIZE, 'suffix header must be 256 bytes');
      assert(entry.header[OFFSET_COMMAND] === Command.Prepare, 'suffix header must have command 6');
      assert(readU64Big(entry.header, OP_AT) === entry.op, 'suffix header op mismatch');
      body.set(entry.header, base);
    }
    if (entry.nack === true) nackBitset = bitsetWith(nackBitset, index);
    if (entry.present === true) presentBitset = bitsetWith(presentBitset, index);
  });
  return { body, nackBitset, presentBitset };
}

// ---------------------------------------------------------------------------------------------
// Validation and decoding (receiver side, §5.4).

const FRAME_OP_AT = DO_VIEW_CHANGE_LAYOUT.op.offset; // StartView's op sits at 128 too.
const NACK_AT = DO_VIEW_CHANGE_LAYOUT.nackBitset.offset;
const PRESENT_AT = DO_VIEW_CHANGE_LAYOUT.presentBitset.offset;

/**
 * Checks the suffix body of the DoViewChange or StartView frame at `base` in place (no
 * allocation): whole entries, at most 128, no bitset bit past the last entry (DVC), each entry a
 * valid Prepare header (command 6, declared operation, reserved regions zero), entry i at op
 * `op - i`, and for each non-blank entry: its identity recomputes (when non-zero), its timestamp
 * is below the nearest non-blank entry above it, and that entry's `parent` names it when the
 * two are adjacent. Body seal is checked separately (seal.ts `verifyBodySeal`).
 * The frame's `op` must be a safe integer (validateHeader checks that first).
 */
export function validateSuffix(frame: Uint8Array, base = 0): string | null {
  const size = readU32(frame, base + OFFSET_SIZE);
  if (size < HEADER_SIZE || frame.length - base < size) return 'suffix_truncated';
  const bodyLength = size - HEADER_SIZE;
  if (bodyLength % HEADER_SIZE !== 0) return 'suffix_not_whole_headers';
  const count = bodyLength / HEADER_SIZE;
  if (count > SUFFIX_ENTRIES_MAX) return 'suffix_too_many_entries';
  const isDvc = frame[base + OFFSET_COMMAND] === Command.DoViewChange;
  if (isDvc) {
    if (bitsetBytesHaveBitFrom(frame, base + NACK_AT, count)) return 'nack_bit_past_suffix';
    if (bitsetBytesHaveBitFrom(frame, base + PRESENT_AT, count)) return 'present_bit_past_suffix';
  }
  if (!u64IsSafe(frame, base + FRAME_OP_AT)) return 'op_not_safe_integer';
  const headOp = readU64Number(frame, base + FRAME_OP_AT);
  let child = -1; // entry base of the nearest non-blank entry above (lower index)
  for (let i = 0; i < count; i++) {
    const entry = base + HEADER_SIZE + i * HEADER_SIZE;
    if (frame[entry + OFFSET_COMMAND] !== Command.Prepare) return 'suffix_entry_not_prepare';
    if (!isOperation(frame[entry + OPERATION_AT] as number)) return 'suffix_entry_bad_operation';
    if (!allZero(frame, entry + PREPARE_RESERVED_FRAME.offset, entry + PREPARE_RESERVED_FRAME.offset + PREPARE_RESERVED_FRAME.size)) {
      return 'suffix_entry_reserved_nonzero';
    }
    if (!allZero(frame, entry + PREPARE_RESERVED.offset, entry + PREPARE_RESERVED.offset + PREPARE_RESERVED.size)) {
      return 'suffix_entry_reserved_nonzero';
    }
    if (headOp < i || !u64IsSafe(frame, entry + OP_AT) || readU64Number(frame, entry + OP_AT) !== headOp - i) {
      return 'suffix_entry_op_mismatch';
    }
    if (isBlankPrepareHeader(frame, entry)) continue;
    const checksumZero = allZero(frame, entry + OFFSET_CHECKSUM, entry + OFFSET_CHECKSUM + 16);
    if (!checksumZero && !equalsWidened(frame, entry + OFFSET_CHECKSUM, prepareIdentityOf(frame, entry))) {
      return 'suffix_entry_identity_mismatch';
    }
    if (child >= 0) {
      if (!u64Below(frame, entry + TIMESTAMP_AT, child + TIMESTAMP_AT)) return 'suffix_timestamps_not_descending';
      const adjacent = child === entry - HEADER_SIZE;
      if (adjacent && !checksumZero && !rangesEqual(frame, child + PARENT_AT, frame, entry + OFFSET_CHECKSUM, 16)) {
        return 'suffix_hash_chain_broken';
      }
    }
    child = entry;
  }
  return null;
}

/** u64 at `a` < u64 at `b`, compared by words (no bigint). */
function u64Below(bytes: Uint8Array, a: number, b: number): boolean {
  const aHigh = readU32(bytes, a + 4);
  const bHigh = readU32(bytes, b + 4);
  if (aHigh !== bHigh) return aHigh < bHigh;
  return readU32(bytes, a) < readU32(bytes, b);
}

export interface SuffixEntry {
  /** Position in the suffix (0 = head). */
  readonly index: number;
  readonly op: bigint;
  /** The 256 header bytes in place (a view into the frame). */
  readonly header: Uint8Array;
  readonly blank: boolean;
  /** Always false for a StartView. */
  readonly nack: boolean;
  readonly present: boolean;
}

/**
 * Validates (as `validateSuffix`) and lists the entries of a DoViewChange or StartView frame.
 * Entry headers are views into `frame`.
 */
export function decodeSuffix(frame: Uint8Array, base = 0): Decoded<SuffixEntry[]> {
  if (!(base >= 0 && frame.length - base >= HEADER_SIZE)) return fail('truncated_header');
  const command = frame[base + OFFSET_COMMAND];
  if (command !== Command.DoViewChange && command !== Command.StartView) return fail('not_a_suffix_frame');
  const problem = validateSuffix(frame, base);
  if (problem !== null) return fail(problem);
  const isDvc = command === Command.DoViewChange;
  const count = (readU32(frame, base + OFFSET_SIZE) - HEADER_SIZE) / HEADER_SIZE;
  const entries: SuffixEntry[] = [];
  for (let index = 0; index < count; index++) {
    const at = base + HEADER_SIZE + index * HEADER_SIZE;
    entries.push({
      index,
      op: readU64Big(frame, at + OP_AT),
      header: frame.subarray(at, at + HEADER_SIZE),
      blank: isBlankPrepareHeader(frame, at),
      nack: isDvc && bitAt(frame, base + NACK_AT, index),
      present: isDvc && bitAt(frame, base + PRESENT_AT, index),
    });
  }
  return ok(entries);
}
