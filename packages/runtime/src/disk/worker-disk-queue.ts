/**
 * `WorkerDiskQueue`: the runtime's DiskQueue (storage/disk-job.ts). One per shard thread, with a
 * disk thread of its own (disk-thread.ts), so a partition's frontier fdatasyncs and superblock
 * write run while the shard goes on serving requests and replica frames.
 *
 * Results come back as port messages and `done` runs from the shard's event loop, in submission
 * order. `barrier()` blocks the shard thread (Atomics.wait on the DONE word) until the disk
 * thread has finished every submitted job, then takes their results synchronously
 * (`receiveMessageOnPort`): the partition driver calls it before anything else touches the
 * superblock or the files a queued job names (docs/storage-async-frontier.md).
 */
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { DiskJob, DiskJobDone, DiskQueue } from '@shoal/storage';
import { assert } from '@shoal/stdx';
import { CONTROL_DONE, CONTROL_WORDS, type DiskThreadData, type JobMessage, type ResultMessage } from './disk-thread-messages.js';

/** A disk thread that finishes nothing for this long is a hung disk: the replica stops (assertion). */
const BARRIER_WAIT_MAX_MS = 120_000;
/** Atomics.wait slice, so a wait never outlives the bound by much. */
const BARRIER_SLICE_MS = 1_000;

/** How to start the disk thread (tests start the TypeScript module through tsx). */
export interface DiskThreadScript {
  readonly url: string | URL;
  readonly eval?: boolean;
  readonly execArgv?: string[];
}

const DEFAULT_SCRIPT: DiskThreadScript = { url: new URL('./disk-thread.js', import.meta.url) };

export class WorkerDiskQueue implements DiskQueue {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #control: Int32Array;
  readonly #waiting: { id: number; done: DiskJobDone }[] = [];
  #submitted = 0;
  #closed = false;

  constructor(script: DiskThreadScript = DEFAULT_SCRIPT) {
    const control = new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT);
    const channel = new MessageChannel();
    const data: DiskThreadData = { control, port: channel.port2 };
    this.#worker = new Worker(script.url, {
      workerData: data, transferList: [channel.port2], name: 'shoal-disk', eval: script.eval ?? false,
      ...(script.execArgv === undefined ? {} : { execArgv: script.execArgv }),
    });
    this.#worker.unref();
    this.#control = new Int32Array(control);
    this.#port = channel.port1;
    this.#port.on('message', (message: ResultMessage) => this.#deliver(message));
    this.#port.unref();
  }

  get pending(): number {
    return this.#waiting.length;
  }

  submit(job: DiskJob, done: DiskJobDone): void {
    assert(!this.#closed, 'disk queue: closed');
    const id = ++this.#submitted;
    this.#waiting.push({ id, done });
    // While jobs are out, the port keeps the thread alive so their results are delivered.
    if (this.#waiting.length === 1) this.#port.ref();
    this.#port.postMessage({ id, job } satisfies JobMessage);
  }

  barrier(): void {
    const started = Date.now();
    while (this.#waiting.length > 0) {
      const received = receiveMessageOnPort(this.#port) as { message: ResultMessage } | undefined;
      if (received !== undefined) {
        this.#deliver(received.message);
        continue;
      }
      assert(Date.now() - started < BARRIER_WAIT_MAX_MS, `disk queue: ${this.#waiting.length} job(s) unfinished after ${BARRIER_WAIT_MAX_MS} ms`);
      const seen = Atomics.load(this.#control, CONTROL_DONE);
      if (seen >= (this.#waiting[0] as { id: number }).id) continue; // posted already: receive it
      Atomics.wait(this.#control, CONTROL_DONE, seen, BARRIER_SLICE_MS);
    }
  }

  /** Settles every job, then stops the disk thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.barrier();
    this.#closed = true;
    this.#port.close();
    await this.#worker.terminate();
  }

  #deliver(message: ResultMessage): void {
    const head = this.#waiting[0];
    // A result taken by `barrier` already arrives no more; any other order is a bug of ours.
    assert(head !== undefined && head.id === message.id, `disk queue: result ${message.id} out of order`);
    this.#waiting.shift();
    if (this.#waiting.length === 0) this.#port.unref();
    head.done(message.result);
  }
}
