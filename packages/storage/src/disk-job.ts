/**
 * Disk jobs: durability work (and the journal files it retires) a shard thread hands off instead
 * of doing inline (issue 13 item 6).
 *
 * A job is data, not a closure, so it can cross to another thread: a list of steps run in order
 * against a `Disk`, stopping at the first failure. Steps name files by PATH, never by fd: the
 * thread that submits the job may close or rotate its fds while the job waits, and on Linux an
 * fdatasync through any descriptor of a file flushes that file's dirty pages, whoever wrote them.
 *
 *   submitter ─ submit(job, done) ─▶ DiskQueue ─ runDiskJob(disk, job) ─▶ done(result) on the submitter's thread
 *                barrier()          ─ every job submitted so far has run and its `done` was called
 *
 * Ordering: jobs run one at a time in submission order, and `done` callbacks are called in that
 * order. A job covers only bytes written (pwrite returned) before `submit`: the submitter builds
 * the job from what is already in the OS.
 *
 * Implementations: `InlineDiskQueue` (runs at submit: the synchronous behaviour), `DeferredDiskQueue`
 * (runs when its owner polls: the simulator, which decides when a job finishes and crashes with
 * jobs still queued), and the runtime's worker-thread queue (a real second thread).
 */
import { type Disk, DiskError, type DiskFault, attempt } from './disk.js';
import { writeFileAtomic } from './durable-file.js';

export type DiskJobStep =
  /** fdatasync of the file at `path` (opened read/write for the call, then closed). */
  | { readonly kind: 'sync_file'; readonly path: string }
  /** `writeFileAtomic`: temp file, fsync, rename over `path`, directory fsync. */
  | { readonly kind: 'write_atomic'; readonly path: string; readonly bytes: Uint8Array }
  /** unlink of the file at `path` (a file already gone counts as removed). */
  | { readonly kind: 'remove_file'; readonly path: string }
  /** fsync of the directory at `path`: its creates, renames and unlinks become durable. */
  | { readonly kind: 'sync_dir'; readonly path: string };

export interface DiskJob {
  readonly steps: readonly DiskJobStep[];
}

/** What a job did: every step, or the first failure and its step's index (later steps did not run). */
export type DiskJobResult = { readonly ok: true } | { readonly ok: false; readonly step: number; readonly error: DiskFault };

/** Runs `job` against `disk`. A `DiskError` ends it as a value; anything else propagates. */
export function runDiskJob(disk: Disk, job: DiskJob): DiskJobResult {
  for (let i = 0; i < job.steps.length; i++) {
    const ran = attempt(() => runStep(disk, job.steps[i] as DiskJobStep));
    if (!ran.ok) return { ok: false, step: i, error: ran.error };
  }
  return { ok: true };
}

function runStep(disk: Disk, step: DiskJobStep): void {
  switch (step.kind) {
    case 'sync_file': {
      const fd = disk.open(step.path, 'readwrite');
      try {
        disk.fdatasync(fd);
      } finally {
        disk.close(fd);
      }
      return;
    }
    case 'write_atomic':
      writeFileAtomic(disk, step.path, [step.bytes]);
      return;
    case 'remove_file':
      try {
        disk.unlink(step.path);
      } catch (error) {
        if (!(error instanceof DiskError && error.code === 'ENOENT')) throw error;
      }
      return;
    case 'sync_dir':
      disk.fsyncDir(step.path);
      return;
  }
}

export type DiskJobDone = (result: DiskJobResult) => void;

/** Where durability work goes. One owner (a shard thread, a simulated node) submits and polls. */
export interface DiskQueue {
  /** Queues `job`; `done` is called once, on the submitter's thread, after it ran. */
  submit(job: DiskJob, done: DiskJobDone): void;
  /** Returns once every job submitted so far has run and its `done` was called. */
  barrier(): void;
  /** Jobs submitted whose `done` was not called yet. */
  readonly pending: number;
}

/** Runs each job at `submit`: the synchronous behaviour (tests, tools, a host without a disk thread). */
export class InlineDiskQueue implements DiskQueue {
  readonly #disk: Disk;

  constructor(disk: Disk) {
    this.#disk = disk;
  }

  get pending(): number {
    return 0;
  }

  submit(job: DiskJob, done: DiskJobDone): void {
    done(runDiskJob(this.#disk, job));
  }

  barrier(): void {}
}

/**
 * Holds jobs until its owner runs them (`runNext`, `runAll`): the simulator's disk thread. A
 * process crash drops what is still queued (`drop`): those steps never reached the disk.
 */
export class DeferredDiskQueue implements DiskQueue {
  readonly #disk: Disk;
  #queued: { job: DiskJob; done: DiskJobDone }[] = [];

  constructor(disk: Disk) {
    this.#disk = disk;
  }

  get pending(): number {
    return this.#queued.length;
  }

  submit(job: DiskJob, done: DiskJobDone): void {
    this.#queued.push({ job, done });
  }

  /** Runs the oldest queued job and calls its `done`; false when none was queued. */
  runNext(): boolean {
    const next = this.#queued.shift();
    if (next === undefined) return false;
    next.done(runDiskJob(this.#disk, next.job));
    return true;
  }

  barrier(): void {
    // A `done` may submit the next job: run until the queue is empty.
    while (this.runNext());
  }

  /** The process died: queued jobs never ran and nobody is told. */
  drop(): void {
    this.#queued = [];
  }
}
