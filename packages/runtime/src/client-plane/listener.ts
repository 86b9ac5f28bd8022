/**
 * The client listener of one shard. Client connections are spread over shards by a SHARED
 * listening socket, not by handing accepted fds around (node-runtime-notes.md: a hand-off parks
 * a libuv handle of ~1 KiB on the acceptor per connection, forever):
 *
 *   shard 0   server.listen(tcp.address) → posts `server._handle.fd` to the supervisor
 *   shard k   server.listen({ fd })      ← the supervisor relays the fd
 *   kernel    each accept() wakes one of the threads polling the fd: connections land on shards
 *             without any thread touching another's sockets
 *
 * Every libuv handle on the shared fd refers to the same descriptor, so no shard may close its
 * server while others use it (the number would be reused and a late close would hit an unrelated
 * socket). "Stop accepting" is therefore a flag: a draining shard destroys new connections at
 * once, and the descriptor closes with the process.
 *
 * `[tcp.tls]` on: the server is a `tls.Server` on the same shared descriptor (each shard builds
 * its own context from the PEM the supervisor loaded, tls.ts); a connection exists for the
 * client plane only once its handshake completed, within `tcp.frame_read_timeout`.
 */
import { type Server, type Socket, createServer } from 'node:net';
import { type TLSSocket, createServer as createTlsServer } from 'node:tls';
import type { Logger } from '../log/logger.js';
import type { StatusTable } from '../status/status-table.js';
import { ClientConnection, type ConnectionHandler, type ConnectionLimits } from './connection.js';
import type { RequestTimingSink } from './request-timing.js';
import { CLIENT_TLS_MAX_VERSION, CLIENT_TLS_MIN_VERSION, type ClientTlsMaterial } from './tls.js';
import { FORWARD_SLOT_BASE, makeToken, nextGeneration, tokenSlot } from './token.js';

export interface ListenerOptions {
  readonly shard: number;
  readonly status: StatusTable;
  readonly limits: ConnectionLimits;
  /** Node-wide cap (tcp.connections_max), counted in the status table. */
  readonly connectionsMax: number;
  /** `[tcp.tls]` material; null: plaintext. */
  readonly tls: ClientTlsMaterial | null;
  readonly handler: ConnectionHandler;
  readonly log: Logger;
  /** Request end-to-end times (shoal_request_duration_seconds); none: not measured. */
  readonly timing?: RequestTimingSink;
}

export interface ListenerCounters {
  bytesIn: number;
  bytesOut: number;
  accepted: number;
  closed: number;
  readonly refused: Record<string, number>;
}

const TRANSPORT_TCP = 1;

export class ClientListener {
  readonly counters: ListenerCounters = { bytesIn: 0, bytesOut: 0, accepted: 0, closed: 0, refused: {} };
  readonly #options: ListenerOptions;
  readonly #server: Server;
  readonly #connections: (ClientConnection | null)[];
  readonly #generations: number[];
  readonly #free: number[];
  #accepting = true;

  constructor(options: ListenerOptions) {
    this.#options = options;
    const slots = Math.min(options.status.sessionSlotsPerShard, FORWARD_SLOT_BASE);
    this.#connections = new Array<ClientConnection | null>(slots).fill(null);
    this.#generations = new Array<number>(slots).fill(0);
    // Lowest slots first (pop from the end).
    this.#free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
    this.#server = options.tls === null
      ? createServer({ noDelay: true, pauseOnConnect: false }, (socket) => this.#onConnection(socket))
      : this.#createTlsServer(options.tls);
    this.#server.on('error', (error) => options.log.error('client listener error', { error }));
  }

  #createTlsServer(material: ClientTlsMaterial): Server {
    const server = createTlsServer({
      cert: material.certPem, key: material.keyPem,
      minVersion: CLIENT_TLS_MIN_VERSION, maxVersion: CLIENT_TLS_MAX_VERSION,
      handshakeTimeout: this.#options.limits.frameReadTimeoutMs, noDelay: true, pauseOnConnect: false,
    }, (socket: TLSSocket) => this.#onConnection(socket));
    // A failed or timed-out handshake never became a connection: count it, nothing else.
    server.on('tlsClientError', (error: Error & { code?: string }, socket: TLSSocket) => {
      this.#refuse(error.code === 'ERR_TLS_HANDSHAKE_TIMEOUT' ? 'tls_handshake_timeout' : 'tls_handshake_failed', true);
      socket.destroy();
    });
    return server;
  }

  get open(): number {
    return this.#connections.length - this.#free.length;
  }

  /** Shard 0: binds the address; returns the descriptor to share and the bound address. */
  listenOnAddress(host: string, port: number): Promise<{ fd: number; host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.#server.once('error', onError);
      this.#server.listen({ host, port, exclusive: false }, () => {
        this.#server.off('error', onError);
        const address = this.#server.address();
        const fd = (this.#server as unknown as { _handle?: { fd?: number } })._handle?.fd;
        if (address === null || typeof address === 'string' || typeof fd !== 'number' || fd < 0) {
          reject(new Error('client listener: no bound address or descriptor'));
          return;
        }
        resolve({ fd, host: address.address, port: address.port });
      });
    });
  }

  /** Shards 1..N-1: poll the descriptor shard 0 bound. */
  listenOnFd(fd: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.#server.once('error', onError);
      this.#server.listen({ fd }, () => {
        this.#server.off('error', onError);
        resolve();
      });
    });
  }

  /** Drain: refuse new connections from now on (the shared descriptor stays open, see above). */
  stopAccepting(): void {
    this.#accepting = false;
  }

  /** Every open connection (the shard's sweep, shutdown, broadcast). */
  *connections(): IterableIterator<ClientConnection> {
    for (const connection of this.#connections) if (connection !== null) yield connection;
  }

  /** The connection a token names, if it is still the same one. */
  byToken(token: number): ClientConnection | null {
    const connection = this.#connections[tokenSlot(token)] ?? null;
    return connection !== null && connection.token === token && !connection.closed ? connection : null;
  }

  sweep(nowMs: number): void {
    for (const connection of this.connections()) connection.sweep(nowMs);
  }

  closeAll(reason: string): void {
    for (const connection of this.connections()) connection.close(reason);
  }

  /** A connection that is a forwarding channel is no client: its record leaves GetClients / GetMe. */
  hideSession(connection: ClientConnection): void {
    this.#options.status.clearSession(this.#options.shard, connection.slot);
  }

  /** Publishes a connection's session record (after login / logout). */
  publishSession(connection: ClientConnection): void {
    this.#options.status.writeSession(this.#options.shard, connection.slot, {
      clientId: connection.clientId,
      userId: connection.session?.userId ?? null,
      transport: TRANSPORT_TCP,
      vsrClient: connection.session?.client ?? null,
      address: connection.address,
    });
  }

  #onConnection(socket: Socket): void {
    const o = this.#options;
    if (!this.#accepting) return this.#reject(socket, 'draining');
    const slot = this.#free.pop();
    if (slot === undefined) return this.#reject(socket, 'shard_slots_full');
    if (!o.status.tryOpenConnection(o.connectionsMax)) {
      this.#free.push(slot);
      return this.#reject(socket, 'connections_max');
    }
    const generation = nextGeneration(this.#generations[slot] ?? 0);
    this.#generations[slot] = generation;
    const token = makeToken(o.shard, slot, generation);
    const handler: ConnectionHandler = {
      onFrame: (connection, frame) => o.handler.onFrame(connection, frame),
      onClose: (connection, reason) => this.#onClose(connection, reason),
      holdReads: o.handler.holdReads,
      metadataFence: () => o.handler.metadataFence(),
      metadataReached: (fence) => o.handler.metadataReached(fence),
      awaitMetadata: (connection) => o.handler.awaitMetadata(connection),
      metadataWaitExpired: (connection, fence) => o.handler.metadataWaitExpired(connection, fence),
      ...(o.timing === undefined ? {} : { timing: o.timing }),
    };
    const connection = new ClientConnection(socket, { token, slot, clientId: o.status.nextClientId() }, o.limits, handler, this.counters, Date.now());
    this.#connections[slot] = connection;
    this.counters.accepted += 1;
    this.publishSession(connection);
    connection.start();
  }

  #onClose(connection: ClientConnection, reason: string): void {
    const o = this.#options;
    if (this.#connections[connection.slot] !== connection) return;
    this.#connections[connection.slot] = null;
    o.status.clearSession(o.shard, connection.slot);
    o.status.closeConnection();
    this.#free.push(connection.slot);
    this.counters.closed += 1;
    // Every close the node decided (limits, protocol errors) is counted by reason.
    if (reason !== 'peer_closed' && reason !== 'shutdown') this.#refuse(reason, true);
    o.handler.onClose(connection, reason);
  }

  #reject(socket: Socket, reason: string): void {
    this.#refuse(reason, true);
    socket.on('error', () => undefined);
    socket.destroy();
  }

  #refuse(reason: string, log: boolean): void {
    this.counters.refused[reason] = (this.counters.refused[reason] ?? 0) + 1;
    if (log && this.#options.log.enabled('debug')) this.#options.log.debug('connection refused', { reason });
  }
}
