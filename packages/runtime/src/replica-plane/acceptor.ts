/**
 * The replica listener (replication-semantics.md §3.2, §3.9): accepts TCP connections, runs TLS
 * (when enabled) and the acceptor side of the handshake under one `handshake_grace` deadline per
 * connection, and hands established links to the registry, which keeps exactly one per pair.
 *
 *   accept ─▶ at most INBOUND_HANDSHAKES_MAX in progress (else close: pre-auth resources are bounded)
 *          ─▶ [TLS server: 1.3, ALPN iggy-replica, exporter] ─▶ AcceptorHandshake
 *               │ Hello: command 14, own cluster, peer < replica_count and peer < self (only
 *               │ strictly LOWER ids connect to us), then the MAC exchange with auth on
 *               └▶ established ─▶ install(peer)     refused / garbage / deadline ─▶ socket closed
 *
 * Garbage, a wrong first frame, a truncated or slow-drip Hello all end as a refusal reason and a
 * closed socket; nothing a peer sends can throw.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { MessageBusConfig } from '../config/index.js';
import { Deadline } from './deadline.js';
import { ReplicaPlaneError } from './errors.js';
import type { HandshakeRefusedInfo, InstallLink } from './events.js';
import { AcceptorHandshake } from './handshake-acceptor.js';
import { runHandshake } from './handshake-socket.js';
import type { ReplicaPlaneLog } from './log.js';
import type { ReplicaPlaneIdentity } from './settings.js';
import { acceptTls, type ReplicaTlsMaterial } from './tls.js';

/** Inbound handshakes in progress at once; more are closed at accept. */
export const INBOUND_HANDSHAKES_MAX = 64;

export interface AcceptorOptions {
  readonly identity: ReplicaPlaneIdentity;
  readonly bus: MessageBusConfig;
  readonly tls: ReplicaTlsMaterial | null;
  readonly randomBytes: (size: number) => Uint8Array;
  readonly log: ReplicaPlaneLog;
  readonly install: InstallLink;
  readonly refused: (info: HandshakeRefusedInfo) => void;
}

export class Acceptor {
  readonly #options: AcceptorOptions;
  readonly #server: Server;
  /** Sockets between accept and install (destroyed by `close`). */
  readonly #pending = new Set<Socket>();
  #inProgress = 0;
  #closed = false;
  #address: { host: string; port: number } = { host: '', port: 0 };

  private constructor(options: AcceptorOptions) {
    this.#options = options;
    this.#server = createServer({ noDelay: true }, (socket) => this.#onConnection(socket));
  }

  /** Binds `host:port` (port 0: ephemeral). Throws `ReplicaPlaneError('listen_failed')`. */
  static async listen(host: string, port: number, options: AcceptorOptions): Promise<Acceptor> {
    const acceptor = new Acceptor(options);
    const server = acceptor.#server;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(new ReplicaPlaneError('listen_failed', `cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
      server.once('error', onError);
      server.listen({ host, port }, () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (error) => options.log.error('replica listener error', { error: error.message }));
    const bound = server.address() as AddressInfo;
    acceptor.#address = { host: bound.address, port: bound.port };
    return acceptor;
  }

  get address(): { readonly host: string; readonly port: number } {
    return this.#address;
  }

  /** Inbound handshakes in progress. */
  get inProgress(): number {
    return this.#inProgress;
  }

  /**
   * Stops listening and aborts handshakes in progress. Does not wait for the server's 'close'
   * event: a connection handed off by fd is parked forever and would hold it back.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#server.close();
    for (const socket of this.#pending) socket.destroy();
  }

  #onConnection(raw: Socket): void {
    raw.on('error', () => undefined);
    if (this.#closed || this.#inProgress >= INBOUND_HANDSHAKES_MAX) {
      this.#options.refused({ direction: 'inbound', peer: null, reason: this.#closed ? 'stopping' : 'busy', statusByte: null, remote: remoteOf(raw) });
      raw.destroy();
      return;
    }
    this.#inProgress++;
    this.#pending.add(raw);
    this.#accept(raw)
      .catch((error: unknown) => {
        // Only our own bug gets here (peer input becomes reasons): drop this connection loudly
        // and keep serving the others.
        this.#options.log.error('replica accept failed', { error: String(error), remote: remoteOf(raw) });
        raw.destroy();
      })
      .finally(() => {
        this.#inProgress--;
        this.#pending.delete(raw);
      });
  }

  async #accept(raw: Socket): Promise<void> {
    const { identity, bus, tls, randomBytes, refused } = this.#options;
    const remote = remoteOf(raw);
    const deadline = new Deadline(bus.handshakeGraceMs);
    deadline.onExpire(() => raw.destroy());
    let socket: Socket = raw;
    let exporter: Uint8Array | null = null;
    if (tls !== null) {
      const secured = await acceptTls(raw, tls, deadline);
      if (!secured.ok) {
        deadline.cancel();
        refused({ direction: 'inbound', peer: null, reason: secured.reason, statusByte: null, remote });
        return;
      }
      socket = secured.socket;
      exporter = secured.exporter;
      this.#pending.add(socket);
      deadline.onExpire(() => socket.destroy());
    }
    try {
      const machine = new AcceptorHandshake({ identity, tlsExporter: exporter, frameSizeMax: bus.maxMessageSizeBytes, randomBytes });
      const result = await runHandshake(socket, machine, deadline, bus.closeGraceMs);
      deadline.cancel();
      if (!result.ok) {
        refused({ direction: 'inbound', peer: null, reason: result.reason, statusByte: result.statusByte, remote });
        return;
      }
      if (this.#closed) {
        socket.destroy();
        return;
      }
      await this.#options.install(result.peer, socket, result.leftover, { direction: 'inbound', tls: tls !== null, handedOff: false });
    } finally {
      this.#pending.delete(socket);
    }
  }
}

export function remoteOf(socket: Socket): string {
  return `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
}
