/**
 * The latency histograms of one worker thread (one instance per worker, `WorkerRuntime.metrics`).
 * Every family is cumulative since the thread started; the supervisor sums the threads' series
 * with the same labels on each scrape. Names and labels are listed in docs/operations.md.
 *
 * | family                                  | labels        | measured on                                  |
 * |-----------------------------------------|---------------|----------------------------------------------|
 * | `shoal_request_duration_seconds`        | command       | the shard that read the request: frame read → reply written to the socket |
 * | `shoal_commit_duration_seconds`         | plane         | the group's owner thread: request handed to the core → its committed reply |
 * | `shoal_fsync_duration_seconds`          | plane, call   | every fdatasync / fsync / directory fsync of the drivers |
 * | `shoal_replication_round_trip_seconds`  | plane, peer   | a primary: first Prepare of an op sent → that peer's PrepareOk |
 */
import { commandByCode } from '@shoal/protocol';
import { HistogramFamily, type HistogramFamilySnapshot, type LatencyHistogram } from './histogram.js';

export type Plane = 'metadata' | 'partition';
export type SyncCall = 'fdatasync' | 'fsync' | 'fsync_dir';

export class ThreadMetrics {
  readonly requestDuration = new HistogramFamily('shoal_request_duration_seconds',
    'Client requests from the frame read to the reply written to the socket, by command (the shard that read them).', ['command']);
  readonly commitDuration = new HistogramFamily('shoal_commit_duration_seconds',
    'Client requests from the group owner handing them to the consensus core to the committed reply, by plane.', ['plane']);
  readonly fsyncDuration = new HistogramFamily('shoal_fsync_duration_seconds',
    'Durations of fdatasync, fsync and directory fsync calls, by plane.', ['plane', 'call']);
  readonly replicationRoundTrip = new HistogramFamily('shoal_replication_round_trip_seconds',
    'From a primary first sending an op\'s Prepare to a peer\'s PrepareOk for it, by plane and peer replica.', ['plane', 'peer']);
  readonly #byCommand = new Map<number, LatencyHistogram>();

  /** The request histogram of a command code (unknown codes share `unknown`: no label per junk code). */
  request(code: number): LatencyHistogram {
    let histogram = this.#byCommand.get(code);
    if (histogram === undefined) {
      histogram = this.requestDuration.child(commandByCode(code)?.snake ?? 'unknown');
      this.#byCommand.set(code, histogram);
    }
    return histogram;
  }

  snapshot(): HistogramFamilySnapshot[] {
    return [this.requestDuration, this.commitDuration, this.fsyncDuration, this.replicationRoundTrip].map((f) => f.snapshot());
  }
}
