/**
 * Outbound dialing (replication-semantics.md §3.2): this replica dials only peers with a
 * strictly greater replica id, at start and then on a sweep every `message_bus.reconnect_period`,
 * re-dialing each target that is neither installed nor has an attempt pending.
 *
 * - One attempt per peer at a time. An attempt always settles (its deadline is
 *   `handshake_grace`); as a safety net a pending entry older than grace + period is forgotten.
 * - Backoff: after n consecutive failures a target sits out 2^(n-1) - 1 sweeps, capped at
 *   `BACKOFF_SWEEPS_MAX` - 1 (first retry on the next sweep, then 2, 4, 4, ... periods apart);
 *   a successful install resets it, and a link that drops is re-dialed on the next sweep.
 *
 *   sweep ─┬─ installed? ─────────────── skip
 *          ├─ pending (younger than grace + period)? ── skip
 *          ├─ backing off (now < nextAttemptAt)? ─────── skip
 *          └─ attempt(target) ─▶ true: failures = 0   false: failures++, nextAttemptAt = now + backoff
 */
import { connect, type Socket } from 'node:net';
import type { MessageBusConfig } from '../config/index.js';
import { Deadline } from './deadline.js';
import type { HandshakeRefusedInfo, InstallLink } from './events.js';
import { DialerHandshake } from './handshake-dialer.js';
import { runHandshake } from './handshake-socket.js';
import type { ReplicaPlaneLog } from './log.js';
import type { PeerAddress, ReplicaPlaneIdentity } from './settings.js';
import { dialTls, type ReplicaTlsMaterial } from './tls.js';

/** A failing target is retried at most this many sweeps apart. */
export const BACKOFF_SWEEPS_MAX = 4;

export interface DialerOptions {
  readonly selfId: number;
  /** Roster peers; only those with a greater id are dialed. */
  readonly peers: readonly PeerAddress[];
  readonly reconnectPeriodMs: number;
  readonly handshakeGraceMs: number;
  readonly isInstalled: (peer: number) => boolean;
  /** One connect + TLS + handshake + install; true when the link was installed. Must not reject. */
  readonly attempt: (target: PeerAddress) => Promise<boolean>;
  readonly log: ReplicaPlaneLog;
  /** Clock (ms); injectable for tests. */
  readonly now?: () => number;
}

interface TargetState {
  readonly target: PeerAddress;
  pendingSince: number | null;
  failures: number;
  nextAttemptAt: number;
  attempts: number;
}

export interface DialTargetStats {
  readonly peer: number;
  readonly pending: boolean;
  readonly failures: number;
  readonly attempts: number;
}

export class Dialer {
  readonly #options: DialerOptions;
  readonly #targets: TargetState[];
  readonly #now: () => number;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(options: DialerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#targets = options.peers
      .filter((peer) => peer.replicaId > options.selfId)
      .sort((a, b) => a.replicaId - b.replicaId)
      .map((target) => ({ target, pendingSince: null, failures: 0, nextAttemptAt: 0, attempts: 0 }));
  }

  /** Replica ids this node dials. */
  get targets(): readonly number[] {
    return this.#targets.map((state) => state.target.replicaId);
  }

  start(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.sweep();
    this.#timer = setInterval(() => this.sweep(), this.#options.reconnectPeriodMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One pass over the targets (the timer calls it; tests may too). */
  sweep(): void {
    if (this.#stopped) return;
    const now = this.#now();
    const pendingExpiry = this.#options.handshakeGraceMs + this.#options.reconnectPeriodMs;
    for (const state of this.#targets) {
      if (this.#options.isInstalled(state.target.replicaId)) continue;
      if (state.pendingSince !== null) {
        if (now - state.pendingSince < pendingExpiry) continue;
        this.#options.log.warn('replica dial attempt outcome lost; forgetting it', { peer: state.target.replicaId });
        state.pendingSince = null;
      }
      if (now < state.nextAttemptAt) continue;
      this.#launch(state, now);
    }
  }

  stats(): DialTargetStats[] {
    return this.#targets.map((state) => ({ peer: state.target.replicaId, pending: state.pendingSince !== null, failures: state.failures, attempts: state.attempts }));
  }

  #launch(state: TargetState, now: number): void {
    state.pendingSince = now;
    state.attempts++;
    const started = now;
    void this.#options.attempt(state.target).then(
      (installed) => this.#settle(state, started, installed),
      (error: unknown) => {
        this.#options.log.error('replica dial attempt failed', { peer: state.target.replicaId, error: String(error) });
        this.#settle(state, started, false);
      },
    );
  }

  #settle(state: TargetState, started: number, installed: boolean): void {
    if (state.pendingSince !== started) return; // forgotten by the safety net; a newer attempt owns the slot
    state.pendingSince = null;
    if (installed) {
      state.failures = 0;
      state.nextAttemptAt = 0;
      return;
    }
    state.failures++;
    const sweeps = Math.min(2 ** (state.failures - 1), BACKOFF_SWEEPS_MAX);
    // Half a period of slack so the retry lands on the sweep that is `sweeps` periods away.
    state.nextAttemptAt = this.#now() + (sweeps - 0.5) * this.#options.reconnectPeriodMs;
  }
}

// ---------------------------------------------------------------------------------------------
// One attempt: connect ─▶ [TLS client] ─▶ DialerHandshake ─▶ install, under one deadline.

export interface DialPeerOptions {
  readonly identity: ReplicaPlaneIdentity;
  readonly bus: MessageBusConfig;
  readonly tls: ReplicaTlsMaterial | null;
  readonly randomBytes: (size: number) => Uint8Array;
  /** Sockets in flight, so that stopping the plane can destroy them. */
  readonly pending: Set<Socket>;
  readonly install: InstallLink;
  readonly refused: (info: HandshakeRefusedInfo) => void;
}

/**
 * Connects to `target`, runs TLS (when enabled) and the dialer side of the handshake within
 * `handshake_grace`, and installs the link. Resolves true when installed; never rejects on peer
 * behaviour.
 */
export async function dialPeer(target: PeerAddress, options: DialPeerOptions): Promise<boolean> {
  const { identity, bus, tls, pending, refused } = options;
  const remote = `${target.ip}:${target.port}`;
  const refuse = (reason: HandshakeRefusedInfo['reason'], statusByte: number | null): false => {
    refused({ direction: 'outbound', peer: target.replicaId, reason, statusByte, remote });
    return false;
  };
  const deadline = new Deadline(bus.handshakeGraceMs);
  const raw = connect({ host: target.ip, port: target.port, noDelay: true });
  raw.on('error', () => undefined);
  pending.add(raw);
  deadline.onExpire(() => raw.destroy());
  let socket: Socket = raw;
  try {
    if (!(await connected(raw))) {
      deadline.cancel();
      return refuse(deadline.expired ? 'deadline' : 'connect_failed', null);
    }
    let exporter: Uint8Array | null = null;
    if (tls !== null) {
      const secured = await dialTls(raw, target, tls, deadline);
      if (!secured.ok) {
        deadline.cancel();
        return refuse(secured.reason, null);
      }
      socket = secured.socket;
      exporter = secured.exporter;
      pending.add(socket);
      deadline.onExpire(() => socket.destroy());
    }
    const machine = new DialerHandshake({ identity, peer: target.replicaId, tlsExporter: exporter, frameSizeMax: bus.maxMessageSizeBytes, randomBytes: options.randomBytes });
    const result = await runHandshake(socket, machine, deadline, bus.closeGraceMs);
    deadline.cancel();
    if (!result.ok) return refuse(result.reason, result.statusByte);
    return await options.install(target.replicaId, socket, result.leftover, { direction: 'outbound', tls: tls !== null, handedOff: false });
  } finally {
    pending.delete(raw);
    pending.delete(socket);
  }
}

/** Resolves true on 'connect', false if the socket errors or closes first. */
function connected(socket: Socket): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean): void => {
      socket.off('connect', onConnect);
      socket.off('close', onClose);
      resolve(ok);
    };
    const onConnect = (): void => done(true);
    const onClose = (): void => done(false);
    socket.once('connect', onConnect);
    socket.once('close', onClose);
  });
}
