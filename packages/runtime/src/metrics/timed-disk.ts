/**
 * The real disk with its sync calls timed into `shoal_fsync_duration_seconds`. A subclass rather
 * than a wrapper: every other Disk call (and any the port gains later) is RealDisk's own, and
 * the drivers never know they are measured. A failed call is timed too (an EIO after 30 s is
 * exactly what an operator needs to see).
 */
import { performance } from 'node:perf_hooks';
import { type Fd, RealDisk } from '@shoal/storage';
import type { LatencyHistogram } from './histogram.js';
import type { Plane, ThreadMetrics } from './thread-metrics.js';

export class TimedDisk extends RealDisk {
  readonly #fsync: LatencyHistogram;
  readonly #fdatasync: LatencyHistogram;
  readonly #dir: LatencyHistogram;

  constructor(metrics: ThreadMetrics, plane: Plane) {
    super();
    this.#fsync = metrics.fsyncDuration.child(plane, 'fsync');
    this.#fdatasync = metrics.fsyncDuration.child(plane, 'fdatasync');
    this.#dir = metrics.fsyncDuration.child(plane, 'fsync_dir');
  }

  override fsync(fd: Fd): void {
    timed(this.#fsync, () => super.fsync(fd));
  }

  override fdatasync(fd: Fd): void {
    timed(this.#fdatasync, () => super.fdatasync(fd));
  }

  override fsyncDir(path: string): void {
    timed(this.#dir, () => super.fsyncDir(path));
  }
}

function timed(histogram: LatencyHistogram, call: () => void): void {
  const started = performance.now();
  try {
    call();
  } finally {
    histogram.observeMs(performance.now() - started);
  }
}
