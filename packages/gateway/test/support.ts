/**
 * A gateway over a real MetadataState (the state package's test harness with the root user
 * `iggy`/`iggy`) and in-memory connections; what it routes, asks and publishes is recorded.
 */
import { CommandCode, Operation, SHOAL_PROTOCOL_VERSION, classifyServerFrame, encodeLoginRegisterRequest, encodeRequestFrame } from '@shoal/protocol';
import { Harness } from '../../state/test/harness.js';
import {
  Gateway, type GatewayConnection, type GatewayContext, type GatewayMessage, MemoryConnection, type SessionResultMessage,
} from '../src/index.js';

export const CLUSTER = 7n;
export const ROOT_HASH = '$test$iggy';

export interface PasswordCheck {
  readonly connection: GatewayConnection;
  readonly password: string;
  readonly hash: string;
}

export class Bench {
  readonly harness = Harness.withRoot('iggy', 'iggy');
  readonly routed: GatewayMessage[] = [];
  readonly checks: PasswordCheck[] = [];
  readonly published: GatewayConnection[] = [];
  readonly connections = new Map<number, MemoryConnection>();
  readonly sent = new Map<number, Uint8Array[]>();
  readonly gateway: Gateway;
  ready = true;
  nowMs = 0;
  #nextToken = 1;

  constructor() {
    const bench = this;
    const ctx: GatewayContext = {
      metadata: {
        get ready() { return bench.ready; },
        get state() { return bench.harness.state; },
        get appliedOp() { return bench.harness.op; },
      },
      facts: {
        counters: () => null,
        sessions: () => [],
        stats: () => { throw new Error('no stats here'); },
        cluster: () => ({ name: 'bench', nodes: [] }),
        clustered: false,
        clusterGroups: () => { throw new Error('not clustered'); },
      },
      reply: { cluster: CLUSTER, replica: 2, view: () => 3, commit: () => 11n },
      h32: () => 0,
      nowMicros: () => 1_700_000_000_000_000n,
      output: {
        route: (message) => this.routed.push(message),
        verifyPassword: (connection, password, hash) => this.checks.push({ connection, password, hash }),
        sessionChanged: (connection) => this.published.push(connection),
        connectionOf: (token) => this.connections.get(token) ?? null,
      },
    };
    this.gateway = new Gateway(ctx);
  }

  connect(inFlightMax = 8): MemoryConnection {
    const token = this.#nextToken++;
    const frames: Uint8Array[] = [];
    this.sent.set(token, frames);
    const connection = new MemoryConnection({
      token, clientId: token, address: `10.0.0.1:${4000 + token}`, inFlightMax,
      onFrame: (c, frame) => this.gateway.onFrame(c, frame),
      send: (frame) => frames.push(frame),
      onClose: (c) => {
        this.connections.delete(c.token);
        this.gateway.disconnected(c);
      },
      nowMs: () => this.nowMs,
    });
    this.connections.set(token, connection);
    return connection;
  }

  /** Frames the gateway sent to `connection`, taken. */
  take(connection: MemoryConnection): Uint8Array[] {
    const frames = this.sent.get(connection.token) ?? [];
    const out = frames.splice(0, frames.length);
    return out;
  }

  /** Logs `connection` in as root with `client`, the metadata owner binding `epoch`. */
  login(connection: MemoryConnection, client: bigint, epoch: bigint): void {
    connection.push(registerFrame(client));
    const check = this.checks.pop();
    if (check === undefined) throw new Error('no password check asked');
    this.gateway.passwordVerified(connection, check.password === 'iggy');
    this.gateway.onSessionResult(sessionOk(connection.token, client, epoch));
    this.routed.length = 0;
    this.take(connection);
  }
}

export function registerFrame(client: bigint, password = 'iggy'): Uint8Array {
  const body = encodeLoginRegisterRequest({
    versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'test', sdkVersion: '0' }, username: 'iggy', password, context: '',
  });
  return encodeRequestFrame({ client, operation: Operation.Register, request: 0n, session: 0n, timestamp: 1n }, body);
}

export function readFrame(client: bigint, code: number, session: bigint, body: Uint8Array = new Uint8Array(0), timestamp = 5n): Uint8Array {
  return encodeRequestFrame({ client, operation: Operation.NonReplicated, nonReplicatedCode: code, request: 0n, session, timestamp }, body);
}

export function pingFrame(client: bigint): Uint8Array {
  return readFrame(client, CommandCode.Ping, 0n);
}

export function sessionOk(token: number, client: bigint, epoch: bigint): SessionResultMessage {
  return { kind: 'session_result', session: 'register', token, client, userId: 0, outcome: 'ok', epoch, watermark: epoch };
}

/** The error code a client decodes from a server frame (0: success). */
export function codeOf(frame: Uint8Array): number {
  const outcome = classifyServerFrame(frame);
  return outcome.outcome === 'ok' ? 0 : outcome.errorCode;
}

/** The eviction reason of an Eviction frame (byte 255), or -1 for any other frame. */
export function evictionReasonOf(frame: Uint8Array): number {
  const outcome = classifyServerFrame(frame);
  return outcome.outcome === 'error' && outcome.source === 'eviction' ? (outcome.evictionReason ?? -1) : -1;
}
