/**
 * ISM1, the state manifest carried by StateTransferTarget (replication-semantics.md §6.5,
 * cluster.mdx "State transfer"), little-endian:
 *
 *   offset 0   "ISM1"                       49 53 4d 31
 *          4   count      u32               <= 65536
 *          8   entry_len  u8                25 in this version; longer = forward-compatible tail
 *          9   count x entry (entry_len bytes each):
 *                +0  kind      u8
 *                +1  frontier  u64
 *                +9  len       u64
 *                +17 checksum  u64          XXH3-64 of the artifact bytes
 *                +25 tail      entry_len - 25 bytes, skipped by the decoder
 *          end trailer    u64               XXH3-64 of every byte before it
 *
 * Decode order: trailer (shorter than 8 bytes = truncated), magic, count <= 65536,
 * entry_len >= 25, exactly `count` entries and nothing left over.
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { xxh3_64 } from '../hash/xxh3.js';
import { readU32, readU64Big, writeU32, writeU64Big } from './little-endian.js';
import { TRAILER_SIZE, hasMagic, splitVerifiedTrailer, writeMagic, writeTrailer } from './trailer.js';

export const MANIFEST_MAGIC = 'ISM1';
export const MANIFEST_ENTRIES_MAX = 65536;
/** Entry length of this version (and the minimum a decoder accepts). */
export const MANIFEST_ENTRY_LEN = 25;
/** magic + count + entry_len. */
export const MANIFEST_PREAMBLE_SIZE = 9;

const AT_COUNT = 4;
const AT_ENTRY_LEN = 8;
const ENTRY_KIND = 0;
const ENTRY_FRONTIER = 1;
const ENTRY_LEN = 9;
const ENTRY_CHECKSUM = 17;

/** Artifact kinds (§6.5). Unknown kinds still decode (forward compatibility). */
export const ArtifactKind = Object.freeze({
  MetadataSnapshot: 0,
  ClientTable: 1,
  SegmentLog: 2,
  ConsumerOffsets: 3,
} as const);
export type ArtifactKind = (typeof ArtifactKind)[keyof typeof ArtifactKind];

export interface ManifestEntry {
  readonly kind: number;
  /** Meaning per kind: snapshot sequence, table frontier, segment base offset, commit op. */
  readonly frontier: bigint;
  /** Artifact length in bytes. */
  readonly len: bigint;
  /** XXH3-64 of the artifact bytes. */
  readonly checksum: bigint;
  /** Bytes past the 25 known ones when entry_len > 25 (a view into the input on decode). */
  readonly extension?: Uint8Array;
}

export interface Manifest {
  readonly entryLen: number;
  readonly entries: readonly ManifestEntry[];
}

/**
 * Encodes a manifest. With `entryLen > 25` each entry's `extension` (entryLen - 25 bytes) is
 * written after its known fields, or zeros when absent.
 */
export function encodeManifest(entries: readonly ManifestEntry[], entryLen = MANIFEST_ENTRY_LEN): Uint8Array {
  assert(entries.length <= MANIFEST_ENTRIES_MAX, 'manifest: too many entries');
  assert(Number.isInteger(entryLen) && entryLen >= MANIFEST_ENTRY_LEN && entryLen <= 0xff, 'manifest: bad entry_len');
  const out = new Uint8Array(MANIFEST_PREAMBLE_SIZE + entries.length * entryLen + TRAILER_SIZE);
  writeMagic(out, 0, MANIFEST_MAGIC);
  writeU32(out, AT_COUNT, entries.length);
  out[AT_ENTRY_LEN] = entryLen;
  entries.forEach((entry, index) => {
    const at = MANIFEST_PREAMBLE_SIZE + index * entryLen;
    assert(Number.isInteger(entry.kind) && entry.kind >= 0 && entry.kind <= 0xff, 'manifest: kind not a u8');
    for (const value of [entry.frontier, entry.len, entry.checksum]) {
      assert(value >= 0n && value < 1n << 64n, 'manifest: field not a u64');
    }
    out[at + ENTRY_KIND] = entry.kind;
    writeU64Big(out, at + ENTRY_FRONTIER, entry.frontier);
    writeU64Big(out, at + ENTRY_LEN, entry.len);
    writeU64Big(out, at + ENTRY_CHECKSUM, entry.checksum);
    if (entry.extension !== undefined && entryLen > MANIFEST_ENTRY_LEN) {
      assert(entry.extension.length === entryLen - MANIFEST_ENTRY_LEN, 'manifest: extension length');
      out.set(entry.extension, at + MANIFEST_ENTRY_LEN);
    }
  });
  return writeTrailer(out);
}

export function decodeManifest(bytes: Uint8Array): Decoded<Manifest> {
  const content = splitVerifiedTrailer(bytes);
  if (typeof content === 'string') return fail(`manifest_${content}`);
  if (content.length < MANIFEST_PREAMBLE_SIZE) {
    // Magic first when enough of it is there, so a wrong format reads as one.
    if (content.length >= 4 && !hasMagic(content, 0, MANIFEST_MAGIC)) return fail('manifest_bad_magic');
    return fail('manifest_truncated');
  }
  if (!hasMagic(content, 0, MANIFEST_MAGIC)) return fail('manifest_bad_magic');
  const count = readU32(content, AT_COUNT);
  if (count > MANIFEST_ENTRIES_MAX) return fail('manifest_too_many_entries');
  const entryLen = content[AT_ENTRY_LEN] as number;
  if (entryLen < MANIFEST_ENTRY_LEN) return fail('manifest_entry_too_short');
  const expected = MANIFEST_PREAMBLE_SIZE + count * entryLen;
  if (content.length < expected) return fail('manifest_truncated');
  if (content.length > expected) return fail('manifest_trailing_bytes');
  const entries: ManifestEntry[] = [];
  for (let index = 0; index < count; index++) {
    const at = MANIFEST_PREAMBLE_SIZE + index * entryLen;
    const base = {
      kind: content[at + ENTRY_KIND] as number,
      frontier: readU64Big(content, at + ENTRY_FRONTIER),
      len: readU64Big(content, at + ENTRY_LEN),
      checksum: readU64Big(content, at + ENTRY_CHECKSUM),
    };
    entries.push(
      entryLen > MANIFEST_ENTRY_LEN
        ? { ...base, extension: content.subarray(at + MANIFEST_ENTRY_LEN, at + entryLen) }
        : base,
    );
  }
  return ok({ entryLen, entries });
}

/** The manifest entry describing `artifact` (len and XXH3), for a sender building an offer. */
export function manifestEntryFor(kind: number, frontier: bigint, artifact: Uint8Array): ManifestEntry {
  return { kind, frontier, len: BigInt(artifact.length), checksum: xxh3_64(artifact) };
}

/**
 * Checks a received artifact against its entry (§6.7): exact length, then XXH3. Returns null or
 * the reason the whole transfer must be discarded.
 */
export function verifyArtifact(entry: ManifestEntry, artifact: Uint8Array): string | null {
  if (BigInt(artifact.length) !== entry.len) return 'artifact_length_mismatch';
  if (xxh3_64(artifact) !== entry.checksum) return 'artifact_checksum_mismatch';
  return null;
}
