/**
 * `purge.gen` (§9.5): 16 bytes LE `[applied purge generation u64][created_revision u64]`, always
 * fdatasynced (§9.6). Shoal writes it by atomic replace (tmp → fsync → rename → fsync dir), so it
 * is never torn; a file of any other length is reported corrupt.
 *
 * `purge.intent` (Shoal): the same 16 bytes, written durably BEFORE a purge deletes anything and
 * removed after `purge.gen` records it. Boot finding an intent rolls the purge forward (it is
 * idempotent), so a crash mid-purge never leaves half the segments deleted.
 */
import { assert } from '@shoal/stdx';
import { type Disk, joinPath } from './disk.js';
import { readWholeFile, writeFileAtomic } from './durable-file.js';

export const PURGE_GENERATION_FILE_NAME = 'purge.gen';
export const PURGE_INTENT_FILE_NAME = 'purge.intent';
export const PURGE_RECORD_SIZE = 16;

export interface PurgeRecord {
  readonly generation: bigint;
  readonly createdRevision: bigint;
}

export const PURGE_RECORD_NONE: PurgeRecord = Object.freeze({ generation: 0n, createdRevision: 0n });

export function encodePurgeRecord(record: PurgeRecord): Uint8Array {
  assert(record.generation >= 0n && record.generation < 1n << 64n, 'purge record: generation');
  assert(record.createdRevision >= 0n && record.createdRevision < 1n << 64n, 'purge record: revision');
  const out = new Uint8Array(PURGE_RECORD_SIZE);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, record.generation, true);
  view.setBigUint64(8, record.createdRevision, true);
  return out;
}

export type PurgeRecordRead = { readonly kind: 'missing' } | { readonly kind: 'ok'; readonly record: PurgeRecord } | { readonly kind: 'corrupt'; readonly reason: string };

export function classifyPurgeRecord(bytes: Uint8Array | null): PurgeRecordRead {
  if (bytes === null) return { kind: 'missing' };
  if (bytes.length !== PURGE_RECORD_SIZE) return { kind: 'corrupt', reason: `purge_record_length_${bytes.length}` };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind: 'ok', record: { generation: view.getBigUint64(0, true), createdRevision: view.getBigUint64(8, true) } };
}

/** Throws DiskError. */
export function readPurgeRecord(disk: Disk, partitionDir: string, name = PURGE_GENERATION_FILE_NAME): PurgeRecordRead {
  return classifyPurgeRecord(readWholeFile(disk, joinPath(partitionDir, name)));
}

/** Durable atomic write. Throws DiskError. */
export function writePurgeRecord(disk: Disk, partitionDir: string, record: PurgeRecord, name = PURGE_GENERATION_FILE_NAME): void {
  writeFileAtomic(disk, joinPath(partitionDir, name), [encodePurgeRecord(record)]);
}
