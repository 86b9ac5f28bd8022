/**
 * The gateway's view of one client connection: what it reads and what it may do to it. The
 * runtime's socket connection (runtime/src/client-plane/connection.ts) implements it over TCP;
 * `MemoryConnection` (memory-connection.ts) implements it in memory for the simulator and tests.
 *
 * The gateway never owns the transport: it answers with `send`, ends a connection with `close`,
 * and paces a connection's reads with the barrier (`hold` / `release`, a login or logout in
 * progress) and the in-flight count (`inFlight`, `requestDone`).
 */

/** The session a login bound to this connection. */
export interface BoundSession {
  readonly client: bigint;
  readonly userId: number;
  readonly epoch: bigint;
}

export interface GatewayConnection {
  /** Names the connection in routed requests; their replies come back by it. */
  readonly token: number;
  /** The u32 id GetClient addresses (node-unique). */
  readonly clientId: number;
  /** `host:port` of the peer (GetMe, the advertised-address selection). */
  readonly address: string;
  readonly closed: boolean;
  /** When the connection last sent bytes (the `[heartbeat]` stale sweep). */
  readonly lastActivityMs: number;
  session: BoundSession | null;
  /** Requests read and not yet answered. */
  inFlight: number;
  /** Round-robin over a consumer group member's partitions when it polls without a partition id. */
  groupCounter: number;
  /** The command code of the frame being handled (request latency by command). */
  command: number;
  /** Writes a whole frame (the gateway never changes it afterwards). */
  send(frame: Uint8Array): void;
  /**
   * Writes a frame given as parts (header, then body pieces), which must stay unchanged until
   * `written` runs: once the transport no longer references them (written, copied, or dropped
   * on a closed connection). It runs exactly once when given.
   */
  sendParts(parts: readonly Uint8Array[], written?: () => void): void;
  /** Ends the connection at once (a stream error: no reply can be framed). */
  close(reason: string): void;
  /** A login/logout in progress: later frames wait until `release()`. */
  hold(): void;
  release(): void;
  /** One routed request finished (answered or not): free its in-flight slot. */
  requestDone(): void;
  /** The read-your-writes fence of `group` (0: no write of this connection to wait for). */
  ackedOp(group: bigint): bigint;
  /** A committed reply for `group` at `op` reached this connection. */
  noteAcked(group: bigint, op: bigint): void;
}
