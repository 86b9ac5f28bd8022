/**
 * The client gateway of a node: every request frame of a client connection is checked and either
 * answered here or routed to the owner of its group; replies come back by the connection.
 *
 * ```
 *  frame ─▶ RequestHeader decodes? ── no ──▶ close (not a request) / Eviction 5
 *          │ validateClientRequestHeader ── operation problems ──▶ Eviction 4; client 0 ──▶ close
 *          │ legacy login 38 / 44 ─────────────────────────────────▶ Eviction 15 MalformedLogin
 *          │ Register (1) ─────────────────────────────────────────▶ sessions.ts (login)
 *          │ PING ─────────────────────────────────────────────────▶ reply (also before login)
 *          │ not logged in ────────────────────────────────────────▶ status 40 Unauthenticated
 *          │ client ≠ the session's ───────────────────────────────▶ Eviction 1 NoSession
 *          │ partition / read op with an old session epoch ────────▶ Eviction 7 SessionTooLow
 *          ├ Logout (3) ───────────────────────────────────────────▶ sessions.ts
 *          ├ NonReplicated: Poll / GetConsumerOffset ──────────────▶ partition owner (partition-requests.ts)
 *          │                every other read ──────────────────────▶ answered here from the metadata view
 *          ├ metadata op 128..149 (138 via the partition owner) ───▶ metadata owner
 *          └ SendMessages, consumer-offset writes ─────────────────▶ partition owner
 * ```
 *
 * The metadata plane's fencing (NoSession / SessionTooLow / duplicates, §7.3) is the consensus
 * core's, on the metadata owner; the gateway fences partition and read requests against the
 * epoch its own login bound, since those planes have no client table.
 *
 * Transport-free: the runtime's shard worker runs it behind its sockets (client-plane.ts), the
 * simulator's nodes run it behind simulated connections (docs/gateway.md).
 */
import {
  ByteWriter, COMMANDS, COMMAND_OFFSET, ClientCommand, CommandCode, METADATA_GROUP, REPLY_HEADER, ErrorCode, EvictionReason, FRAME_HEADER_SIZE, Operation, RequestHeaderView, writeClusterGroups,
  commandForOperation, decodeRequestHeader, isMetadataPlane, registerCodeOfBody, validateClientRequestHeader, xxh3_64,
} from '@shoal/protocol';
import { answerRead, type ClientSession, type ReadHost } from '@shoal/state';
import type { GatewayConnection } from './connection.js';
import type { GatewayContext } from './context.js';
import type { SessionResultMessage } from './messages.js';
import { PartitionRequests } from './partition-requests.js';
import { eviction, payloadReply, statusReply } from './replies.js';
import { type PasswordVerdict, SessionFlows } from './sessions.js';

export interface GatewayCounters {
  /** Requests received, by command code. */
  readonly requests: Map<number, number>;
  evictions: number;
}

/** GetClients' transport of a connection: Shoal serves TCP only (the simulator's connections stand in for it). */
export const TRANSPORT_TCP = 1;

const OPERATION_PROBLEMS = new Set(['operation_undeclared', 'operation_reserved', 'operation_not_client_admissible', 'non_replicated_code_unknown']);
const CLOSE_PROBLEMS = new Set(['command_not_request', 'client_zero', 'size_below_header', 'truncated_header']);

export class Gateway {
  readonly counters: GatewayCounters = { requests: new Map(), evictions: 0 };
  readonly #ctx: GatewayContext;
  readonly #sessions: SessionFlows;
  readonly #partitions: PartitionRequests;
  readonly #readHost: Omit<ReadHost, 'me'>;

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
    this.#sessions = new SessionFlows(ctx);
    this.#partitions = new PartitionRequests(ctx);
    this.#readHost = {
      counters: ctx.facts.counters,
      sessions: () => ctx.facts.sessions(),
      stats: () => ctx.facts.stats(),
      cluster: (me) => ctx.facts.cluster(me?.address),
    };
  }

  /** Login and logout operations waiting for the metadata owner's result. */
  get pendingSessions(): number {
    return this.#sessions.pendingCount;
  }

  /** One whole request frame of a client connection (a view valid until this call returns). */
  onFrame(connection: GatewayConnection, frame: Uint8Array): void {
    const ctx = this.#ctx;
    const decoded = decodeRequestHeader(frame);
    if (!decoded.ok) {
      if (CLOSE_PROBLEMS.has(decoded.reason)) return connection.close(`request_${decoded.reason}`);
      return this.#evict(connection, new RequestHeaderView(frame).client, EvictionReason.InvalidRequestBody);
    }
    const h = decoded.value;
    const problem = validateClientRequestHeader(h);
    const code = h.operation === Operation.NonReplicated ? h.nonReplicatedCode
      : h.operation === Operation.Register ? registerCode(frame)
        : (commandForOperation(h.operation)?.code ?? 0);
    this.#count(code);
    connection.command = code;
    if (problem !== null && problem !== 'session_zero' && problem !== 'request_zero') {
      if (CLOSE_PROBLEMS.has(problem)) return connection.close(`request_${problem}`);
      if (OPERATION_PROBLEMS.has(problem)) return this.#evict(connection, h.client, EvictionReason.InvalidRequestOperation);
      return this.#evict(connection, h.client, EvictionReason.InvalidRequestBody);
    }
    // A stamped request_checksum must be XXH3-64 of the body, widened (the reference's
    // verify_request_checksum, server wire.rs): otherwise status 4 InvalidFormat, nothing else runs.
    if (h.requestChecksum !== 0n && xxh3_64(frame.subarray(FRAME_HEADER_SIZE)) !== h.requestChecksum) {
      return connection.send(statusReply(ctx.reply, new RequestHeaderView(frame), ErrorCode.InvalidFormat));
    }
    if (h.operation === Operation.NonReplicated && (code === CommandCode.LoginUser || code === CommandCode.LoginWithPersonalAccessToken)) {
      return this.#evict(connection, h.client, EvictionReason.MalformedLogin);
    }
    if (h.operation === Operation.Register) return this.#sessions.register(connection, frame);
    const header = new RequestHeaderView(frame);
    // The reference reads no Ping body (requests/system/ping.rs): any body is ignored.
    if (code === CommandCode.Ping) return connection.send(statusReply(ctx.reply, header, 0));
    const session = connection.session;
    if (session === null || !ctx.metadata.ready) return connection.send(statusReply(ctx.reply, header, ErrorCode.Unauthenticated));
    if (h.client !== session.client) return this.#evict(connection, h.client, EvictionReason.NoSession);
    if (problem !== null) return this.#evict(connection, h.client, h.session === 0n ? EvictionReason.SessionTooLow : EvictionReason.InvalidRequestBody);
    if (!isMetadataPlane(h.operation) && h.operation !== Operation.DeleteSegments && h.session !== session.epoch) {
      if (h.session < session.epoch) return this.#evict(connection, h.client, EvictionReason.SessionTooLow);
      return; // EpochAhead: a client bug; nothing is answered (§7.3)
    }
    switch (h.operation) {
      case Operation.Logout:
        return this.#sessions.logout(connection, frame);
      case Operation.NonReplicated:
        return this.#read(connection, frame, code, session.userId, session.client);
      case Operation.SendMessages:
        return this.#partitions.sendMessages(connection, frame, session.userId);
      case Operation.StoreConsumerOffset:
      case Operation.DeleteConsumerOffset:
        return this.#partitions.offsetWrite(connection, frame, h.operation, session.userId, session.client);
      case Operation.DeleteSegments:
        return this.#partitions.deleteSegments(connection, frame, session.userId);
      default:
        return this.#partitions.metadataWrite(connection, frame, session.userId);
    }
  }

  /** The transport is gone: a bound session is logged out. */
  disconnected(connection: GatewayConnection): void {
    this.#sessions.disconnected(connection);
  }

  /** A reply from a group owner for a request `connection` routed (null: it ended unanswered). */
  reply(connection: GatewayConnection, group: bigint, frame: Uint8Array | null, completes: boolean): void {
    if (frame !== null) {
      noteCommittedReply(connection, group, frame);
      connection.send(frame);
    }
    if (completes) connection.requestDone();
  }

  /** A reply given as parts (a poll: header, prefix, batch views); it completes its request. */
  replyParts(connection: GatewayConnection, parts: readonly Uint8Array[], written?: () => void): void {
    connection.sendParts(parts, written);
    connection.requestDone();
  }

  /** The host's verdict on a password check it was asked for (GatewayOutput.verifyPassword). */
  passwordVerified(connection: GatewayConnection, verdict: PasswordVerdict): void {
    this.#sessions.passwordVerified(connection, verdict);
  }

  onSessionResult(message: SessionResultMessage): void {
    this.#sessions.onResult(message);
  }

  /** `[heartbeat]`: releases silent consumer-group members among `connections`. */
  sweepStale(connections: Iterable<GatewayConnection>, nowMs: number, staleAfterMs: number): void {
    for (const connection of connections) {
      if (this.#sessions.releaseIfStale(connection, nowMs, staleAfterMs)) this.counters.evictions += 1;
    }
  }

  requestCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [code, count] of this.counters.requests) {
      out[COMMANDS.find((c) => c.code === code)?.snake ?? `code_${code}`] = count;
    }
    return out;
  }

  #read(connection: GatewayConnection, frame: Uint8Array, code: number, userId: number, client: bigint): void {
    const ctx = this.#ctx;
    if (code === CommandCode.PollMessages) return this.#partitions.poll(connection, frame, userId, client);
    if (code === CommandCode.GetConsumerOffset) return this.#partitions.getOffset(connection, frame, userId, client);
    const me: ClientSession = { clientId: connection.clientId, vsrClient: client, userId, transport: TRANSPORT_TCP, address: connection.address };
    const outcome = answerRead(ctx.metadata.state, {
      code, body: frame.subarray(FRAME_HEADER_SIZE), userId, client, host: { ...this.#readHost, me },
    });
    const header = new RequestHeaderView(frame);
    if (!outcome.ok) return connection.send(statusReply(ctx.reply, header, outcome.code));
    const payload = code === CommandCode.GetClusterMetadata && ctx.facts.clustered ? this.#withGroups(outcome.payload) : outcome.payload;
    connection.send(payloadReply(ctx.reply, header, payload));
  }

  /** GetClusterMetadata in a cluster: the standard payload, then Shoal's per-group primaries. */
  #withGroups(standard: Uint8Array): Uint8Array {
    const w = new ByteWriter(standard.length + 1024);
    w.bytes(standard);
    writeClusterGroups(w, this.#ctx.facts.clusterGroups(this.#ctx.metadata.state));
    return w.finish();
  }

  #evict(connection: GatewayConnection, client: bigint, reason: EvictionReason): void {
    this.counters.evictions += 1;
    connection.send(eviction(this.#ctx.reply, client, reason));
    if (connection.session?.client === client) {
      connection.session = null;
      this.#ctx.output.sessionChanged(connection);
    }
  }

  #count(code: number): void {
    this.counters.requests.set(code, (this.counters.requests.get(code) ?? 0) + 1);
  }
}

/**
 * Read-your-writes: a committed reply (a Reply frame with its op set) for a partition group
 * advances the connection's fence for that group, which its later polls carry.
 */
function noteCommittedReply(connection: GatewayConnection, group: bigint, frame: Uint8Array): void {
  if (group === METADATA_GROUP || frame.length < FRAME_HEADER_SIZE || frame[COMMAND_OFFSET] !== ClientCommand.Reply) return;
  const op = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(REPLY_OP_AT, true);
  if (op > 0n) connection.noteAcked(group, op);
}

const REPLY_OP_AT = REPLY_HEADER.op.offset;

/** 40 or 45 for a Register body (40 when undecodable: it is counted as a login either way). */
function registerCode(frame: Uint8Array): number {
  const code = registerCodeOfBody(frame.subarray(FRAME_HEADER_SIZE));
  return code.ok ? code.value : CommandCode.LoginRegister;
}
