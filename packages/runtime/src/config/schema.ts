/**
 * Every configuration key Shoal knows, in one table (style habit 9: a limit on everything, in
 * one config, checked at boot). This table is the single source of truth for:
 *
 *   - the built-in defaults (written in TOML form, parsed by the same parsers as a file),
 *   - unknown-key rejection (a key not in this table refuses boot),
 *   - the environment-variable names (`IGGY_<PATH>` / `SHOAL_<PATH>`),
 *   - the per-key bounds (`min`, `max`, `pow2`, `nonzero`, `nonempty`),
 *   - secret redaction in the startup log,
 *   - the reference tables in docs/configuration.md.
 *
 * Cross-key rules (heartbeat vs broadcast interval, journal sizing, roster checks, ...) live in
 * validate.ts and roster.ts; their wording is repeated in `rules` here for the docs.
 *
 * Paths are TOML key paths. Items of an array of tables are written `cluster.nodes[].ip`.
 */

export type ValueKind =
  /** TOML boolean; env `true` / `false`. */
  | 'bool'
  /** TOML string. */
  | 'string'
  /** Non-negative integer (TOML integer; env decimal digits). */
  | 'uint'
  /** humantime string ("5s", "500ms", "1 day"), resolved to milliseconds. */
  | 'duration'
  /** Size string ("64 MiB", "2 MB") or integer bytes, resolved to bytes. */
  | 'size'
  /** `host:port` or `[v6]:port`. */
  | 'address'
  /** `"all"`, an integer, a range `"a..b"`, or `"numa:auto"`. */
  | 'cpu_allocation';

export type DefaultValue = string | number | boolean;

export interface KeySpec {
  readonly path: string;
  readonly kind: ValueKind;
  /** In TOML form. Absent: optional (resolves to `null`) unless `required`. */
  readonly default?: DefaultValue;
  /** Array-item keys only: the item is invalid without it. */
  readonly required?: true;
  /** uint: the value; duration: milliseconds; size: bytes. Inclusive. */
  readonly min?: number;
  readonly max?: number;
  readonly pow2?: true;
  /** duration / size: zero (including the `0`, `disabled`, `unlimited` sentinels) is refused. */
  readonly nonzero?: true;
  /** string: the empty string is refused. */
  readonly nonempty?: true;
  /** duration: never arms a Node timer, so it is exempt from TIMER_MS_MAX. */
  readonly notTimer?: true;
  /** Masked in the startup log and the rendered config. */
  readonly secret?: true;
  /** Shoal-specific: the reference server has no such key. */
  readonly shoal?: true;
  /** Name of the resolved field when the mechanical camelCase + unit suffix would be wrong. */
  readonly field?: string;
  readonly doc: string;
  /** Cross-key rules enforced in validate.ts / roster.ts, stated for the docs. */
  readonly rules?: readonly string[];
}

export interface TableArraySpec {
  readonly path: string;
  readonly itemsMax: number;
  readonly doc: string;
}

export interface SectionSpec {
  readonly path: string;
  readonly doc: string;
  readonly shoal?: true;
}

/** Node's setTimeout clamps anything above 2^31 - 1 ms to 1 ms: a "long" timer would fire at once. */
export const TIMER_MS_MAX = 2 ** 31 - 1;
/** Consensus supports at most 32 replicas (`REPLICAS_MAX`, replication-semantics.md §4.9). */
export const REPLICAS_MAX = 32;
/** Upper bound on the shard count, whatever the core count (each shard is a worker thread). */
export const SHARDS_MAX = 256;
/** Header size of every frame; a frame cap at or below it admits no body at all. */
export const HEADER_BYTES = 256;
/** The wire `size` field is a u32. */
export const U32_MAX = 2 ** 32 - 1;
/** State-transfer artifacts are capped at one sealed segment (1 GiB) plus one message overshoot. */
export const SEGMENT_BYTES_MAX = 2 ** 30;
/** `http.metrics.token`: at least 256 bits' worth of characters; at most what a bearer header is read for. */
export const METRICS_TOKEN_MIN = 32;
export const METRICS_TOKEN_MAX = 512;

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const SECOND = 1000;

export const SECTIONS: readonly SectionSpec[] = [
  { path: 'system', doc: 'Data directory layout, logging, sharding.' },
  { path: 'system.runtime', doc: 'Runtime files (relative to `system.path`).' },
  { path: 'system.logging', doc: 'Structured logs.' },
  { path: 'system.stream', doc: 'Stream directory name.' },
  { path: 'system.topic', doc: 'Topic directory name (relative to a stream directory).' },
  { path: 'system.partition', doc: 'Partition directory name and read-path checksum.' },
  { path: 'system.segment', doc: 'Placeholder kept for reference compatibility.' },
  { path: 'system.recovery', doc: 'Placeholder kept for reference compatibility.' },
  { path: 'system.sharding', doc: 'Shard worker count, inter-thread rings, shutdown budgets.' },
  { path: 'tcp', doc: 'The client listener (Iggy binary protocol over TCP).' },
  { path: 'tcp.tls', doc: 'TLS (1.2 and 1.3) on the client listener: when enabled the listener serves TLS only, on the same address.' },
  { path: 'http', doc: 'HTTP listener: Prometheus metrics, the `/ready` and `/live` probes, the dashboard (`/ui`) and its JSON (`/api/v1/*`); see operations.md "HTTP endpoints".' },
  { path: 'http.metrics', doc: 'Prometheus text endpoint.' },
  { path: 'heartbeat', doc: 'Client heartbeat: stale consumer-group members are released.' },
  { path: 'personal_access_token', doc: 'Personal access tokens.' },
  { path: 'personal_access_token.cleaner', doc: 'Expired-token cleaner.' },
  { path: 'consumer_group', doc: 'Consumer group rebalancing.' },
  { path: 'message_bus', doc: 'Replica-to-replica and inter-shard bus.' },
  { path: 'metadata', doc: 'The metadata consensus plane (group 1<<63).' },
  { path: 'partition', doc: 'The per-partition consensus planes.' },
  { path: 'cluster', doc: 'Cluster mode, consensus timing, the node roster.' },
  { path: 'cluster.auth', doc: 'Replica handshake pre-shared key.' },
  { path: 'cluster.tls', doc: 'TLS 1.3 on the replica port.' },
  { path: 'cluster.coordinator', doc: 'Which shards take replica and client connections.' },
  { path: 'cluster.nodes[]', doc: 'The roster: one entry per replica, byte-identical on every node.' },
  { path: 'cluster.nodes[].ports', doc: "The node's listener ports." },
  { path: 'cluster.nodes[].advertised_addresses[]', doc: 'Per-client-network advertised addresses.' },
  {
    path: 'root',
    doc: 'Root user credentials, read only when the root user is first created (empty data directory). Prefer the environment (`IGGY_ROOT_USERNAME`, `IGGY_ROOT_PASSWORD`) or `--with-default-root-credentials` for development.',
    shoal: true,
  },
];

export const TABLE_ARRAYS: readonly TableArraySpec[] = [
  { path: 'cluster.nodes', itemsMax: REPLICAS_MAX, doc: 'Node roster.' },
  { path: 'cluster.nodes[].advertised_addresses', itemsMax: 16, doc: 'At most 16 selectors per node.' },
];

const DURATION_NONZERO = { kind: 'duration', nonzero: true } as const;

export const KEYS: readonly KeySpec[] = [
  // ── [system] ────────────────────────────────────────────────────────────────────────────
  { path: 'system.path', kind: 'string', default: 'local_data', nonempty: true,
    doc: 'Base directory for all node data. Everything below is relative to it.' },
  { path: 'system.runtime.path', kind: 'string', default: 'runtime', nonempty: true,
    doc: 'Runtime directory, relative to `system.path`.' },
  { path: 'system.logging.path', kind: 'string', default: 'logs', nonempty: true,
    doc: 'Log directory, relative to `system.path`.' },
  { path: 'system.logging.level', kind: 'string', default: 'info', nonempty: true,
    doc: 'A level (`trace`, `debug`, `info`, `warn`, `error`, `off`) or directives in `RUST_LOG` syntax, e.g. `"warn,consensus=debug"`.' },
  { path: 'system.logging.file_enabled', kind: 'bool', default: true,
    doc: 'Write logs to files under the log directory as well as stdout.' },
  { path: 'system.logging.max_file_size', kind: 'size', default: '500 MB',
    doc: 'Size at which a log file rotates. `0` means one unbounded file.' },
  { path: 'system.logging.max_total_size', kind: 'size', default: '4 GB',
    doc: 'Total log budget; oldest files go first. `0` means unlimited.' },
  { path: 'system.logging.rotation_check_interval', ...DURATION_NONZERO, default: '1 h',
    doc: 'How often rotation status is checked.' },
  { path: 'system.logging.retention', ...DURATION_NONZERO, default: '7 days', notTimer: true,
    doc: 'How long log files are kept.' },
  { path: 'system.stream.path', kind: 'string', default: 'streams', nonempty: true,
    doc: 'Stream directory, relative to `system.path`.' },
  { path: 'system.topic.path', kind: 'string', default: 'topics', nonempty: true,
    doc: 'Topic directory, relative to a stream directory.' },
  { path: 'system.partition.path', kind: 'string', default: 'partitions', nonempty: true,
    doc: 'Partition directory, relative to a topic directory.' },
  { path: 'system.partition.validate_checksum', kind: 'bool', default: true,
    doc: 'Re-hash every batch a disk read returns and fail the read on a mismatch.' },
  { path: 'system.segment.archive_expired', kind: 'bool', default: false,
    doc: 'Unsupported placeholder (as in the reference). `true` refuses boot.' },
  { path: 'system.recovery.recreate_missing_state', kind: 'bool', default: false,
    doc: 'Unsupported placeholder (as in the reference). `true` refuses boot.' },

  // ── [system.sharding] ───────────────────────────────────────────────────────────────────
  { path: 'system.sharding.cpu_allocation', kind: 'cpu_allocation',
    doc: 'Shard count as in the reference: `"all"` (one shard per available core), a number (`4`), a range (`"5..8"` = 3 shards). `"numa:auto"` is read as `"all"`; other `numa:` forms are refused. Unset: one shard per available core.',
    rules: ['Set at most one of `shards` and `cpu_allocation`.', `Resolves to 1..=${SHARDS_MAX} shards.`] },
  { path: 'system.sharding.shards', kind: 'uint', min: 1, max: SHARDS_MAX, shoal: true,
    doc: 'Shard worker count, the plain way. Unset: `cpu_allocation` decides.' },
  { path: 'system.sharding.pin_cores', kind: 'bool', default: false,
    doc: 'Accepted for reference compatibility (reference default `true`). Node cannot pin worker threads to cores, so `true` only logs a warning.' },
  { path: 'system.sharding.inbox_capacity', kind: 'uint', default: 1024, min: 1, max: 2 ** 20, pow2: true,
    doc: 'Per-shard consensus inbox, in frames. Shoal: a power of two (it sizes a ring).' },
  { path: 'system.sharding.reply_inbox_capacity', kind: 'uint', default: 1024, min: 1, max: 2 ** 20, pow2: true,
    doc: 'Per-shard client-reply lane, in frames. Shoal: a power of two (it sizes a ring).' },
  { path: 'system.sharding.ring_size', kind: 'size', default: '8 MiB', min: 64 * KiB, max: GiB, pow2: true, shoal: true,
    doc: 'Data bytes of each SharedArrayBuffer ring between two threads.' },
  { path: 'system.sharding.start_timeout', ...DURATION_NONZERO, default: '5 m', max: 3600 * SECOND, shoal: true,
    doc: 'How long every worker has to report ready at boot (recovery of a large data directory included); a late worker is a failed start (exit 31). Only the start is bounded: the timer is cleared once every worker serves.' },
  { path: 'system.sharding.shutdown_drain_timeout', ...DURATION_NONZERO, default: '10 s', max: 600 * SECOND,
    doc: 'Per-shard bus drain budget on shutdown.' },
  { path: 'system.sharding.shutdown_poll_interval', ...DURATION_NONZERO, default: '50 ms', max: 5 * SECOND,
    doc: 'Poll cadence for the shutdown flag.',
    rules: ['`shutdown_poll_interval` <= `shutdown_drain_timeout`.'] },
  { path: 'system.sharding.shutdown_join_timeout', ...DURATION_NONZERO, default: '30 s', max: 900 * SECOND,
    doc: 'Hard deadline for joining shard threads at exit.',
    rules: ['`shutdown_join_timeout` >= `shutdown_drain_timeout`.'] },
  { path: 'system.sharding.reconcile_periodic_interval', ...DURATION_NONZERO, default: '1 s', max: 30 * SECOND,
    doc: 'Safety tick of the partition reconciliation loop.' },

  // ── [tcp] ───────────────────────────────────────────────────────────────────────────────
  { path: 'tcp.enabled', kind: 'bool', default: true, doc: 'Serve the binary protocol over TCP.' },
  { path: 'tcp.address', kind: 'address', default: '127.0.0.1:8090',
    doc: 'Bind address. In cluster mode only the host part is used; the port comes from the roster (`ports.tcp`). Port 0 (single node) binds an ephemeral port.' },
  { path: 'tcp.connections_max', kind: 'uint', default: 4096, min: 1, max: 65536, shoal: true,
    doc: 'Open client connections per node; further accepts are closed at once.' },
  { path: 'tcp.frame_size_max', kind: 'size', default: '64 MiB', min: HEADER_BYTES + 1, shoal: true,
    doc: 'Largest request frame (header + body) a client may send; a larger `size` closes the connection before the body is read.',
    rules: ['`tcp.frame_size_max` <= `message_bus.max_message_size`.'] },
  { path: 'tcp.requests_in_flight_max', kind: 'uint', default: 64, min: 1, max: 1024, shoal: true,
    doc: 'Requests read from one connection and not yet answered; beyond it the connection is not read (back-pressure).' },
  { path: 'tcp.idle_timeout', kind: 'duration', default: '0 s', shoal: true,
    doc: 'Close a connection that sends nothing for this long. `0` disables (the reference never closes idle connections; `[heartbeat]` releases stale consumer-group members instead).' },
  { path: 'tcp.frame_read_timeout', ...DURATION_NONZERO, default: '30 s', shoal: true,
    doc: 'A frame whose first byte has arrived must be complete within this time, or the connection is closed (slow-drip clients cannot pin a frame buffer).' },
  { path: 'tcp.write_buffer_bytes_max', kind: 'size', default: '8 MiB', min: 64 * KiB, max: GiB, shoal: true,
    doc: 'Unsent reply bytes per connection above which the connection is no longer read.' },
  { path: 'tcp.write_stall_timeout', ...DURATION_NONZERO, default: '30 s', shoal: true,
    doc: 'A connection with unsent replies that makes no write progress for this long is closed (slow readers cannot pin reply memory).' },

  // ── [tcp.tls] ───────────────────────────────────────────────────────────────────────────
  { path: 'tcp.tls.enabled', kind: 'bool', default: false,
    doc: 'Serve the client listener over TLS (1.2 or 1.3; no plaintext on that address).' },
  { path: 'tcp.tls.self_signed', kind: 'bool', default: true,
    doc: 'With no `cert_file` on disk, present a certificate the node generates (kept in `<system.path>/tls/client.crt`, for `localhost` and the listener address). Clients must be told to trust it; for production give a CA-issued pair.',
    rules: ['When `self_signed = true` and `cert_file` exists, the file is loaded (as in the reference).'] },
  { path: 'tcp.tls.cert_file', kind: 'string', default: '',
    doc: 'PEM certificate chain (server certificate first). Reference default: `core/certs/iggy_cert.pem`.',
    rules: ['Required (and must load) when TLS is on and `self_signed = false`.'] },
  { path: 'tcp.tls.key_file', kind: 'string', default: '',
    doc: 'PEM private key of the certificate.',
    rules: ['Required (and must load) when TLS is on and `self_signed = false`.'] },

  // ── [http] ──────────────────────────────────────────────────────────────────────────────
  { path: 'http.enabled', kind: 'bool', default: true, doc: 'Serve HTTP (metrics, probes, dashboard).' },
  { path: 'http.address', kind: 'address', default: '127.0.0.1:3000',
    doc: 'Bind address. In cluster mode only the host part is used; the port comes from the roster (`ports.http`).' },
  { path: 'http.max_request_size', kind: 'size', default: '2 MB', min: 1, max: 64 * MiB,
    doc: 'Largest HTTP request body.' },
  { path: 'http.metrics.enabled', kind: 'bool', default: true, doc: 'Expose Prometheus metrics (the probes and the dashboard stay on the port either way).' },
  { path: 'http.metrics.endpoint', kind: 'string', default: '/metrics', nonempty: true,
    doc: 'Metrics path.', rules: ['Must start with `/`.'] },
  { path: 'http.metrics.token', kind: 'string', default: '', secret: true, shoal: true,
    doc: 'A static bearer the metrics endpoint and the dashboard JSON (`/api/v1/*`) take besides any personal access token (for a node that cannot have one: a lone node of a cluster that never formed). Empty: personal access tokens only. Prefer the environment (`IGGY_HTTP_METRICS_TOKEN`) to a file.',
    rules: ['Empty, or 32 to 512 bytes.'] },

  // ── [heartbeat] ─────────────────────────────────────────────────────────────────────────
  { path: 'heartbeat.enabled', kind: 'bool', default: true, doc: 'Verify client heartbeats.' },
  { path: 'heartbeat.interval', ...DURATION_NONZERO, default: '30 s',
    doc: 'Expected heartbeat interval. A connection silent for 1.2 × `interval` that holds a consumer-group membership has its session released.' },

  // ── [personal_access_token] ─────────────────────────────────────────────────────────────
  { path: 'personal_access_token.max_tokens_per_user', kind: 'uint', default: 100, min: 1, max: 10_000,
    doc: 'Active tokens per user.' },
  { path: 'personal_access_token.cleaner.enabled', kind: 'bool', default: true,
    doc: 'Periodically remove expired tokens.' },
  { path: 'personal_access_token.cleaner.interval', ...DURATION_NONZERO, default: '1 m',
    doc: 'Cleaner run interval.' },

  // ── [consumer_group] ────────────────────────────────────────────────────────────────────
  { path: 'consumer_group.rebalancing_timeout', ...DURATION_NONZERO, default: '30 s',
    doc: 'Longest time a partition may stay pending revocation before it is force-transferred.' },

  // ── [message_bus] ───────────────────────────────────────────────────────────────────────
  { path: 'message_bus.max_batch', kind: 'uint', default: 256, min: 1, max: 512,
    doc: 'Frames coalesced into one vectored write.' },
  { path: 'message_bus.max_message_size', kind: 'size', default: '64 MiB', min: HEADER_BYTES + 1, max: U32_MAX,
    doc: 'Cap on one framed message, both planes.',
    rules: ['`partition.transfer_artifact_bytes_max` >= 1 GiB + `max_message_size`: raise both together.'] },
  { path: 'message_bus.peer_queue_capacity', kind: 'uint', default: 256, min: 2, max: 65536,
    doc: 'Per-peer send queue, in frames; overflow is dropped.',
    rules: ['`cluster.repair_chunk_max` < `peer_queue_capacity`.'] },
  { path: 'message_bus.reconnect_period', ...DURATION_NONZERO, default: '5 s', doc: 'Re-dial sweep to peers (safety net), and the cap of the re-dial backoff after a dropped link.' },
  { path: 'message_bus.close_peer_timeout', ...DURATION_NONZERO, default: '2 s', doc: 'Per-peer close drain budget.' },
  { path: 'message_bus.close_grace', ...DURATION_NONZERO, default: '2 s', doc: 'TLS stream close budget.' },
  { path: 'message_bus.handshake_grace', ...DURATION_NONZERO, default: '10 s',
    doc: 'Budget for TLS plus the replica handshake on one connection.' },

  // ── [metadata] ──────────────────────────────────────────────────────────────────────────
  { path: 'metadata.prepare_queue_depth', kind: 'uint', default: 32, min: 1, max: 127,
    doc: 'Uncommitted metadata ops in flight; the request queue holds 2 × this. At most 127 (a DoViewChange describes at most 128 entries).' },
  { path: 'metadata.journal_slots', kind: 'uint', default: 1024, max: 2 ** 20,
    doc: 'Metadata WAL index, in slots.',
    rules: ['`journal_slots` >= 4 × max(64, `metadata.prepare_queue_depth`).'] },
  { path: 'metadata.clients_table_max', kind: 'uint', default: 8192, min: 2, max: 65536,
    doc: 'Client-table slots (sessions with live state).' },

  // ── [partition] ─────────────────────────────────────────────────────────────────────────
  { path: 'partition.prepare_queue_depth', kind: 'uint', default: 32, min: 1, max: 127,
    doc: 'Uncommitted ops in flight per partition; requests beyond them wait in the primary\'s request queue (up to 4096 requests, 64 MiB).' },
  { path: 'partition.group_commit_requests_max', kind: 'uint', default: 64, min: 1, max: 4096, shoal: true,
    doc: 'Group commit: at most this many SendMessages requests queued for one partition are joined into one prepare when a slot frees (1 = off).' },
  { path: 'partition.group_commit_wait_depth', kind: 'uint', default: 4, min: 1, max: 127, shoal: true,
    doc: 'Group commit: while fewer than this many ops of a partition are uncommitted, a request is proposed at once (alone it adds no latency); from this depth on it waits in the request queue for the next commit and is joined with the requests queued behind it, unless its group is already full. Set it to `prepare_queue_depth` to join requests only behind a full pipeline.',
    rules: ['Above `prepare_queue_depth` it acts as `prepare_queue_depth`.'] },
  { path: 'partition.group_commit_bytes_max', kind: 'size', default: '1 MiB', min: 1, max: U32_MAX, shoal: true,
    doc: 'Group commit: at most this many request body bytes in one joined prepare.',
    rules: ['`group_commit_bytes_max` <= `message_bus.max_message_size` - 256 (a joined prepare must fit in one message).'] },
  { path: 'partition.async_frontier', kind: 'bool', default: true, shoal: true,
    doc: 'Each shard runs its partitions\' commit-frontier durability work (the segment and journal fdatasyncs and the superblock write every `messages_required_to_save` messages or its byte size) on a disk thread of its own, while the shard goes on serving; `false` runs it inline on the shard thread. Acknowledgements never wait for it either way (docs/storage-async-frontier.md).' },
  { path: 'partition.evicted_ring_capacity', kind: 'uint', default: 4096, min: 1, max: 65536,
    doc: 'Entries kept per multi-replica partition for journal repair after a peer rejoins.' },
  { path: 'partition.evicted_ring_bytes_max', kind: 'size', default: '16 MiB', max: 256 * MiB,
    doc: 'Byte ceiling of the evicted ring; whichever cap trips first evicts.' },
  { path: 'partition.transfer_served_cache_bytes_max', kind: 'size', default: '2176 MiB', max: 64 * GiB,
    doc: 'Per-shard budget of segment bytes kept resident to serve state transfer.' },
  { path: 'partition.transfer_artifact_bytes_max', kind: 'size', default: '1088 MiB', max: 64 * GiB,
    doc: 'Allocation ceiling for one received state-transfer artifact.',
    rules: ['>= 1 GiB + `message_bus.max_message_size`.'] },

  // ── [cluster] ───────────────────────────────────────────────────────────────────────────
  { path: 'cluster.enabled', kind: 'bool', default: false,
    doc: 'Cluster mode. Requires `--replica-id`.',
    rules: ['When enabled: `--replica-id` must match exactly one roster entry.', 'When disabled: `--replica-id` is absent or 0.'] },
  { path: 'cluster.name', kind: 'string', default: 'iggy-cluster', nonempty: true,
    doc: 'Permanent cluster identity, hashed into the cluster id of every superblock on first boot. Renaming against existing data refuses start.',
    rules: ['At most 255 bytes (Shoal).'] },
  { path: 'cluster.heartbeat_timeout', ...DURATION_NONZERO, default: '5 s',
    doc: 'Backup liveness window: no primary traffic for this long starts a view change.',
    rules: ['>= 2s and >= 4 × `commit_broadcast_interval`.'] },
  { path: 'cluster.forward_timeout', ...DURATION_NONZERO, default: '10 s',
    doc: 'How long a partition request carried to its primary on another node waits for the answer before the client is told 57 (outcome unknown). A request carried to a primary that a newer view replaced is answered 57 at once.',
    rules: ['>= 1s.'] },
  { path: 'cluster.commit_broadcast_interval', ...DURATION_NONZERO, default: '500 ms',
    doc: 'Commit heartbeat period of the primary (the liveness signal).' },
  { path: 'cluster.prepare_retransmit_interval', ...DURATION_NONZERO, default: '250 ms',
    doc: 'Base retransmit timer for unacknowledged prepares (backs off up to 16×).' },
  { path: 'cluster.view_change_retransmit_interval', ...DURATION_NONZERO, default: '500 ms',
    doc: 'StartViewChange / DoViewChange retransmit period.' },
  { path: 'cluster.view_change_status_timeout', ...DURATION_NONZERO, default: '5 s',
    doc: 'A view change that does not finish in this window escalates to a fresh election.',
    rules: ['>= 4 × `view_change_retransmit_interval`.'] },
  { path: 'cluster.request_start_view_retransmit_interval', ...DURATION_NONZERO, default: '1 s',
    doc: 'RequestStartView probe period of a recovering replica.' },
  { path: 'cluster.view_probe_attempts_max', kind: 'uint', default: 5, min: 1, max: 100,
    doc: 'Probe-timer fires before a recovering replica elects on its own log (the Nth fire elects).' },
  { path: 'cluster.repair_retry_interval', ...DURATION_NONZERO, default: '1 s',
    doc: 'Re-request period of a stalled repair or state-transfer stream.' },
  { path: 'cluster.repair_chunk_max', kind: 'uint', default: 128, min: 1, max: 1024,
    doc: 'Prepares served per repair round.',
    rules: ['< `message_bus.peer_queue_capacity`.'] },
  { path: 'cluster.superblock_wedged_fatal_timeout', kind: 'duration', default: '2 m', notTimer: true,
    doc: 'Exit when the metadata superblock stays unwritable this long, counted as `timeout / 1 s` consecutive failed writes. `0` disables.',
    rules: ['0, or >= 30s.'] },
  { path: 'cluster.auth.enabled', kind: 'bool', default: false, doc: 'Require the PSK replica handshake.',
    rules: ['Requires `shared_secret`.'] },
  { path: 'cluster.auth.shared_secret', kind: 'string', default: '', secret: true,
    doc: 'Pre-shared key, identical on every node. Prefer `IGGY_CLUSTER_AUTH_SHARED_SECRET`.',
    rules: ['When the cluster is enabled: empty, or at least 32 bytes (even with auth disabled).'] },
  { path: 'cluster.auth.previous_shared_secret', kind: 'string', default: '', secret: true,
    doc: 'Retiring key, accepted for verification only during a rotation. Empty outside a rotation.',
    rules: ['Empty, or at least 32 bytes and different from `shared_secret`.'] },
  { path: 'cluster.tls.enabled', kind: 'bool', default: false, doc: 'TLS 1.3 (ALPN `iggy-replica`) on the replica port.',
    rules: ['Requires `cluster.auth.enabled = true`.'] },
  { path: 'cluster.tls.self_signed', kind: 'bool', default: false,
    doc: 'Generate a certificate at boot; dialers accept any peer certificate (peer authenticity rests on the PSK).' },
  { path: 'cluster.tls.cert_file', kind: 'string', default: '', doc: 'PEM certificate.',
    rules: ['Required when TLS is on and `self_signed = false`.'] },
  { path: 'cluster.tls.key_file', kind: 'string', default: '', doc: 'PEM private key.',
    rules: ['Required when TLS is on and `self_signed = false`.'] },
  { path: 'cluster.tls.ca_file', kind: 'string', default: '', doc: 'PEM trust anchors for verifying peers.',
    rules: ['Required when TLS is on and `self_signed = false`.'] },
  { path: 'cluster.coordinator.skip_shard_zero_for_replicas', kind: 'bool', default: true,
    doc: 'Keep replica connections off shard 0 (ignored with one shard).' },
  { path: 'cluster.coordinator.skip_shard_zero_for_clients', kind: 'bool', default: false,
    doc: 'Keep client connections off shard 0 (ignored with one shard).' },

  // ── [[cluster.nodes]] ───────────────────────────────────────────────────────────────────
  { path: 'cluster.nodes[].name', kind: 'string', required: true, nonempty: true,
    doc: 'Node name.', rules: ['Unique within the roster.'] },
  { path: 'cluster.nodes[].ip', kind: 'string', required: true,
    doc: 'Roster address that peers dial (and the replica listener binds); the name TLS verifies.',
    rules: ['A literal IPv4 or IPv6 address (no hostnames).'] },
  { path: 'cluster.nodes[].advertised_address', kind: 'string',
    doc: 'Client-facing address handed out in cluster metadata. Unset: `ip`.',
    rules: ['A literal IP or an RFC 1123 hostname; no port, no trailing dot.'] },
  { path: 'cluster.nodes[].replica_id', kind: 'uint', required: true, max: 255,
    doc: 'VSR replica index, 0-based.',
    rules: ['Unique and < roster size (so contiguous from 0).'] },
  { path: 'cluster.nodes[].ports.tcp', kind: 'uint', min: 1, max: 65535,
    doc: 'Client TCP port.', rules: ['Required when `tcp.enabled`.'] },
  { path: 'cluster.nodes[].ports.quic', kind: 'uint', min: 1, max: 65535,
    doc: 'Accepted for roster compatibility; Shoal serves no QUIC.' },
  { path: 'cluster.nodes[].ports.http', kind: 'uint', min: 1, max: 65535,
    doc: 'HTTP port (metrics, probes, dashboard).', rules: ['Required when `http.enabled`.'] },
  { path: 'cluster.nodes[].ports.websocket', kind: 'uint', min: 1, max: 65535,
    doc: 'Accepted for roster compatibility; Shoal serves no WebSocket.' },
  { path: 'cluster.nodes[].ports.tcp_replica', kind: 'uint', required: true, min: 1, max: 65535,
    doc: 'Replica-plane port. Always required.',
    rules: ['No two roster ports may share one `ip:port`.'] },
  { path: 'cluster.nodes[].advertised_addresses[].client_cidr', kind: 'string', required: true,
    doc: 'Clients whose peer address is inside this CIDR get `address`; longest prefix wins.',
    rules: ['Unique per node (compared truncated to the prefix).'] },
  { path: 'cluster.nodes[].advertised_addresses[].address', kind: 'string', required: true,
    doc: 'Address handed to those clients (literal IP or hostname, no port).',
    rules: ['No two nodes may advertise one host:port to overlapping client sets.'] },

  // ── [root] ──────────────────────────────────────────────────────────────────────────────
  { path: 'root.username', kind: 'string', shoal: true,
    doc: 'Root username (env `IGGY_ROOT_USERNAME`, as in the reference). 3 to 50 characters. Unset (and no password): `iggy`.' },
  { path: 'root.password', kind: 'string', secret: true, shoal: true,
    doc: 'Root password (env `IGGY_ROOT_PASSWORD`). 3 to 100 characters. Unset: a single node creating its root user generates a random password and logs it once; a cluster refuses its first boot.',
    rules: ['Username and password are set together or not at all (`--with-default-root-credentials` fills a missing one with `iggy`).'] },
];

// ── Lookups ──────────────────────────────────────────────────────────────────────────────

export const KEY_BY_PATH: ReadonlyMap<string, KeySpec> = new Map(KEYS.map((key) => [key.path, key]));
export const TABLE_ARRAY_BY_PATH: ReadonlyMap<string, TableArraySpec> = new Map(
  TABLE_ARRAYS.map((array) => [array.path, array]),
);

/** Every table path that can hold keys (`system`, `cluster.nodes[].ports`, ...). */
export const TABLE_PATHS: ReadonlySet<string> = collectTablePaths();

/** Turns a concrete path (`cluster.nodes[2].ports.tcp`) into its schema path (`cluster.nodes[].ports.tcp`). */
export function schemaPathOf(concretePath: string): string {
  return concretePath.replace(/\[\d+\]/g, '[]');
}

/** `cluster.nodes[].ports.tcp_replica` → `CLUSTER_NODES_<i>_PORTS_TCP_REPLICA` (documentation form). */
export function envNameOf(schemaPath: string): string {
  let index = 0;
  const indexNames = ['<i>', '<j>', '<k>'];
  return schemaPath
    .replace(/\[\]/g, () => `.${indexNames[index++] ?? '<n>'}`)
    .split('.')
    .map((part) => (part.startsWith('<') ? part : part.toUpperCase()))
    .join('_');
}

/** Whether a key is Shoal-specific (docs). */
export function isShoalKey(schemaPath: string): boolean {
  return KEY_BY_PATH.get(schemaPath)?.shoal === true;
}

function collectTablePaths(): Set<string> {
  const tables = new Set<string>();
  for (const key of KEYS) {
    const parts = key.path.split('.');
    for (let end = 1; end < parts.length; end += 1) tables.add(parts.slice(0, end).join('.'));
  }
  return tables;
}
