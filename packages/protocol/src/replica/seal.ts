/**
 * Checksums of the replica plane (replication-semantics.md §2, cluster.mdx "Frame integrity"):
 *
 * - frame seal: widen(XXH3(header[16..256])) in bytes 0..16, on commands 7, 9-12, 17, 18, 20-29;
 * - prepare identity: widen(XXH3(header with bytes 0..16 and 52..56 zeroed)) on Prepare and
 *   RepairPrepare, computed with command = 6 (a RepairPrepare is hashed as if it were a Prepare);
 * - body seal (`checksum_body`, 16..32): metadata prepare = widen(XXH3(body)) even when the body
 *   is empty (= XXH3('') = 0x2d06800538d394c2); partition prepare = 0; DoViewChange / StartView =
 *   widen(XXH3(body)) when the body is non-empty, 0 when empty; everything else 0.
 *
 * "Widened" = the u64 hash zero-extended to u128: bytes 0..8 the hash LE, bytes 8..16 zero.
 * Nothing here mutates a caller's buffer except the explicit `seal*` writers.
 */
import { assert } from '@shoal/stdx';
import { xxh3_64 } from '../hash/xxh3.js';
import { Command, isPrepareCommand, isSealedCommand } from './command.js';
import { isMetadataGroupAt } from './group.js';
import {
  HEADER_SIZE,
  OFFSET_CHECKSUM,
  OFFSET_CHECKSUM_BODY,
  OFFSET_COMMAND,
  OFFSET_SIZE,
  OFFSET_VIEW,
  PREPARE_LAYOUT,
  SEAL_INPUT_START,
} from './header-layout.js';
import { allZero, equalsWidened, readU32, writeWidened } from './little-endian.js';

/** XXH3('') : the body seal of an empty metadata prepare (§2.4). */
export const XXH3_EMPTY = 0x2d06800538d394c2n;

// Identity input is built in a private copy so the caller's bytes are never touched.
const identityScratch = new Uint8Array(HEADER_SIZE);
const GROUP_AT = PREPARE_LAYOUT.group.offset;

function holdsHeader(bytes: Uint8Array, base: number): boolean {
  return Number.isInteger(base) && base >= 0 && bytes.length - base >= HEADER_SIZE;
}

/** XXH3-64 of header bytes 16..256: the frame seal value (before widening). */
export function frameSealOf(bytes: Uint8Array, base = 0): bigint {
  assert(holdsHeader(bytes, base), 'frameSealOf: buffer does not hold a header');
  return xxh3_64(bytes.subarray(base + SEAL_INPUT_START, base + HEADER_SIZE));
}

/** Writes the frame seal into bytes 0..16. Call last, after every other field is final. */
export function sealFrame(bytes: Uint8Array, base = 0): void {
  writeWidened(bytes, base + OFFSET_CHECKSUM, frameSealOf(bytes, base));
}

/**
 * True when bytes 0..16 hold the frame seal. A zero checksum is a mismatch, never "unsealed"
 * (§1.2 step 4), and so is a non-zero high half.
 */
export function verifyFrameSeal(bytes: Uint8Array, base = 0): boolean {
  if (!holdsHeader(bytes, base)) return false;
  return equalsWidened(bytes, base + OFFSET_CHECKSUM, frameSealOf(bytes, base));
}

/**
 * The prepare identity of the Prepare or RepairPrepare header at `base`: XXH3 over the 256-byte
 * header with checksum (0..16) and view (52..56) zeroed and a RepairPrepare's command byte set
 * back to 6 (§2.3, pitfalls 4). Computed on a private copy.
 */
export function prepareIdentityOf(bytes: Uint8Array, base = 0): bigint {
  assert(holdsHeader(bytes, base), 'prepareIdentityOf: buffer does not hold a header');
  const scratch = identityScratch;
  scratch.set(bytes.subarray(base, base + HEADER_SIZE));
  scratch.fill(0, OFFSET_CHECKSUM, OFFSET_CHECKSUM + 16);
  scratch.fill(0, OFFSET_VIEW, OFFSET_VIEW + 4);
  if (scratch[OFFSET_COMMAND] === Command.RepairPrepare) scratch[OFFSET_COMMAND] = Command.Prepare;
  return xxh3_64(scratch);
}

/** Writes the prepare identity into bytes 0..16. Call after `checksum_body` is final. */
export function sealPrepareIdentity(bytes: Uint8Array, base = 0): void {
  writeWidened(bytes, base + OFFSET_CHECKSUM, prepareIdentityOf(bytes, base));
}

/**
 * Ingress identity check (§2.5 step 1): a zero checksum means "unsealed" (legacy) and passes;
 * otherwise bytes 0..16 must equal the recomputed identity.
 */
export function verifyPrepareIdentity(bytes: Uint8Array, base = 0): boolean {
  if (!holdsHeader(bytes, base)) return false;
  if (allZero(bytes, base + OFFSET_CHECKSUM, base + OFFSET_CHECKSUM + 16)) return true;
  return equalsWidened(bytes, base + OFFSET_CHECKSUM, prepareIdentityOf(bytes, base));
}

/** Length of the body the header declares (`size - 256`, at least 0). */
export function declaredBodyLength(bytes: Uint8Array, base = 0): number {
  return Math.max(0, readU32(bytes, base + OFFSET_SIZE) - HEADER_SIZE);
}

/** XXH3 of the body `bytes[base + 256, base + size)`, clamped to the buffer. */
export function bodyHashOf(bytes: Uint8Array, base = 0): bigint {
  const start = base + HEADER_SIZE;
  const end = Math.min(bytes.length, start + declaredBodyLength(bytes, base));
  return xxh3_64(bytes.subarray(start, end));
}

/**
 * The `checksum_body` a sender writes for this frame (§2.4). Decided by command and, for
 * prepares, by group (metadata group = sealed body).
 */
export function expectedChecksumBody(bytes: Uint8Array, base = 0): bigint {
  const command = bytes[base + OFFSET_COMMAND] as number;
  if (isPrepareCommand(command)) {
    return isMetadataGroupAt(bytes, base + GROUP_AT) ? bodyHashOf(bytes, base) : 0n;
  }
  if (command === Command.DoViewChange || command === Command.StartView) {
    return declaredBodyLength(bytes, base) === 0 ? 0n : bodyHashOf(bytes, base);
  }
  return 0n;
}

/** Writes `checksum_body` by the sender rules of §2.4. */
export function sealBody(bytes: Uint8Array, base = 0): void {
  writeWidened(bytes, base + OFFSET_CHECKSUM_BODY, expectedChecksumBody(bytes, base));
}

/**
 * Receiver body check (§2.4, §2.5 step 2):
 * - Prepare / RepairPrepare: when `checksum_body != 0` it must equal XXH3(body) (empty body too);
 * - DoViewChange / StartView: a non-empty body must hash to `checksum_body` (a zero
 *   `checksum_body` is not "skip"); an empty body passes whatever `checksum_body` says;
 * - everything else carries no body seal.
 */
export function verifyBodySeal(bytes: Uint8Array, base = 0): boolean {
  if (!holdsHeader(bytes, base)) return false;
  const command = bytes[base + OFFSET_COMMAND] as number;
  const at = base + OFFSET_CHECKSUM_BODY;
  if (isPrepareCommand(command)) {
    if (allZero(bytes, at, at + 16)) return true;
    return equalsWidened(bytes, at, bodyHashOf(bytes, base));
  }
  if (command === Command.DoViewChange || command === Command.StartView) {
    if (declaredBodyLength(bytes, base) === 0) return true;
    return equalsWidened(bytes, at, bodyHashOf(bytes, base));
  }
  return true;
}

/**
 * Finishes a frame whose other fields (and body) are final: writes `checksum_body` by §2.4, then
 * the frame seal, the prepare identity, or zero (Request, Reply, Eviction, handshake, 0..4).
 */
export function sealHeader(bytes: Uint8Array, base = 0): Uint8Array {
  assert(holdsHeader(bytes, base), 'sealHeader: buffer does not hold a header');
  const command = bytes[base + OFFSET_COMMAND] as number;
  sealBody(bytes, base);
  if (isPrepareCommand(command)) sealPrepareIdentity(bytes, base);
  else if (isSealedCommand(command)) sealFrame(bytes, base);
  else bytes.fill(0, base + OFFSET_CHECKSUM, base + OFFSET_CHECKSUM + 16);
  return bytes;
}

/** A RepairPrepare (19) copy of a journaled prepare frame: only the command byte changes (§1.3). */
export function repairPrepareFrom(prepareFrame: Uint8Array, base = 0): Uint8Array {
  const size = Math.max(HEADER_SIZE, readU32(prepareFrame, base + OFFSET_SIZE));
  const copy = prepareFrame.slice(base, base + size);
  copy[OFFSET_COMMAND] = Command.RepairPrepare;
  return copy;
}
