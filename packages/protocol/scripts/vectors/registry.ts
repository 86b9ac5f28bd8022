/**
 * Which checker reads which vector file. Files are matched by their name first (the names of
 * shared/vectors/README.md) and otherwise by their shape, so a folder of vectors in the same
 * format under other names is still checked. `index.json` is itself checked: every list it
 * counts must exist with exactly that many entries.
 */
import { checkBatch } from './check-batch.js';
import { checkBlake3 } from './check-blake3.js';
import { checkClientFrames } from './check-client-frames.js';
import { checkClusterId } from './check-cluster-id.js';
import { checkHandshake } from './check-handshake.js';
import { checkManifest } from './check-manifest.js';
import { checkReplicaFrames } from './check-replica-frames.js';
import { checkRustTestValuesClient } from './check-rust-test-values-client.js';
import { checkRustTestValuesReplica } from './check-rust-test-values-replica.js';
import { checkXxh3 } from './check-xxh3.js';
import { checkEntry, type VectorChecker, type VectorOutcome } from './outcome.js';

const checkRustTestValues: VectorChecker = (doc, fileName) => [
  ...checkRustTestValuesReplica(doc, fileName),
  ...checkRustTestValuesClient(doc, fileName),
];

interface Kind {
  readonly file: string;
  readonly checker: VectorChecker;
  /** Recognises a document of this format regardless of its file name. */
  readonly looksLike: (doc: Record<string, unknown>) => boolean;
}

const firstOf = (doc: Record<string, unknown>, key: string): Record<string, unknown> | null => {
  const list = doc[key];
  if (!Array.isArray(list) || list.length === 0) return null;
  const first = list[0] as unknown;
  return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : null;
};

export const KINDS: readonly Kind[] = [
  { file: 'xxh3.json', checker: checkXxh3, looksLike: (d) => firstOf(d, 'vectors')?.['xxh3_64_dec'] !== undefined },
  { file: 'blake3.json', checker: checkBlake3, looksLike: (d) => firstOf(d, 'cases')?.['keyed_hash'] !== undefined },
  { file: 'cluster_id.json', checker: checkClusterId, looksLike: (d) => firstOf(d, 'vectors')?.['cluster_id_bytes_hex'] !== undefined },
  { file: 'client_frames.json', checker: checkClientFrames, looksLike: (d) => Array.isArray(d['requests']) && Array.isArray(d['replies']) },
  { file: 'batch.json', checker: checkBatch, looksLike: (d) => firstOf(d, 'vectors')?.['batch_checksum_input_hex'] !== undefined },
  { file: 'manifest.json', checker: checkManifest, looksLike: (d) => firstOf(d, 'vectors')?.['entry_len'] !== undefined },
  { file: 'replica_frames.json', checker: checkReplicaFrames, looksLike: (d) => Array.isArray(d['frames']) },
  { file: 'handshake.json', checker: checkHandshake, looksLike: (d) => firstOf(d, 'vectors')?.['transcript_hex'] !== undefined },
  { file: 'rust_test_values.json', checker: checkRustTestValues, looksLike: (d) => d['namespace_golden'] !== undefined },
];

/** Entries per list, counted the way index.json counts them. */
function listSizes(doc: unknown): Map<string, number> {
  const sizes = new Map<string, number>();
  if (typeof doc !== 'object' || doc === null) return sizes;
  for (const [key, value] of Object.entries(doc)) if (Array.isArray(value)) sizes.set(key, value.length);
  return sizes;
}

/** Checks an index.json against the parsed documents of its folder. */
export function checkIndex(doc: unknown, fileName: string, folder: ReadonlyMap<string, unknown>): VectorOutcome[] {
  const files = (doc as { files?: unknown } | null)?.files;
  if (typeof files !== 'object' || files === null) return [{ id: `${fileName}#files`, ok: false, detail: 'no files{} map' }];
  const outcomes: VectorOutcome[] = [];
  for (const [name, counts] of Object.entries(files as Record<string, unknown>)) {
    outcomes.push(
      checkEntry(`${fileName}#files/${name}`, () => {
        if (!folder.has(name)) return `listed file ${name} is missing`;
        const sizes = listSizes(folder.get(name));
        for (const [list, expected] of Object.entries((counts ?? {}) as Record<string, unknown>)) {
          const actual = sizes.get(list);
          if (actual !== expected) return `${name}: ${list} has ${String(actual)} entries, index says ${String(expected)}`;
        }
        return null;
      }),
    );
  }
  return outcomes;
}

/** The checker for one document, or null when the file is not a vector file of a known format. */
export function checkerFor(fileName: string, doc: unknown): VectorChecker | null {
  const base = fileName.split('/').pop() ?? fileName;
  const byName = KINDS.find((k) => k.file === base);
  if (byName !== undefined) return byName.checker;
  if (typeof doc !== 'object' || doc === null) return null;
  return KINDS.find((k) => k.looksLike(doc as Record<string, unknown>))?.checker ?? null;
}
