/**
 * The boot scan of `journal.wal` (replication-semantics.md §9.1), over the file's bytes. Pure:
 * classifies, never throws on bad bytes, never writes (the journal truncates afterwards).
 *
 * Entry by entry from offset 0:
 *
 *   fewer than 256 bytes left ─────────────▶ torn tail (truncate here)
 *   STRUCTURAL check fails (command != 6, operation not declared, size outside 256..=64 MiB,
 *   entry runs past EOF): the length is untrusted, so probe every later byte offset for a
 *   structurally complete entry ─ found, or > 64 MiB follow ─▶ interior corruption
 *                               ─ none ────────────────────▶ torn tail (truncate here)
 *   INTEGRITY check fails (identity, parent chain, body seal) on a structurally valid entry:
 *     entry ends exactly at EOF ─▶ torn tail (truncate at its start)
 *     any byte follows           ─▶ interior corruption
 *
 * Interior corruption REFUSES boot in mode `refuse` (the reference). In mode `repair` (Shoal's
 * safer alternative, opt-in) the damaged range is skipped and reported as a faulty slot, so
 * consensus can repair those ops from peers instead of the replica staying down; the entry's op
 * is reported only when its header identity verified (otherwise the op field is not trusted).
 *
 * The chain check applies only when the previous entry IN FILE ORDER has `op − 1` and a
 * non-zero checksum. `headOp` is the maximum op seen, not the last one in file order.
 */
import { readU128LE } from '@shoal/stdx';
import {
  Command,
  HEADER_SIZE,
  OFFSET_COMMAND,
  OFFSET_SIZE,
  PREPARE_LAYOUT,
  isOperation,
  verifyBodySeal,
  verifyPrepareIdentity,
} from '@shoal/protocol';

export const JOURNAL_ENTRY_SIZE_MAX = 64 * 1024 * 1024;

export type JournalScanMode = 'refuse' | 'repair';

export interface ScannedEntry {
  readonly op: number;
  readonly offset: number;
  readonly size: number;
  readonly commit: number;
}

export interface ScanCorruption {
  readonly offset: number;
  /** Bytes skipped (repair mode). */
  readonly length: number;
  readonly op?: number;
  readonly reason: string;
}

export interface JournalScan {
  /** Every entry that passed, in file order. */
  readonly entries: readonly ScannedEntry[];
  /** Where the verified data ends: the file is truncated here when `torn` is set. */
  readonly end: number;
  readonly torn: { readonly offset: number; readonly reason: string } | null;
  /** Interior corruption in mode `refuse`: boot must not continue. */
  readonly refused: { readonly offset: number; readonly reason: string } | null;
  /** Interior corruption skipped in mode `repair`. */
  readonly corrupt: readonly ScanCorruption[];
}

const OP_AT = PREPARE_LAYOUT.op.offset;
const COMMIT_AT = PREPARE_LAYOUT.commit.offset;
const PARENT_AT = PREPARE_LAYOUT.parent.offset;
const OPERATION_AT = PREPARE_LAYOUT.operation.offset;

function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;
}

/** u64 as a number; NaN when above 2^53 (an op that high is treated as structurally invalid). */
function readU64Number(bytes: Uint8Array, at: number): number {
  const lo = readU32(bytes, at);
  const hi = readU32(bytes, at + 4);
  if (hi >= 0x20_0000) return Number.NaN;
  return hi * 0x1_0000_0000 + lo;
}

/** Structural reason, or null when the header at `at` frames a complete entry. */
export function structuralProblem(bytes: Uint8Array, at: number, sizeMax = JOURNAL_ENTRY_SIZE_MAX): string | null {
  if (bytes.length - at < HEADER_SIZE) return 'header_truncated';
  if (bytes[at + OFFSET_COMMAND] !== Command.Prepare) return 'command_not_prepare';
  if (!isOperation(bytes[at + OPERATION_AT] as number)) return 'operation_invalid';
  const size = readU32(bytes, at + OFFSET_SIZE);
  if (size < HEADER_SIZE || size > sizeMax) return 'size_out_of_range';
  if (Number.isNaN(readU64Number(bytes, at + OP_AT)) || Number.isNaN(readU64Number(bytes, at + COMMIT_AT))) {
    return 'op_not_safe_integer';
  }
  if (at + size > bytes.length) return 'entry_past_eof';
  return null;
}

/** First offset after `from` holding a structurally complete entry, or -1. */
function probeStructural(bytes: Uint8Array, from: number, sizeMax: number): number {
  const last = bytes.length - HEADER_SIZE;
  for (let p = from; p <= last; p++) {
    if (bytes[p + OFFSET_COMMAND] !== Command.Prepare) continue;
    if (structuralProblem(bytes, p, sizeMax) === null) return p;
  }
  return -1;
}

function integrityProblem(bytes: Uint8Array, at: number, previous: ScannedEntry | null): string | null {
  const frame = bytes.subarray(at, at + readU32(bytes, at + OFFSET_SIZE));
  if (!verifyPrepareIdentity(frame)) return 'identity_mismatch';
  const op = readU64Number(frame, OP_AT);
  if (previous !== null && previous.op === op - 1) {
    const previousChecksum = readU128LE(bytes, previous.offset);
    if (previousChecksum !== 0n && readU128LE(frame, PARENT_AT) !== previousChecksum) return 'parent_chain_break';
  }
  if (!verifyBodySeal(frame)) return 'body_checksum_mismatch';
  return null;
}

export function scanJournal(bytes: Uint8Array, mode: JournalScanMode = 'refuse', sizeMax = JOURNAL_ENTRY_SIZE_MAX): JournalScan {
  const entries: ScannedEntry[] = [];
  const corrupt: ScanCorruption[] = [];
  let previous: ScannedEntry | null = null;
  let at = 0;
  const total = bytes.length;
  while (at < total) {
    const structural = structuralProblem(bytes, at, sizeMax);
    if (structural !== null) {
      if (structural === 'header_truncated') {
        return { entries, end: at, torn: { offset: at, reason: 'leftover_shorter_than_header' }, refused: null, corrupt };
      }
      const following = total - at;
      const next = probeStructural(bytes, at + 1, sizeMax);
      if (next < 0 && following <= sizeMax) {
        return { entries, end: at, torn: { offset: at, reason: structural }, refused: null, corrupt };
      }
      if (mode === 'refuse' || next < 0) {
        const reason = next < 0 ? `${structural}; more than ${sizeMax} bytes follow` : `${structural}; complete entry at ${next}`;
        return { entries, end: at, torn: null, refused: { offset: at, reason }, corrupt };
      }
      corrupt.push({ offset: at, length: next - at, reason: structural });
      previous = null;
      at = next;
      continue;
    }
    const size = readU32(bytes, at + OFFSET_SIZE);
    const integrity = integrityProblem(bytes, at, previous);
    if (integrity !== null) {
      if (at + size === total) {
        return { entries, end: at, torn: { offset: at, reason: integrity }, refused: null, corrupt };
      }
      if (mode === 'refuse') {
        return { entries, end: at, torn: null, refused: { offset: at, reason: `${integrity}; bytes follow` }, corrupt };
      }
      const identityOk = integrity !== 'identity_mismatch';
      const op = readU64Number(bytes, at + OP_AT);
      corrupt.push(identityOk ? { offset: at, length: size, op, reason: integrity } : { offset: at, length: size, reason: integrity });
      previous = null;
      at += size;
      continue;
    }
    const entry: ScannedEntry = {
      op: readU64Number(bytes, at + OP_AT),
      offset: at,
      size,
      commit: readU64Number(bytes, at + COMMIT_AT),
    };
    entries.push(entry);
    previous = entry;
    at += size;
  }
  return { entries, end: at, torn: null, refused: null, corrupt };
}
