/**
 * The `shoal_*` metrics of a node as prom-client metric objects, built by the supervisor on each
 * scrape from the workers' `ThreadStats`, the ring occupancy it reads from the mesh's shared
 * memory, the status table and its own process figures. metrics/exposition.ts merges them with
 * the histograms and the standard metrics and renders the text. Names and labels are listed in
 * docs/operations.md.
 */
import type { Mesh } from '@shoal/ring';
import { type Labels, MetricSet } from './metric-set.js';
import { partitionMetrics } from './partition-metrics.js';
import type { HandshakeFigures, MetricJson, ThreadStats } from './thread-stats.js';

/** Control words of a ring (docs/ring.md "Control words"): WRITE at word 0, READ at word 32. */
const RING_WRITE_WORD = 0;
const RING_READ_WORD = 32;

export interface NodeMetricsInput {
  readonly version: string;
  readonly node: string;
  readonly threads: readonly ThreadStats[];
  readonly mesh: Mesh;
  /** Mesh index → thread name. */
  readonly threadName: (thread: number) => string;
  readonly connectionsOpen: number;
  readonly main: NodeJS.MemoryUsage;
  readonly cpu: NodeJS.CpuUsage;
  readonly uptimeSeconds: number;
  /** The replica plane's handshake figures when it runs on the main thread (plaintext cluster). */
  readonly replicaHandshakes?: HandshakeFigures | null;
  /** /ready's answer (node/readiness.ts). */
  readonly ready: boolean;
  /** Workers whose stats did not arrive within the scrape's wait: their series are absent from this scrape. */
  readonly threadsMissing: number;
}

export function nodeMetrics(input: NodeMetricsInput): MetricJson[] {
  const e = new MetricSet();
  const t = input.threads;
  e.metric('shoal_up', 'gauge', 'The node is serving.', [[{ node: input.node, version: input.version }, 1]]);
  e.metric('shoal_ready', 'gauge', '1 while /ready answers 200: the metadata group has a reachable primary and this node caught up.', [[{}, input.ready ? 1 : 0]]);
  e.metric('shoal_scrape_threads_missing', 'gauge', 'Worker threads whose figures did not arrive in time for this scrape (their series are absent from it).', [[{}, input.threadsMissing]]);
  e.metric('shoal_uptime_seconds', 'gauge', 'Seconds since the supervisor started.', [[{}, input.uptimeSeconds]]);
  e.metric('shoal_process_resident_memory_bytes', 'gauge', 'Resident set size of the process.', [[{}, input.main.rss]]);
  e.metric('shoal_process_cpu_seconds_total', 'counter', 'User and system CPU time of the process.', [[{}, (input.cpu.user + input.cpu.system) / 1e6]]);
  e.metric('shoal_thread_heap_used_bytes', 'gauge', 'V8 heap in use, per thread.', [
    [{ thread: 'main' }, input.main.heapUsed], ...t.map((s) => [{ thread: s.thread }, s.heap.usedBytes] as const),
  ]);
  e.metric('shoal_thread_heap_total_bytes', 'gauge', 'V8 heap reserved, per thread.', [
    [{ thread: 'main' }, input.main.heapTotal], ...t.map((s) => [{ thread: s.thread }, s.heap.totalBytes] as const),
  ]);
  e.metric('shoal_thread_external_bytes', 'gauge', 'Memory held outside the V8 heap (buffers), per thread.', t.map((s) => [{ thread: s.thread }, s.heap.externalBytes] as const));
  e.metric('shoal_event_loop_delay_seconds', 'gauge', 'Event-loop delay of a worker since the previous scrape, by quantile (max = the longest block).',
    t.flatMap((s) => [
      [{ thread: s.thread, quantile: '0.5' }, s.loopDelay.p50Ms / 1000] as const,
      [{ thread: s.thread, quantile: '0.99' }, s.loopDelay.p99Ms / 1000] as const,
      [{ thread: s.thread, quantile: 'max' }, s.loopDelay.maxMs / 1000] as const,
    ]));
  e.metric('shoal_requests_total', 'counter', 'Client requests received, by command, by the shard that read them.',
    t.flatMap((s) => Object.entries(s.requests).map(([command, n]) => [{ thread: s.thread, command }, n] as const)));
  e.metric('shoal_commits_total', 'counter', 'Committed operations applied, by plane.',
    t.flatMap((s) => [[{ thread: s.thread, plane: 'metadata' }, s.commits.metadata] as const, [{ thread: s.thread, plane: 'partition' }, s.commits.partition] as const]));
  e.metric('shoal_client_bytes_received_total', 'counter', 'Bytes read from client connections.', t.map((s) => [{ thread: s.thread }, s.bytesIn] as const));
  e.metric('shoal_client_bytes_sent_total', 'counter', 'Bytes written to client connections.', t.map((s) => [{ thread: s.thread }, s.bytesOut] as const));
  e.metric('shoal_connections', 'gauge', 'Open client connections of the node.', [[{}, input.connectionsOpen]]);
  e.metric('shoal_thread_connections', 'gauge', 'Open client connections, per shard.', t.map((s) => [{ thread: s.thread }, s.connectionsOpen] as const));
  e.metric('shoal_connections_accepted_total', 'counter', 'Client connections accepted.', t.map((s) => [{ thread: s.thread }, s.connectionsAccepted] as const));
  e.metric('shoal_connections_closed_total', 'counter', 'Client connections closed.', t.map((s) => [{ thread: s.thread }, s.connectionsClosed] as const));
  e.metric('shoal_connections_refused_total', 'counter', 'Connections refused or closed by a limit or a protocol error, by reason.',
    t.flatMap((s) => Object.entries(s.connectionsRefused).map(([reason, n]) => [{ thread: s.thread, reason }, n] as const)));
  e.metric('shoal_evictions_total', 'counter', 'Eviction frames sent by the client plane.', t.map((s) => [{ thread: s.thread }, s.evictions] as const));
  e.metric('shoal_channel_messages_sent_total', 'counter', 'Messages written to inter-thread rings.', t.map((s) => [{ thread: s.thread }, s.channelMessagesSent] as const));
  e.metric('shoal_channel_messages_received_total', 'counter', 'Messages read from inter-thread rings.', t.map((s) => [{ thread: s.thread }, s.channelMessagesReceived] as const));
  e.metric('shoal_channel_backlog_bytes', 'gauge', 'Bytes waiting for ring space (back-pressure).', t.map((s) => [{ thread: s.thread }, s.channelBacklogBytes] as const));
  const occupancy: [Labels, number][] = [];
  const capacity: [Labels, number][] = [];
  input.mesh.rings.forEach((row, from) => row.forEach((handle, to) => {
    if (handle === null) return;
    const words = new Int32Array(handle.buffer, 0, RING_READ_WORD + 1);
    const used = (Atomics.load(words, RING_WRITE_WORD) - Atomics.load(words, RING_READ_WORD)) >>> 0;
    const labels = { from: input.threadName(from), to: input.threadName(to) };
    occupancy.push([labels, used]);
    capacity.push([labels, handle.capacityBytes]);
  }));
  e.metric('shoal_ring_occupancy_bytes', 'gauge', 'Published, unread bytes in a ring between two threads.', occupancy);
  e.metric('shoal_ring_capacity_bytes', 'gauge', 'Data capacity of a ring between two threads.', capacity);
  const groups = t.flatMap((s) => s.groups.map((g) => ({ thread: s.thread, ...g })));
  const gl = (g: (typeof groups)[number]): Labels => ({ group: g.group, plane: g.plane, thread: g.thread });
  e.metric('shoal_group_view', 'gauge', 'Current view of a consensus group.', groups.map((g) => [gl(g), g.view] as const));
  e.metric('shoal_group_primary', 'gauge', '1 when this replica is the primary of the group, else 0.', groups.map((g) => [gl(g), g.role === 'primary' ? 1 : 0] as const));
  e.metric('shoal_group_normal', 'gauge', '1 when the group is in status normal, else 0.', groups.map((g) => [gl(g), g.status === 'normal' ? 1 : 0] as const));
  e.metric('shoal_group_op', 'gauge', 'Highest op in the group journal.', groups.map((g) => [gl(g), g.op] as const));
  e.metric('shoal_group_commit', 'gauge', 'Commit point of the group.', groups.map((g) => [gl(g), g.commit] as const));
  e.metric('shoal_journal_bytes', 'gauge', 'Bytes in the metadata write-ahead log.',
    groups.filter((g) => g.plane === 'metadata').map((g) => [gl(g), g.journalBytes] as const));
  e.metric('shoal_segment_bytes', 'gauge', 'Bytes in the segments of a partition.',
    groups.filter((g) => g.plane === 'partition').map((g) => [gl(g), g.segmentBytes] as const));
  e.metric('shoal_segments', 'gauge', 'Segments of a partition.',
    groups.filter((g) => g.plane === 'partition').map((g) => [gl(g), g.segments] as const));
  e.metric('shoal_consensus_events_total', 'counter', 'Consensus events by plane (view_change, view_start, view_adopt, probe, repair, state_transfer, state_transfer_installed, ...).',
    t.flatMap((s) => Object.entries(s.consensusEvents).map(([key, n]) => {
      const [plane = '', event = ''] = key.split('/');
      return [{ thread: s.thread, plane, event }, n] as const;
    })));
  const peers = t.flatMap((s) => s.replicaPeers.map((p) => ({ thread: s.thread, ...p })));
  const pl = (p: (typeof peers)[number]): Labels => ({ peer: String(p.peer), thread: p.thread });
  const linked = peers.filter((p) => p.connected);
  e.metric('shoal_replica_link_up', 'gauge', '1 for each peer replica whose link this thread holds.', linked.map((p) => [pl(p), 1] as const));
  e.metric('shoal_replica_frames_received_total', 'counter', 'Validated frames received from a peer replica.', linked.map((p) => [pl(p), p.framesIn] as const));
  e.metric('shoal_replica_frames_sent_total', 'counter', 'Frames written to a peer replica.', linked.map((p) => [pl(p), p.framesOut] as const));
  e.metric('shoal_replica_bytes_received_total', 'counter', 'Bytes read from a peer replica link.', linked.map((p) => [pl(p), p.bytesIn] as const));
  e.metric('shoal_replica_bytes_sent_total', 'counter', 'Bytes written to a peer replica link.', linked.map((p) => [pl(p), p.bytesOut] as const));
  e.metric('shoal_replica_queue_dropped_total', 'counter', 'Frames dropped because the peer queue was full.', linked.map((p) => [pl(p), p.queueDropped] as const));
  e.metric('shoal_replica_frames_dropped_total', 'counter', 'Inbound replica frames dropped by validation, by reason.',
    linked.flatMap((p) => Object.entries(p.dropReasons).map(([reason, n]) => [{ ...pl(p), reason }, n] as const)));
  e.metric('shoal_replica_not_connected_total', 'counter', 'Frames for a peer dropped because no link to it was up.',
    peers.filter((p) => p.notConnected > 0).map((p) => [pl(p), p.notConnected] as const));
  const hs = [input.replicaHandshakes ?? null, ...t.map((s) => s.replicaHandshakes)].find((h) => h !== null) ?? null;
  if (hs !== null) {
    e.metric('shoal_replica_handshakes_total', 'counter', 'Replica handshakes that installed a link.', [[{}, hs.established]]);
    e.metric('shoal_replica_handshakes_refused_total', 'counter', 'Replica handshakes refused, by reason.',
      Object.entries(hs.refused).map(([reason, n]) => [{ reason }, n] as const));
    e.metric('shoal_replica_duplicates_closed_total', 'counter', 'Handshakes closed because the peer already had a link.', [[{}, hs.duplicatesClosed]]);
  }
  partitionMetrics(e, t);
  return e.metrics;
}
