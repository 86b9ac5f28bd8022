/**
 * Helpers for the replica-plane tests: loopback settings, nodes that record what they see, raw
 * sockets that speak the handshake by hand, frames, and waiting.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import {
  Command,
  METADATA_GROUP,
  clusterIdFromName,
  encodeFrame,
  sealHeader,
  writePrepareFrame,
} from '@shoal/protocol';
import { loadVectorFile } from '../../../test/support/fixtures.js';
import type { MessageBusConfig } from '../src/config/index.js';
import {
  ReplicaPlane,
  type HandshakeRefusedInfo,
  type PeerUpInfo,
  type ReplicaPlaneLog,
  type ReplicaPlaneOptions,
  type ReplicaPlaneSettings,
} from '../src/replica-plane/index.js';

export const SECRET = 'replica-plane-test-secret-0123456789';
export const OTHER_SECRET = 'another-replica-secret-9876543210abc';
export const CLUSTER_NAME = 'iggy-cluster';
export const CLUSTER = clusterIdFromName(CLUSTER_NAME);

export const TEST_BUS: MessageBusConfig = Object.freeze({
  maxBatch: 256,
  maxMessageSizeBytes: 64 * 1024 * 1024,
  peerQueueCapacity: 256,
  reconnectPeriodMs: 100,
  closePeerTimeoutMs: 500,
  closeGraceMs: 200,
  handshakeGraceMs: 1500,
});

/** Ports that were free a moment ago (bound to 127.0.0.1:0 together, then released). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((done) => {
      const server = createServer();
      server.listen({ host: '127.0.0.1', port: 0 }, () => done(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
  return ports;
}

export interface SettingsInput {
  readonly selfId: number;
  readonly ports: readonly number[];
  readonly auth?: { readonly secret: string; readonly previous?: string } | null;
  readonly tls?: { readonly selfSigned: boolean; readonly certFile?: string; readonly keyFile?: string; readonly caFile?: string; readonly selfSignedDir?: string } | null;
  readonly clusterName?: string;
  readonly bus?: Partial<MessageBusConfig>;
  /** False: no listener (a dial-only node). */
  readonly listen?: boolean;
  /** Ports peers are dialed at (default: `ports`; a proxy port sits in between). */
  readonly dialPorts?: readonly (number | undefined)[];
}

/** A loopback roster of `ports.length` replicas, as seen by `selfId`. */
export function settingsFor(input: SettingsInput): ReplicaPlaneSettings {
  const port = input.ports[input.selfId] as number;
  return {
    clusterName: input.clusterName ?? CLUSTER_NAME,
    selfId: input.selfId,
    replicaCount: input.ports.length,
    selfIp: '127.0.0.1',
    listen: input.listen === false ? null : { host: '127.0.0.1', port },
    peers: input.ports
      .map((peerPort, replicaId) => ({ replicaId, ip: '127.0.0.1', port: input.dialPorts?.[replicaId] ?? peerPort }))
      .filter((peer) => peer.replicaId !== input.selfId),
    auth: {
      enabled: input.auth !== undefined && input.auth !== null,
      sharedSecret: input.auth?.secret ?? '',
      previousSharedSecret: input.auth?.previous ?? '',
    },
    tls: {
      enabled: input.tls !== undefined && input.tls !== null,
      selfSigned: input.tls?.selfSigned ?? false,
      certFile: input.tls?.certFile ?? '',
      keyFile: input.tls?.keyFile ?? '',
      caFile: input.tls?.caFile ?? '',
      selfSignedDir: input.tls?.selfSignedDir ?? '',
    },
    messageBus: { ...TEST_BUS, ...input.bus },
  };
}

/** A log that keeps every line (and prints nothing). */
export class RecordingLog implements ReplicaPlaneLog {
  readonly lines: { level: string; msg: string; fields: Readonly<Record<string, unknown>> }[] = [];
  debug(msg: string, fields: Readonly<Record<string, unknown>> = {}): void { this.lines.push({ level: 'debug', msg, fields }); }
  info(msg: string, fields: Readonly<Record<string, unknown>> = {}): void { this.lines.push({ level: 'info', msg, fields }); }
  warn(msg: string, fields: Readonly<Record<string, unknown>> = {}): void { this.lines.push({ level: 'warn', msg, fields }); }
  error(msg: string, fields: Readonly<Record<string, unknown>> = {}): void { this.lines.push({ level: 'error', msg, fields }); }
}

/** A started plane plus everything it reported. */
export interface TestNode {
  readonly plane: ReplicaPlane;
  readonly log: RecordingLog;
  /** Copies of validated inbound frames, per peer. */
  readonly frames: Map<number, Uint8Array[]>;
  /** How each inbound frame was handed over, in arrival order (exact: its buffer is just the frame). */
  readonly handed: { peer: number; size: number; validated: boolean; owned: boolean; exact: boolean }[];
  readonly ups: { peer: number; info: PeerUpInfo }[];
  readonly downs: { peer: number; reason: string }[];
  readonly refusals: HandshakeRefusedInfo[];
  readonly drops: { peer: number; reason: string }[];
}

export type NodeExtras = Omit<ReplicaPlaneOptions, 'settings' | 'config'>;

const running: ReplicaPlane[] = [];

export async function startNode(settings: ReplicaPlaneSettings, extras: Partial<NodeExtras> = {}): Promise<TestNode> {
  const log = new RecordingLog();
  const frames = new Map<number, Uint8Array[]>();
  const ups: TestNode['ups'] = [];
  const downs: TestNode['downs'] = [];
  const refusals: HandshakeRefusedInfo[] = [];
  const drops: TestNode['drops'] = [];
  const handed: TestNode['handed'] = [];
  const plane = await ReplicaPlane.start({
    settings,
    log,
    onPeerFrames: (peer, batch) => {
      const list = frames.get(peer) ?? [];
      for (const { bytes, ingress } of batch) {
        list.push(bytes.slice());
        const exact = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length;
        handed.push({ peer, size: bytes.length, validated: ingress.validated, owned: ingress.owned, exact });
      }
      frames.set(peer, list);
    },
    onPeerUp: (peer, info) => ups.push({ peer, info }),
    onPeerDown: (peer, reason) => downs.push({ peer, reason }),
    onHandshakeRefused: (info) => refusals.push(info),
    onFrameDropped: (peer, reason) => drops.push({ peer, reason }),
    ...extras,
  });
  running.push(plane);
  return { plane, log, frames, ups, downs, refusals, drops, handed };
}

/** Stops every plane started through `startNode` (afterEach). */
export async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((plane) => plane.stop()));
}

export async function waitFor(condition: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

// ---------------------------------------------------------------------------------------------
// Raw sockets.

/** A raw client socket that records everything it receives and when it closed. */
export class RawPeer {
  readonly socket: Socket;
  received = new Uint8Array(0);
  closed = false;
  readonly connected: Promise<void>;

  private constructor(socket: Socket, connecting: boolean) {
    this.socket = socket;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      const next = new Uint8Array(this.received.length + chunk.length);
      next.set(this.received, 0);
      next.set(chunk, this.received.length);
      this.received = next;
    });
    socket.on('close', () => {
      this.closed = true;
    });
    this.connected = connecting
      ? new Promise((done, fail) => {
          socket.once('connect', () => done());
          socket.once('error', fail);
        })
      : Promise.resolve();
  }

  static async connect(port: number): Promise<RawPeer> {
    const peer = new RawPeer(connect({ host: '127.0.0.1', port, noDelay: true }), true);
    await peer.connected;
    return peer;
  }

  /** Wraps an already connected socket (a server-side accept). */
  static of(socket: Socket): RawPeer {
    return new RawPeer(socket, false);
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The first `n` bytes received, once they are there. */
  async bytes(n: number, timeoutMs = 3000): Promise<Uint8Array> {
    await waitFor(() => this.received.length >= n || this.closed, timeoutMs, `${n} bytes`);
    if (this.received.length < n) throw new Error(`closed after ${this.received.length} of ${n} bytes`);
    return this.received.slice(0, n);
  }

  async waitClosed(timeoutMs = 3000): Promise<void> {
    await waitFor(() => this.closed, timeoutMs, 'the socket to close');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Frames.

/** A valid sealed Commit (header-only) from `replica`, carrying `commit` as a sequence marker. */
export function commitFrame(replica: number, commit: bigint, cluster: bigint = CLUSTER): Uint8Array {
  return sealHeader(encodeFrame(Command.Commit, {
    cluster,
    view: 3,
    replica,
    commitChecksum: 0n,
    timestampMonotonic: commit,
    commit,
    checkpointOp: 0n,
    group: METADATA_GROUP,
  }));
}

/** The `commit` field of a Commit frame (u64 at 152). */
export function commitOf(frame: Uint8Array): bigint {
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(152, true);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function nonce(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

// ---------------------------------------------------------------------------------------------
// Vectors.

/** A golden vector file (test/fixtures/vectors, or SHOAL_VECTORS). */
export function loadVectors(file: string): unknown {
  return loadVectorFile(file);
}

export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** A valid metadata-plane Prepare from `replica` with a body of `bodySize` bytes (sealed, identity last). */
export function prepareFrame(replica: number, op: number, bodySize: number, cluster: bigint = CLUSTER): Uint8Array {
  const body = new Uint8Array(bodySize);
  for (let i = 0; i < body.length; i++) body[i] = (op + i * 13) & 0xff;
  return writePrepareFrame({
    cluster, view: 3, replica, client: 7n, parent: 0n, requestChecksum: 0n, op, commit: 0,
    timestamp: BigInt(op), request: 1n, operation: 128, group: METADATA_GROUP, userId: 0,
  }, body);
}
