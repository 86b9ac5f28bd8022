/**
 * The client plane of one shard: every request frame of its connections is checked and either
 * answered here or sent to the thread that owns its group; replies come back by token.
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
 *          │                every other read ──────────────────────▶ answered here from the metadata copy
 *          ├ metadata op 128..149 (138 via the partition owner) ───▶ metadata worker
 *          └ SendMessages, consumer-offset writes ─────────────────▶ partition owner
 * ```
 *
 * The metadata plane's fencing (NoSession / SessionTooLow / duplicates, §7.3) is the consensus
 * core's, on the metadata worker; the shard fences partition and read requests against the epoch
 * its own login bound, since those planes have no client table.
 */
import {
  ByteWriter, COMMANDS, COMMAND_OFFSET, ClientCommand, CommandCode, METADATA_GROUP, REPLY_HEADER, ErrorCode, EvictionReason, FRAME_HEADER_SIZE, Operation, RequestHeaderView, writeClusterGroups,
  commandForOperation, decodeRequestHeader, isMetadataPlane, registerCodeOfBody, validateClientRequestHeader, xxh3_64,
} from '@shoal/protocol';
import { answerRead, type ClientSession, type ReadHost } from '@shoal/state';
import { concatBytes } from '@shoal/stdx';
import type { ReplyMessage, SessionResultMessage } from '../channels/messages.js';
import { isChannelHello } from '../forwarding/handshake.js';
import type { ClientConnection, ConnectionHandler } from './connection.js';
import { partitionCounters, sessionsOf } from './node-facts.js';
import { PartitionRequests } from './partition-requests.js';
import type { PlaneContext } from './plane-context.js';
import { eviction, payloadReply, statusReply } from './replies.js';
import { SessionFlows } from './sessions.js';
import { isForwardToken } from './token.js';

export interface ClientPlaneCounters {
  /** Requests received, by command code. */
  readonly requests: Map<number, number>;
  evictions: number;
}

const OPERATION_PROBLEMS = new Set(['operation_undeclared', 'operation_reserved', 'operation_not_client_admissible', 'non_replicated_code_unknown']);
const CLOSE_PROBLEMS = new Set(['command_not_request', 'client_zero', 'size_below_header', 'truncated_header']);

export class ClientPlane implements ConnectionHandler {
  readonly counters: ClientPlaneCounters = { requests: new Map(), evictions: 0 };
  readonly holdReads: () => boolean;
  readonly #ctx: PlaneContext;
  readonly #sessions: SessionFlows;
  readonly #partitions: PartitionRequests;
  readonly #readHost: ReadHost;

  constructor(ctx: PlaneContext, holdReads: () => boolean) {
    this.#ctx = ctx;
    this.holdReads = holdReads;
    this.#sessions = new SessionFlows(ctx);
    this.#partitions = new PartitionRequests(ctx);
    this.#readHost = {
      counters: partitionCounters(ctx.status),
      sessions: () => sessionsOf(ctx.status),
      stats: () => ctx.facts.stats(),
      cluster: (me) => ctx.facts.cluster(me?.address),
    };
  }

  onFrame(connection: ClientConnection, frame: Uint8Array): void {
    const ctx = this.#ctx;
    // Another node's forwarding channel (docs/cluster.md): its first frame is a channel Hello,
    // which no client sends (command 14 is not a Request).
    if (connection.channel) return ctx.channels.onFrame(connection, frame);
    if (connection.session === null && isChannelHello(frame)) {
      ctx.listener().hideSession(connection);
      return ctx.channels.open(connection, frame);
    }
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

  onClose(connection: ClientConnection): void {
    if (connection.channel) return this.#ctx.channels.onClose(connection);
    this.#sessions.disconnected(connection);
  }

  /** A reply from a group owner (another thread's ring, or this shard's own engines). */
  onReply(message: ReplyMessage, copy: boolean): void {
    const frame = message.frame === null || !copy ? message.frame : message.frame.slice();
    if (isForwardToken(message.token)) return this.#ctx.channels.reply(message.token, frame, message.completes);
    const connection = this.#ctx.listener().byToken(message.token);
    if (connection === null) return;
    if (frame !== null) {
      noteCommittedReply(connection, message.group, frame);
      connection.send(frame);
    }
    if (message.completes) connection.requestDone();
  }

  /** A reply given as parts (a poll answered on this shard: header, prefix, batch views). */
  onReplyParts(token: number, parts: readonly Uint8Array[]): void {
    if (isForwardToken(token)) return this.#ctx.channels.reply(token, concatBytes(parts), true);
    const connection = this.#ctx.listener().byToken(token);
    if (connection === null) return;
    connection.sendParts(parts);
    connection.requestDone();
  }

  /** The shard's once-a-second sweep: `[heartbeat]` releases of silent consumer-group members. */
  sweepStale(nowMs: number, staleAfterMs: number): void {
    for (const connection of this.#ctx.listener().connections()) {
      if (this.#sessions.releaseIfStale(connection, nowMs, staleAfterMs)) this.counters.evictions += 1;
    }
  }

  onSessionResult(message: SessionResultMessage): void {
    this.#sessions.onResult(message);
  }

  requestCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [code, count] of this.counters.requests) {
      out[COMMANDS.find((c) => c.code === code)?.snake ?? `code_${code}`] = count;
    }
    return out;
  }

  #read(connection: ClientConnection, frame: Uint8Array, code: number, userId: number, client: bigint): void {
    const ctx = this.#ctx;
    if (code === CommandCode.PollMessages) return this.#partitions.poll(connection, frame, userId, client);
    if (code === CommandCode.GetConsumerOffset) return this.#partitions.getOffset(connection, frame, userId, client);
    const me: ClientSession = { clientId: connection.clientId, vsrClient: client, userId, transport: 1, address: connection.address };
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

  #evict(connection: ClientConnection, client: bigint, reason: EvictionReason): void {
    this.counters.evictions += 1;
    connection.send(eviction(this.#ctx.reply, client, reason));
    if (connection.session?.client === client) {
      connection.session = null;
      this.#ctx.listener().publishSession(connection);
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
function noteCommittedReply(connection: ClientConnection, group: bigint, frame: Uint8Array): void {
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
