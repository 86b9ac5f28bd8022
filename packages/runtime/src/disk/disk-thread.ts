/**
 * A shard's disk thread: runs the disk jobs its shard submits, one at a time, in order, against
 * the real file system (RealDisk), and posts each result back (disk-thread-messages.ts). It never
 * throws: a failure that is not a DiskError is reported as EOTHER, so a shard waiting in
 * `barrier()` is always answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type DiskJobResult, RealDisk, runDiskJob } from '@shoal/storage';
import { CONTROL_DONE, type DiskThreadData, type JobMessage, type ResultMessage } from './disk-thread-messages.js';

const data = workerData as DiskThreadData;
const control = new Int32Array(data.control);
const disk = new RealDisk();

function run(message: JobMessage): DiskJobResult {
  try {
    return runDiskJob(disk, message.job);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, step: 0, error: { code: 'EOTHER', syscall: 'disk_job', path: '', message: `EOTHER: disk job: ${detail}` } };
  }
}

data.port.on('message', (message: JobMessage) => {
  const reply: ResultMessage = { id: message.id, result: run(message) };
  data.port.postMessage(reply);
  Atomics.add(control, CONTROL_DONE, 1);
  Atomics.notify(control, CONTROL_DONE);
});
parentPort?.on('message', () => {});
