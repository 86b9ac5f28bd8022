/**
 * What crosses between a shard thread's `WorkerDiskQueue` and its disk thread (disk-thread.ts).
 *
 *   shard ─ JobMessage {id, job} ─▶ disk thread ─ runDiskJob(RealDisk) ─ ResultMessage {id, result} ─▶ shard
 *
 * The control words (a SharedArrayBuffer) let the shard thread block in `barrier()` without the
 * event loop: the disk thread posts the result, then bumps DONE and notifies.
 */
import type { MessagePort } from 'node:worker_threads';
import type { DiskJob, DiskJobResult } from '@shoal/storage';

export interface JobMessage {
  readonly id: number;
  readonly job: DiskJob;
}

export interface ResultMessage {
  readonly id: number;
  readonly result: DiskJobResult;
}

/** `workerData` of a disk thread. */
export interface DiskThreadData {
  /** Int32Array over CONTROL_WORDS words. */
  readonly control: SharedArrayBuffer;
  /** The port results go back on (its other end stays with the shard thread). */
  readonly port: MessagePort;
}

/** Jobs the disk thread finished (their result already posted). */
export const CONTROL_DONE = 0;
export const CONTROL_WORDS = 1;
