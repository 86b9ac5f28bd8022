/**
 * A run as a timeline (`npm run vopr -- --seed S --html FILE` renders it): per replica the
 * metadata group's status and view over time, how many partition groups were in a view change,
 * commits and client traffic per bucket of ticks, faults and core fallback marks as points; per
 * run the network partitions, the phases and every client's answers. Recording is off unless a
 * Timeline is passed to the Simulation (no cost to ordinary runs), and it never draws from a
 * PRNG or feeds the trace hash: a recorded run is the same run.
 */

export const BUCKET_TICKS = 50;

export interface StatusSpan {
  readonly from: number;
  to: number;
  /** normal / view_change / recovering (the core's), or down. */
  readonly status: string;
  readonly view: number;
  readonly primary: boolean;
}

export interface PointEvent {
  readonly tick: number;
  readonly replica: number;
  /** kill, power loss, restart, caught up, or a mark name (core.vote_blind@partition …). */
  readonly kind: string;
  readonly detail: string;
}

export interface PartitionSpan {
  readonly from: number;
  /** The tick it healed (the planned end until then). */
  to: number;
  /** Replicas on the cut-off side. */
  readonly cut: readonly number[];
  readonly oneWay: boolean;
}

export interface ReplicaSeries {
  readonly spans: StatusSpan[];
  /** Per bucket: metadata ops committed, partition ops committed. */
  readonly metadataCommits: number[];
  readonly partitionCommits: number[];
  /** Per bucket: client requests that reached the replica, replies it sent. */
  readonly requests: number[];
  readonly replies: number[];
  /** Per bucket: the most partition groups seen in a view change at once. */
  readonly groupsInViewChange: number[];
  /** Per bucket: partition groups hosted (max). */
  readonly groups: number[];
}

export interface ClientSeries {
  /** Per bucket: answers by kind (metadata, send, offset, rejected, unknown). */
  readonly answers: Record<string, number>[];
}

export interface TimelineData {
  readonly seed: number;
  readonly replicas: number;
  readonly bucketTicks: number;
  ticks: number;
  readonly replicaSeries: ReplicaSeries[];
  readonly clientSeries: ClientSeries[];
  readonly points: PointEvent[];
  readonly partitions: PartitionSpan[];
  readonly phases: { tick: number; name: string }[];
  summary: {
    ok: boolean;
    failure: string | null;
    traceHash: string;
    committedOps: number;
    marks: Record<string, number>;
    options: Record<string, unknown>;
  } | null;
}

export class Timeline {
  readonly data: TimelineData;

  constructor(seed: number, replicas: number, clients: number) {
    this.data = {
      seed, replicas, bucketTicks: BUCKET_TICKS, ticks: 0,
      replicaSeries: Array.from({ length: replicas }, () => ({
        spans: [], metadataCommits: [], partitionCommits: [], requests: [], replies: [], groupsInViewChange: [], groups: [],
      })),
      clientSeries: Array.from({ length: clients }, () => ({ answers: [] })),
      points: [], partitions: [], phases: [], summary: null,
    };
  }

  /** The metadata group's state of `replica` at `tick` (null: down). */
  status(tick: number, replica: number, state: { status: string; view: number; primary: boolean } | null): void {
    this.data.ticks = Math.max(this.data.ticks, tick);
    const spans = (this.data.replicaSeries[replica] as ReplicaSeries).spans;
    const status = state === null ? 'down' : state.status;
    const view = state?.view ?? -1;
    const primary = state?.primary ?? false;
    const last = spans[spans.length - 1];
    if (last !== undefined && last.status === status && last.view === view && last.primary === primary) {
      last.to = tick;
      return;
    }
    if (last !== undefined) last.to = tick;
    spans.push({ from: tick, to: tick, status, view, primary });
  }

  groups(tick: number, replica: number, hosted: number, inViewChange: number): void {
    const s = this.data.replicaSeries[replica] as ReplicaSeries;
    const b = bucket(tick);
    s.groups[b] = Math.max(s.groups[b] ?? 0, hosted);
    s.groupsInViewChange[b] = Math.max(s.groupsInViewChange[b] ?? 0, inViewChange);
  }

  commit(tick: number, replica: number, metadata: boolean): void {
    const s = this.data.replicaSeries[replica] as ReplicaSeries;
    add(metadata ? s.metadataCommits : s.partitionCommits, bucket(tick));
  }

  request(tick: number, replica: number): void {
    add((this.data.replicaSeries[replica] as ReplicaSeries).requests, bucket(tick));
  }

  reply(tick: number, replica: number): void {
    add((this.data.replicaSeries[replica] as ReplicaSeries).replies, bucket(tick));
  }

  answer(tick: number, client: number, kind: string): void {
    const series = this.data.clientSeries[client];
    if (series === undefined) return;
    const b = bucket(tick);
    for (let i = series.answers.length; i <= b; i++) series.answers.push({});
    const cell = series.answers[b] as Record<string, number>;
    cell[kind] = (cell[kind] ?? 0) + 1;
  }

  fault(tick: number, replica: number, kind: string, detail: string): void {
    this.data.points.push({ tick, replica, kind, detail });
  }

  mark(tick: number, replica: number, name: string, detail: string): void {
    this.data.points.push({ tick, replica, kind: name, detail });
  }

  partition(tick: number, until: number, cut: readonly number[], oneWay: boolean): void {
    this.data.partitions.push({ from: tick, to: until, cut: [...cut], oneWay });
  }

  heal(tick: number): void {
    const last = this.data.partitions[this.data.partitions.length - 1];
    if (last !== undefined) last.to = tick;
  }

  phase(tick: number, name: string): void {
    this.data.phases.push({ tick, name });
  }
}

function bucket(tick: number): number {
  return Math.floor(tick / BUCKET_TICKS);
}

function add(series: number[], b: number): void {
  for (let i = series.length; i <= b; i++) series.push(0);
  series[b] = (series[b] as number) + 1;
}
