/**
 * The replica plane of one node: listener, dialer, handshakes, the one-connection-per-pair
 * registry, and (unless handed off) the peer connections themselves.
 *
 *                 ┌───────────────────────── ReplicaPlane (one thread) ─────────────────────────┐
 *  lower ids ──TCP──▶ acceptor ─▶ [TLS server] ─▶ AcceptorHandshake ─┐                         │
 *                 │   (accepts only lower ids)                        ├─▶ install(peer) ─┬─▶ PeerConnection ─▶ onPeerFrames
 *  higher ids ◀─TCP── dialer ──▶ [TLS client] ─▶ DialerHandshake ────┘   one per pair   │     send(peer, frame)
 *                 │   (dials only higher ids, sweep + backoff)           duplicate: close └─▶ handOff(fd + leftover)
 *                 └─────────────────────────────────────────────────────────────────────────────┘   (plaintext only)
 *
 * Every connection attempt has one `handshake_grace` budget for connect, TLS and the replica
 * handshake. Peer input never throws: refusals are reasons, counted and logged.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { ShoalConfig } from '../config/index.js';
import { Acceptor, INBOUND_HANDSHAKES_MAX } from './acceptor.js';
import { Dialer, dialPeer, type DialTargetStats } from './dialer.js';
import type { HandshakeRefusedInfo, PeerUpInfo } from './events.js';
import { detachForHandOff, flushWrites, parkedHandOffCount, type HandOffPackage } from './handoff.js';
import { SILENT_LOG, type ReplicaPlaneLog } from './log.js';
import { PeerConnection, type LinkFrame, type PeerCloseReason, type PeerConnectionStats, type SendOutcome } from './peer-connection.js';
import { deriveIdentity, replicaPlaneSettingsFrom, type ReplicaPlaneIdentity, type ReplicaPlaneSettings } from './settings.js';
import { loadReplicaTls, type ReplicaTlsMaterial } from './tls.js';

export { INBOUND_HANDSHAKES_MAX };
export type { HandshakeRefusedInfo, PeerDirection, PeerUpInfo } from './events.js';

export type PlaneSendOutcome = SendOutcome | 'not_connected' | 'handed_off';

export interface ReplicaPlaneHooks {
  /** Validated inbound frames of one peer, in order; views valid only during the call. */
  readonly onPeerFrames?: (peer: number, frames: readonly LinkFrame[]) => void;
  readonly onPeerUp?: (peer: number, info: PeerUpInfo) => void;
  readonly onPeerDown?: (peer: number, reason: PeerCloseReason | 'released') => void;
  /** An inbound frame dropped by validation (already counted and logged). */
  readonly onFrameDropped?: (peer: number, reason: string) => void;
  readonly onHandshakeRefused?: (info: HandshakeRefusedInfo) => void;
  /**
   * Plaintext only: take established sockets to another thread instead of serving them here.
   * Post `pkg` to the worker (transfer `pkg.leftover.buffer`), adopt it there with
   * `adoptHandedOff`, and call `releaseHandedOff(peer)` here when that connection ends.
   * Ignored with TLS (a TLS session cannot change threads).
   */
  readonly handOff?: (peer: number, pkg: HandOffPackage, info: PeerUpInfo) => void;
}

export type ReplicaPlaneSource = { readonly config: ShoalConfig } | { readonly settings: ReplicaPlaneSettings };

export type ReplicaPlaneOptions = ReplicaPlaneSource &
  ReplicaPlaneHooks & {
    readonly log?: ReplicaPlaneLog;
    /** Pre-loaded TLS material; default: `loadReplicaTls(settings)` when TLS is enabled. */
    readonly tls?: ReplicaTlsMaterial;
    /** Default true; false: accept only (tests, or a thread that only serves inbound). */
    readonly dial?: boolean;
    /** The OS CSPRNG by default; injectable for tests. */
    readonly randomBytes?: (size: number) => Uint8Array;
  };

type PeerEntry =
  | { readonly kind: 'local'; readonly info: PeerUpInfo; readonly connection: PeerConnection }
  | { readonly kind: 'handed_off'; readonly info: PeerUpInfo };

export interface PeerStats {
  readonly peer: number;
  readonly info: PeerUpInfo;
  /** Null for a handed-off connection (its stats live on the adopting thread). */
  readonly connection: PeerConnectionStats | null;
  readonly queued: number;
}

export interface ReplicaPlaneStats {
  readonly peers: readonly PeerStats[];
  readonly handshakesEstablished: number;
  /** Refused handshakes by reason, both directions. */
  readonly handshakesRefused: Readonly<Record<string, number>>;
  /** Handshakes that succeeded for a peer that already had a connection (closed). */
  readonly duplicatesClosed: number;
  /** Inbound handshakes in progress. */
  readonly inboundHandshakes: number;
  readonly dials: readonly DialTargetStats[];
  readonly parkedHandOffs: number;
}

const defaultRandomBytes = (size: number): Uint8Array => new Uint8Array(cryptoRandomBytes(size));

export class ReplicaPlane {
  readonly settings: ReplicaPlaneSettings;
  readonly identity: ReplicaPlaneIdentity;
  readonly #hooks: ReplicaPlaneHooks;
  readonly #log: ReplicaPlaneLog;
  readonly #tls: ReplicaTlsMaterial | null;
  readonly #randomBytes: (size: number) => Uint8Array;
  readonly #peers = new Map<number, PeerEntry>();
  /** Outbound sockets between connect and install, destroyed on stop. */
  readonly #dialing = new Set<Socket>();
  readonly #refused: Record<string, number> = {};
  #established = 0;
  #duplicates = 0;
  #acceptor: Acceptor | null = null;
  #dialer: Dialer | null = null;
  #stopping = false;

  private constructor(settings: ReplicaPlaneSettings, options: ReplicaPlaneOptions) {
    this.settings = settings;
    this.identity = deriveIdentity(settings);
    this.#hooks = options;
    this.#log = options.log ?? SILENT_LOG;
    this.#tls = settings.tls.enabled ? (options.tls ?? loadReplicaTls(settings)) : null;
    this.#randomBytes = options.randomBytes ?? defaultRandomBytes;
  }

  /**
   * Validates the settings (throws `ReplicaPlaneError`: TLS without auth, short secrets, bad
   * roster or limits, unreadable TLS files, bind failure), loads TLS, listens, starts dialing.
   */
  static async start(options: ReplicaPlaneOptions): Promise<ReplicaPlane> {
    const settings = 'config' in options ? replicaPlaneSettingsFrom(options.config) : options.settings;
    const plane = new ReplicaPlane(settings, options);
    if (settings.listen !== null) {
      plane.#acceptor = await Acceptor.listen(settings.listen.host, settings.listen.port, {
        identity: plane.identity,
        bus: settings.messageBus,
        tls: plane.#tls,
        randomBytes: plane.#randomBytes,
        log: plane.#log,
        install: (peer, socket, leftover, info) => plane.#install(peer, socket, leftover, info),
        refused: (info) => plane.#noteRefused(info),
      });
    }
    if (options.dial !== false) {
      plane.#dialer = new Dialer({
        selfId: settings.selfId,
        peers: settings.peers,
        reconnectPeriodMs: settings.messageBus.reconnectPeriodMs,
        handshakeGraceMs: settings.messageBus.handshakeGraceMs,
        isInstalled: (peer) => plane.#peers.has(peer),
        attempt: (target) =>
          plane.#stopping
            ? Promise.resolve(false)
            : dialPeer(target, {
                identity: plane.identity,
                bus: settings.messageBus,
                tls: plane.#tls,
                randomBytes: plane.#randomBytes,
                pending: plane.#dialing,
                install: (peer, socket, leftover, info) => plane.#install(peer, socket, leftover, info),
                refused: (info) => plane.#noteRefused(info),
              }),
        log: plane.#log,
      });
      plane.#dialer.start();
    }
    plane.#log.info('replica plane started', {
      replica: settings.selfId,
      replicas: settings.replicaCount,
      listen: plane.#acceptor === null ? null : `${plane.#acceptor.address.host}:${plane.#acceptor.address.port}`,
      auth: settings.auth.enabled,
      tls: plane.#tls === null ? 'off' : plane.#tls.mode,
    });
    return plane;
  }

  /** Where the listener is bound (the actual port when the settings said 0), or null. */
  get address(): { readonly host: string; readonly port: number } | null {
    return this.#acceptor?.address ?? null;
  }

  get tlsMode(): 'off' | 'ca' | 'self_signed' {
    return this.#tls === null ? 'off' : this.#tls.mode;
  }

  /** Peers with an installed connection (local or handed off). */
  connectedPeers(): number[] {
    return [...this.#peers.keys()].sort((a, b) => a - b);
  }

  isConnected(peer: number): boolean {
    return this.#peers.has(peer);
  }

  /** Enqueues a frame for `peer` on its bounded queue (this thread's connections only). */
  send(peer: number, frame: Uint8Array): PlaneSendOutcome {
    const entry = this.#peers.get(peer);
    if (entry === undefined) return 'not_connected';
    if (entry.kind === 'handed_off') return 'handed_off';
    return entry.connection.send(frame);
  }

  /** The runtime reports that a handed-off connection ended: the pair slot is free again. */
  releaseHandedOff(peer: number): void {
    const entry = this.#peers.get(peer);
    if (entry?.kind !== 'handed_off') return;
    this.#peers.delete(peer);
    this.#log.info('replica peer down', { peer, reason: 'released' });
    this.#dialer?.linkDown(peer);
    this.#hooks.onPeerDown?.(peer, 'released');
  }

  /** Closes one peer's local connection (it will be re-dialed / re-accepted). */
  disconnect(peer: number): void {
    const entry = this.#peers.get(peer);
    if (entry?.kind === 'local') entry.connection.destroy('local_close');
  }

  /** Runs one dial sweep now (tests; the timer runs it every reconnect_period, and after a link drops). */
  sweep(): void {
    this.#dialer?.sweep();
  }

  stats(): ReplicaPlaneStats {
    const peers: PeerStats[] = [...this.#peers.entries()]
      .sort(([a], [b]) => a - b)
      .map(([peer, entry]) => ({
        peer,
        info: entry.info,
        connection: entry.kind === 'local' ? { ...entry.connection.stats, dropReasons: { ...entry.connection.stats.dropReasons } } : null,
        queued: entry.kind === 'local' ? entry.connection.queued : 0,
      }));
    return {
      peers,
      handshakesEstablished: this.#established,
      handshakesRefused: { ...this.#refused },
      duplicatesClosed: this.#duplicates,
      inboundHandshakes: this.#acceptor?.inProgress ?? 0,
      dials: this.#dialer?.stats() ?? [],
      parkedHandOffs: parkedHandOffCount(),
    };
  }

  /**
   * Stops listening and dialing, aborts handshakes in progress, and closes local connections
   * (each flushes its queue within `close_peer_timeout`). Handed-off connections are the
   * adopting threads' to close.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#dialer?.stop();
    this.#acceptor?.close();
    for (const socket of this.#dialing) socket.destroy();
    const closing: Promise<void>[] = [];
    for (const entry of this.#peers.values()) {
      if (entry.kind !== 'local' || entry.connection.closed) continue;
      const { connection } = entry;
      closing.push(new Promise<void>((resolve) => connection.onceClosed(resolve)));
      connection.close('local_close');
    }
    await Promise.all(closing);
    this.#log.info('replica plane stopped', { replica: this.settings.selfId });
  }

  // -------------------------------------------------------------------------------------------
  // The registry: exactly one connection per pair.

  async #install(peer: number, socket: Socket, leftover: Uint8Array, base: PeerUpInfo): Promise<boolean> {
    if (this.#stopping) {
      socket.destroy();
      return false;
    }
    if (this.#peers.has(peer)) {
      // Directional dialing leaves no tiebreak to make: the link already installed wins and the
      // newcomer (a restart racing its old connection, or a second dial) is closed.
      this.#duplicates++;
      this.#log.warn('replica connection for an installed peer closed (duplicate)', { peer, direction: base.direction });
      socket.destroy();
      return false;
    }
    this.#established++;
    const handOff = this.#hooks.handOff;
    if (handOff !== undefined && !base.tls) return this.#handOff(peer, socket, leftover, { ...base, handedOff: true }, handOff);
    const info = base;
    const bus = this.settings.messageBus;
    const connection = new PeerConnection({
      peer,
      socket,
      leftover,
      replicaCount: this.identity.replicaCount,
      messageSizeMax: bus.maxMessageSizeBytes,
      queueCapacity: bus.peerQueueCapacity,
      maxBatch: bus.maxBatch,
      closeTimeoutMs: bus.closePeerTimeoutMs + (info.tls ? bus.closeGraceMs : 0),
      onFrames: (from, frames) => this.#hooks.onPeerFrames?.(from, frames),
      onClose: (from, reason) => this.#onConnectionClosed(from, connection, reason),
      onDrop: (from, reason) => this.#hooks.onFrameDropped?.(from, reason),
      log: this.#log,
    });
    this.#peers.set(peer, { kind: 'local', info, connection });
    this.#log.info('replica peer up', { peer, direction: info.direction, tls: info.tls });
    this.#hooks.onPeerUp?.(peer, info);
    connection.start();
    return true;
  }

  async #handOff(peer: number, socket: Socket, leftover: Uint8Array, info: PeerUpInfo, handOff: NonNullable<ReplicaPlaneHooks['handOff']>): Promise<boolean> {
    // Reserve the pair slot before waiting, so a racing duplicate is refused.
    this.#peers.set(peer, { kind: 'handed_off', info });
    const flushed = await flushWrites(socket, this.settings.messageBus.closeGraceMs);
    if (!flushed || this.#stopping) {
      this.#peers.delete(peer);
      socket.destroy();
      return false;
    }
    const pkg = detachForHandOff(socket, leftover);
    this.#log.info('replica peer up', { peer, direction: info.direction, tls: false, handedOff: true, fd: pkg.fd });
    this.#hooks.onPeerUp?.(peer, info);
    handOff(peer, pkg, info);
    return true;
  }

  #onConnectionClosed(peer: number, connection: PeerConnection, reason: PeerCloseReason): void {
    const entry = this.#peers.get(peer);
    const installed = entry?.kind === 'local' && entry.connection === connection;
    if (installed) this.#peers.delete(peer);
    this.#log.info('replica peer down', { peer, reason });
    if (installed && !this.#stopping) this.#dialer?.linkDown(peer);
    this.#hooks.onPeerDown?.(peer, reason);
  }

  #noteRefused(info: HandshakeRefusedInfo): void {
    this.#refused[info.reason] = (this.#refused[info.reason] ?? 0) + 1;
    const fields = { direction: info.direction, peer: info.peer, reason: info.reason, status: info.statusByte, remote: info.remote };
    // An unreachable peer is retried every sweep: not worth a warning each time.
    if (info.reason === 'connect_failed' || info.reason === 'stopping') this.#log.debug('replica handshake refused', fields);
    else this.#log.warn('replica handshake refused', fields);
    this.#hooks.onHandshakeRefused?.(info);
  }
}
