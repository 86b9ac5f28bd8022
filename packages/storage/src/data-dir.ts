/**
 * The data directory (`system.path`, default `local_data`) and its identity.
 *
 *   <root>/shoal.identity                        who this directory belongs to (below)
 *   <root>/metadata/{journal.wal, snapshot.bin, superblock.a, superblock.b, client_table.ict2}
 *   <root>/streams/<s>/topics/<t>/partitions/<p>/ (ids 0-based; see partition-log.ts)
 *
 * `shoal.identity` (written once, at first boot, atomically; little-endian):
 *
 *   off  size field
 *    0     4  magic "SHID" (53 48 49 44)
 *    4     2  version = 1
 *    6     1  replica_id
 *    7     1  reserved = 0
 *    8    16  cluster id (u128: first 16 bytes of BLAKE3(cluster name))
 *   24     2  name_len
 *   26     n  cluster name (UTF-8)
 *   26+n   8  XXH3 over bytes 0 .. 26+n
 *
 * Every boot compares it with the configuration: another cluster name (id) or another replica id
 * refuses to start with a typed error naming both. The cluster id is also in every superblock
 * (checked by metadata recovery). The identity file is written FIRST at first boot and removed
 * LAST by a wipe, so a directory holding Shoal files always says whose they are.
 */
import { clusterIdFromName, xxh3_64 } from '@shoal/protocol';
import { type Disk, type DiskFault, type IoResult, attempt, dirname, joinPath, normalizePath } from './disk.js';
import { mkdirDurable, readWholeFile, writeFileAtomic } from './durable-file.js';

export const IDENTITY_FILE_NAME = 'shoal.identity';
export const IDENTITY_MAGIC = 'SHID';
export const IDENTITY_VERSION = 1;
export const METADATA_DIR_NAME = 'metadata';
export const STREAMS_DIR_NAME = 'streams';
export const TOPICS_DIR_NAME = 'topics';
export const PARTITIONS_DIR_NAME = 'partitions';
/** Entries a wipe removes (plus the identity file, last). Anything else in the root is kept. */
export const OWNED_ROOT_ENTRIES: readonly string[] = [METADATA_DIR_NAME, STREAMS_DIR_NAME, 'state', 'runtime'];

export interface DataDirIdentity {
  readonly clusterName: string;
  readonly clusterId: bigint;
  readonly replicaId: number;
}

export class DataDirLayout {
  readonly root: string;

  constructor(root: string) {
    this.root = normalizePath(root);
  }

  get identityPath(): string {
    return joinPath(this.root, IDENTITY_FILE_NAME);
  }

  get metadataDir(): string {
    return joinPath(this.root, METADATA_DIR_NAME);
  }

  get streamsDir(): string {
    return joinPath(this.root, STREAMS_DIR_NAME);
  }

  /** `<root>/streams/<s>/topics/<t>/partitions/<p>` (0-based ids, §9.5). */
  partitionDir(streamId: number, topicId: number, partitionId: number): string {
    for (const id of [streamId, topicId, partitionId]) {
      if (!Number.isInteger(id) || id < 0) throw new RangeError(`partitionDir: bad id ${id}`);
    }
    return joinPath(this.streamsDir, String(streamId), TOPICS_DIR_NAME, String(topicId), PARTITIONS_DIR_NAME, String(partitionId));
  }

  topicDir(streamId: number, topicId: number): string {
    return joinPath(this.streamsDir, String(streamId), TOPICS_DIR_NAME, String(topicId));
  }
}

export type DataDirError =
  | { readonly kind: 'io'; readonly fault: DiskFault; readonly message: string }
  | {
      readonly kind: 'cluster_mismatch';
      readonly found: { readonly clusterName: string; readonly clusterId: bigint };
      readonly configured: { readonly clusterName: string; readonly clusterId: bigint };
      readonly message: string;
    }
  | { readonly kind: 'replica_mismatch'; readonly found: number; readonly configured: number; readonly message: string }
  | { readonly kind: 'identity_corrupt'; readonly reason: string; readonly message: string }
  | { readonly kind: 'not_a_data_dir'; readonly entries: readonly string[]; readonly message: string };

export type DataDirResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: DataDirError };

export function identityFor(clusterName: string, replicaId: number): DataDirIdentity {
  return { clusterName, clusterId: clusterIdFromName(clusterName), replicaId };
}

export function encodeIdentity(identity: DataDirIdentity): Uint8Array {
  const name = new TextEncoder().encode(identity.clusterName);
  if (name.length > 0xffff) throw new RangeError('cluster name longer than 65535 bytes');
  const out = new Uint8Array(26 + name.length + 8);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 4; i++) out[i] = IDENTITY_MAGIC.charCodeAt(i);
  view.setUint16(4, IDENTITY_VERSION, true);
  out[6] = identity.replicaId;
  view.setBigUint64(8, identity.clusterId & 0xffff_ffff_ffff_ffffn, true);
  view.setBigUint64(16, identity.clusterId >> 64n, true);
  view.setUint16(24, name.length, true);
  out.set(name, 26);
  view.setBigUint64(26 + name.length, xxh3_64(out.subarray(0, 26 + name.length)), true);
  return out;
}

export function decodeIdentity(bytes: Uint8Array): { ok: true; value: DataDirIdentity } | { ok: false; reason: string } {
  if (bytes.length < 34) return { ok: false, reason: 'identity_truncated' };
  for (let i = 0; i < 4; i++) if (bytes[i] !== IDENTITY_MAGIC.charCodeAt(i)) return { ok: false, reason: 'identity_bad_magic' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const nameLength = view.getUint16(24, true);
  if (bytes.length !== 26 + nameLength + 8) return { ok: false, reason: 'identity_length_mismatch' };
  if (view.getBigUint64(26 + nameLength, true) !== xxh3_64(bytes.subarray(0, 26 + nameLength))) {
    return { ok: false, reason: 'identity_checksum_mismatch' };
  }
  if (view.getUint16(4, true) !== IDENTITY_VERSION) return { ok: false, reason: 'identity_unknown_version' };
  const clusterId = view.getBigUint64(8, true) | (view.getBigUint64(16, true) << 64n);
  const clusterName = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(26, 26 + nameLength));
  return { ok: true, value: { clusterName, clusterId, replicaId: bytes[6] as number } };
}

function ioError(fault: DiskFault): DataDirError {
  return { kind: 'io', fault, message: fault.message };
}

/**
 * Opens the data directory for `identity`: creates it (identity file first, then `metadata/` and
 * `streams/`) when missing or empty; otherwise checks the identity. A non-empty directory without
 * an identity file is refused (`not_a_data_dir`): it is not ours.
 */
export function openDataDir(
  disk: Disk,
  root: string,
  identity: DataDirIdentity,
): DataDirResult<{ readonly layout: DataDirLayout; readonly created: boolean }> {
  const layout = new DataDirLayout(root);
  const opened = attempt(() => {
    const stat = disk.stat(layout.root);
    if (stat !== null && stat.kind !== 'directory') {
      return { kind: 'not_a_data_dir', entries: [], message: `${layout.root} is a file, not a directory` } as DataDirError;
    }
    const entries = stat === null ? [] : disk.readdir(layout.root);
    if (!entries.includes(IDENTITY_FILE_NAME)) {
      if (entries.length > 0) {
        return {
          kind: 'not_a_data_dir',
          entries,
          message: `${layout.root} is not empty and holds no ${IDENTITY_FILE_NAME}: refusing to use it as a Shoal data directory`,
        } as DataDirError;
      }
      mkdirDurable(disk, layout.root);
      writeFileAtomic(disk, layout.identityPath, [encodeIdentity(identity)]);
      mkdirDurable(disk, layout.metadataDir);
      mkdirDurable(disk, layout.streamsDir);
      return true;
    }
    const bytes = readWholeFile(disk, layout.identityPath) ?? new Uint8Array(0);
    const decoded = decodeIdentity(bytes);
    if (!decoded.ok) {
      return { kind: 'identity_corrupt', reason: decoded.reason, message: `${layout.identityPath}: ${decoded.reason}` } as DataDirError;
    }
    const found = decoded.value;
    if (found.clusterId !== identity.clusterId) {
      return {
        kind: 'cluster_mismatch',
        found: { clusterName: found.clusterName, clusterId: found.clusterId },
        configured: { clusterName: identity.clusterName, clusterId: identity.clusterId },
        message:
          `data directory ${layout.root} belongs to cluster "${found.clusterName}" (id 0x${found.clusterId.toString(16)}), ` +
          `but this node is configured for cluster "${identity.clusterName}" (id 0x${identity.clusterId.toString(16)}); ` +
          'refusing to start (use the original cluster name, or --fresh to wipe this replica)',
      } as DataDirError;
    }
    if (found.replicaId !== identity.replicaId) {
      return {
        kind: 'replica_mismatch',
        found: found.replicaId,
        configured: identity.replicaId,
        message: `data directory ${layout.root} belongs to replica ${found.replicaId}, configured replica is ${identity.replicaId}`,
      } as DataDirError;
    }
    mkdirDurable(disk, layout.metadataDir);
    mkdirDurable(disk, layout.streamsDir);
    return false;
  });
  if (!opened.ok) return { ok: false, error: ioError(opened.error) };
  if (typeof opened.value !== 'boolean') return { ok: false, error: opened.value };
  return { ok: true, value: { layout, created: opened.value } };
}

/**
 * `--fresh`: wipes THIS replica's data directory, safely. Refuses a path that does not look like
 * a Shoal data directory (no identity file while non-empty), the filesystem root, and a path
 * that is a file. Removes the Shoal-owned entries (`OWNED_ROOT_ENTRIES`, staging leftovers) and
 * the identity file LAST; other entries are left in place and reported in `kept`.
 */
export function wipeDataDir(
  disk: Disk,
  root: string,
): DataDirResult<{ readonly removed: readonly string[]; readonly kept: readonly string[] }> {
  const layout = new DataDirLayout(root);
  if (layout.root === '/' || layout.root === '.' || dirname(layout.root) === layout.root) {
    return { ok: false, error: { kind: 'not_a_data_dir', entries: [], message: `refusing to wipe ${layout.root}` } };
  }
  const result = attempt(() => {
    const stat = disk.stat(layout.root);
    if (stat === null) return { removed: [] as string[], kept: [] as string[] };
    if (stat.kind !== 'directory') {
      return { kind: 'not_a_data_dir', entries: [], message: `${layout.root} is not a directory` } as DataDirError;
    }
    const entries = disk.readdir(layout.root);
    if (entries.length > 0 && !entries.includes(IDENTITY_FILE_NAME)) {
      return {
        kind: 'not_a_data_dir',
        entries,
        message: `${layout.root} holds no ${IDENTITY_FILE_NAME}: it does not look like a Shoal data directory; not wiping`,
      } as DataDirError;
    }
    const removed: string[] = [];
    const kept: string[] = [];
    for (const name of entries) {
      if (name === IDENTITY_FILE_NAME) continue;
      if (OWNED_ROOT_ENTRIES.includes(name) || name.endsWith('.tmp') || name.endsWith('.staging')) {
        disk.removeTree(joinPath(layout.root, name));
        removed.push(name);
      } else {
        kept.push(name);
      }
    }
    disk.fsyncDir(layout.root);
    if (entries.includes(IDENTITY_FILE_NAME)) {
      disk.unlink(layout.identityPath);
      disk.fsyncDir(layout.root);
      removed.push(IDENTITY_FILE_NAME);
    }
    return { removed, kept };
  });
  if (!result.ok) return { ok: false, error: ioError(result.error) };
  if ('kind' in result.value) return { ok: false, error: result.value };
  return { ok: true, value: result.value };
}
