/**
 * `workerData` of each worker thread, typed (style habit 15). Everything in it is
 * structured-clone-safe: the frozen config, ring and status-table handles (SharedArrayBuffers).
 *
 * Mesh thread indices: 0 = the metadata worker, 1 + s = shard s. The supervisor is not on the
 * mesh.
 */
import type { MeshEndpoints } from '@shoal/ring';
import type { ClientTlsMaterial } from '../client-plane/tls.js';
import type { ShoalConfig } from '../config/index.js';
import type { StatusTableHandle } from '../status/status-table.js';

export const METADATA_THREAD = 0;

export function shardThread(shard: number): number {
  return shard + 1;
}

export function shardOfThread(thread: number): number {
  return thread - 1;
}

interface CommonWorkerData {
  readonly config: ShoalConfig;
  readonly mesh: MeshEndpoints;
  readonly status: StatusTableHandle;
  /** Random non-zero u128 per boot (the metadata plane's incarnation), decimal. */
  readonly incarnation: string;
}

export interface MetadataWorkerData extends CommonWorkerData {
  readonly role: 'metadata';
}

export interface ShardWorkerData extends CommonWorkerData {
  readonly role: 'shard';
  readonly shard: number;
  /** `[tcp.tls]` on: the listener's certificate and key (PEM); null: plaintext. */
  readonly clientTls: ClientTlsMaterial | null;
}

export type WorkerData = MetadataWorkerData | ShardWorkerData;

export function threadName(data: WorkerData): string {
  return data.role === 'metadata' ? 'metadata' : `shard-${data.shard}`;
}

export function isWorkerData(value: unknown): value is WorkerData {
  if (typeof value !== 'object' || value === null) return false;
  const role = (value as { role?: unknown }).role;
  return role === 'metadata' || role === 'shard';
}
