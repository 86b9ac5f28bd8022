/**
 * A simulated node's client plane: the PRODUCTION client gateway (@shoal/gateway) behind one
 * MemoryConnection per simulated client, routing to this node's own drivers, as a shard worker
 * routes to its metadata worker and partition owners (docs/gateway.md):
 *
 * ```
 *  client frame ─▶ MemoryConnection(endpoint).push ─▶ Gateway.onFrame ─┬ answered by the gateway
 *                                                                     ├ session_submit ─▶ MetadataDriver.submitSession
 *                                                                     ├ METADATA_GROUP ─▶ MetadataHost.submitRequest
 *                                                                     └ a partition    ─▶ PartitionDriver.onRequest
 *  driver reply (by request token) ─▶ the ledger: echo operation + timestamp ─▶ Gateway.reply ─▶ the client
 *  session result (by connection token) ─▶ Gateway.onSessionResult
 * ```
 *
 * The owner side is the simulator's own (the runtime's metadata worker and partition host are
 * thread plumbing): each routed request gets a request token in `#ledger`, as the runtime's
 * RequestLedger records one, and its reply is matched back by it. A request the drivers never
 * answer (dropped by a view change, a fatal driver) frees its connection slot after
 * `UNANSWERED_TICKS` with no frame, as a runtime owner answers `null`; the client times out on
 * its own. Everything here is synchronous and ordered: the run stays deterministic.
 */
import { type ClientRequest, type ClientToken, METADATA_GROUP_ID } from '@shoal/consensus';
import {
  Gateway, type GatewayMessage, MemoryConnection, RequestRoute, type ReplyContext, type SessionSubmitMessage, TRANSPORT_TCP, codeReply,
} from '@shoal/gateway';
import { ErrorCode, RequestHeaderView } from '@shoal/protocol';
import { INTERNAL_TOKEN, type MetadataDriver, type MetadataHost, type PartitionDriver, type SessionResult, echoReply } from '@shoal/replica';
import type { ClientSession, HostStats } from '@shoal/state';

/** What the gateway of one node reaches. */
export interface NodeGatewayPorts {
  readonly index: number;
  readonly cluster: bigint;
  readonly metadata: MetadataDriver;
  readonly host: MetadataHost;
  partition(group: bigint): PartitionDriver | null;
  /** To a client endpoint (over the simulated network). */
  send(endpoint: number, frame: Uint8Array): void;
  now(): number;
  realtimeMicros(): bigint;
}

/** A routed request waiting for its owner's reply. */
interface Routed {
  readonly connection: number;
  readonly group: bigint;
  readonly client: bigint;
  readonly echo: RequestHeaderView;
  readonly since: number;
}

/** The runtime's default `tcp.requests_in_flight_max`. */
const REQUESTS_IN_FLIGHT_MAX = 64;
/** A routed request unanswered this long frees its connection slot (the client timed out long before). */
const UNANSWERED_TICKS = 600;
/** Request tokens live above every connection token, so a driver's reply never names a connection. */
const REQUEST_TOKEN_BASE = 2 ** 32;
/** Simulated time: one tick is 10 ms. */
const MS_PER_TICK = 10;
/** Stand-in for the runtime's scrypt pool (the simulated root user's hash is `sim$` + password). */
export function fakeHash(password: string): string {
  return `sim$${password}`;
}

export class NodeGateway {
  readonly gateway: Gateway;
  readonly #ports: NodeGatewayPorts;
  readonly #byEndpoint = new Map<number, MemoryConnection>();
  readonly #byToken = new Map<number, MemoryConnection>();
  readonly #ledger = new Map<number, Routed>();
  /** Users of submitted sessions, by connection token (a result the gateway no longer waits for needs it). */
  readonly #sessionUsers = new Map<number, number>();
  #nextConnection = 1;
  #nextRequest = REQUEST_TOKEN_BASE;

  constructor(ports: NodeGatewayPorts) {
    this.#ports = ports;
    const role = (): MetadataDriver['replica']['role'] => ports.metadata.replica.role;
    const reply: ReplyContext = { cluster: ports.cluster, replica: ports.index, view: () => role().view, commit: () => BigInt(role().commitMax) };
    this.gateway = new Gateway({
      metadata: {
        ready: true,
        get state() { return ports.metadata.state; },
        get appliedOp() { return BigInt(role().commitMin); },
      },
      facts: {
        counters: () => null,
        sessions: () => this.#sessions(),
        stats: () => SIM_STATS,
        cluster: () => ({ name: 'vopr', nodes: [] }),
        clustered: false,
        clusterGroups: () => ({ metadataView: role().view, metadataPrimary: role().primaryIndex, nodeReplicaIds: [], topics: [] }),
      },
      reply,
      h32: () => 0,
      nowMicros: () => ports.realtimeMicros(),
      output: {
        route: (message) => this.#route(message, reply),
        verifyPassword: (connection, password, hash) => this.gateway.passwordVerified(connection, hash === fakeHash(password)),
        sessionChanged: () => undefined,
        connectionOf: (token) => this.#byToken.get(token) ?? null,
      },
    });
  }

  /** A client frame from `endpoint`: onto its connection (opened at its first frame). */
  deliver(endpoint: number, frame: Uint8Array): void {
    let connection = this.#byEndpoint.get(endpoint);
    if (connection === undefined) {
      connection = this.#open(endpoint);
      this.#byEndpoint.set(endpoint, connection);
      this.#byToken.set(connection.token, connection);
    }
    connection.push(frame);
  }

  /** The drivers' `sendToClient`: a reply for a routed request, by its request token. */
  toClient(client: bigint, token: ClientToken | null, frame: Uint8Array): void {
    if (token === null || token === INTERNAL_TOKEN) return;
    const routed = this.#ledger.get(token);
    if (routed === undefined || routed.client !== client) return;
    this.#ledger.delete(token);
    this.#answer(routed, echoReply(frame, routed.echo));
  }

  sessionResult(result: SessionResult): void {
    if (result.token === INTERNAL_TOKEN) return;
    const userId = this.#sessionUsers.get(result.token) ?? 0;
    this.#sessionUsers.delete(result.token);
    this.gateway.onSessionResult({ kind: 'session_result', ...result, userId });
  }

  /** Frees the slots of requests no driver answered (oldest first: the ledger is in routing order). */
  tick(): void {
    const now = this.#ports.now();
    for (const [token, routed] of this.#ledger) {
      if (now - routed.since < UNANSWERED_TICKS) break;
      this.#ledger.delete(token);
      this.#answer(routed, null);
    }
  }

  #open(endpoint: number): MemoryConnection {
    const token = this.#nextConnection++;
    return new MemoryConnection({
      token, clientId: token, address: `client-${endpoint}:0`, inFlightMax: REQUESTS_IN_FLIGHT_MAX,
      onFrame: (connection, frame) => this.gateway.onFrame(connection, frame),
      send: (frame) => this.#ports.send(endpoint, frame),
      onClose: (connection) => {
        this.#byEndpoint.delete(endpoint);
        this.#byToken.delete(connection.token);
        this.gateway.disconnected(connection);
      },
      nowMs: () => this.#ports.now() * MS_PER_TICK,
    });
  }

  #answer(routed: Routed, frame: Uint8Array | null): void {
    const connection = this.#byToken.get(routed.connection);
    if (connection !== undefined) this.gateway.reply(connection, routed.group, frame, true);
  }

  #route(message: GatewayMessage, reply: ReplyContext): void {
    const ports = this.#ports;
    if (message.kind === 'session_submit') return this.#submitSession(message);
    const echo = new RequestHeaderView(message.header.slice());
    const token = this.#nextRequest++;
    const routed: Routed = { connection: message.token, group: message.group, client: echo.client, echo, since: ports.now() };
    this.#ledger.set(token, routed);
    const request: ClientRequest = {
      client: echo.client, request: echo.request, session: echo.session, requestChecksum: echo.requestChecksum, operation: echo.operation,
      body: message.body, userId: message.userId, timestamp: echo.timestamp, token,
    };
    const refuse = (code: number): void => {
      this.#ledger.delete(token);
      this.#answer(routed, codeReply(reply, echo, code));
    };
    if (message.group === METADATA_GROUP_ID) {
      const check = ports.metadata.checkRequest(request);
      // The core answers nothing to these client bugs (§7.3): the slot is released, as the runtime's metadata worker does.
      if (check === 'epoch_ahead' || check === 'checksum_mismatch') {
        this.#ledger.delete(token);
        return this.#answer(routed, null);
      }
      return ports.host.submitRequest(request);
    }
    // The simulated workload polls nothing and writes offsets with Quorum ack: only submissions reach a partition here.
    if (message.route !== RequestRoute.submit) return refuse(ErrorCode.FeatureUnavailable);
    const driver = ports.partition(message.group);
    if (driver === null) return refuse(ErrorCode.TransientNotCommitted);
    // 'dropped': the core could not take it at all (nothing happened): 57 at once, as the runtime's partition host answers.
    if (driver.onRequest(request) === 'dropped') refuse(ErrorCode.TransientNotCommitted);
  }

  #submitSession(message: SessionSubmitMessage): void {
    if (message.token !== 0) this.#sessionUsers.set(message.token, message.userId);
    this.#ports.metadata.submitSession({
      session: message.session, client: message.client, userId: message.userId, epoch: message.epoch, request: message.request, token: message.token,
    });
  }

  #sessions(): ClientSession[] {
    const out: ClientSession[] = [];
    for (const connection of this.#byToken.values()) {
      const s = connection.session;
      if (s !== null) out.push({ clientId: connection.clientId, vsrClient: s.client, userId: s.userId, transport: TRANSPORT_TCP, address: connection.address });
    }
    return out;
  }
}

/** GetStats of a simulated node: no process to measure. */
const SIM_STATS: HostStats = {
  processId: 0, cpuUsage: 0, totalCpuUsage: 0, memoryUsage: 0n, totalMemory: 0n, availableMemory: 0n, runTime: 0n, startTime: 0n,
  readBytes: 0n, writtenBytes: 0n, clientsCount: 0, hostname: 'vopr', osName: 'vopr', osVersion: '0', kernelVersion: '0',
  iggyServerVersion: 'sim', iggyServerSemver: 0, cacheMetrics: [], threadsCount: 1, freeDiskSpace: 0n, totalDiskSpace: 0n,
};
