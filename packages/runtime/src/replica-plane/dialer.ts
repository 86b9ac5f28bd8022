/**
 * Outbound dialing (replication-semantics.md §3.2): this replica dials only peers with a
 * strictly greater replica id, at start, promptly when a link drops, and on a safety-net sweep
 * every `message_bus.reconnect_period`, re-dialing each target that is neither installed nor has
 * an attempt pending.
 *
 * - One attempt per peer at a time. An attempt always settles (its deadline is
 *   `handshake_grace`); as a safety net a pending entry older than grace + period is forgotten.
 * - Prompt re-dial: a link that was up for at least a period and drops is re-dialed at once
 *   (a restarted or partitioned peer must not wait a whole period: issue 12 measured 35-45 s
 *   stalls when the sweep and its whole-sweep backoff decided). Each consecutive failure (a
 *   failed attempt, or a link that died younger than a period) doubles the wait from
 *   `REDIAL_BASE_MS`, capped at the period; a link that stays up a period resets it.
 * - A restarting peer: for `RESTART_WINDOW_MS` after a stable link dropped, the failed attempts
 *   (the peer's port refuses while its process restarts) are capped at `RESTART_REDIAL_CAP_MS`
 *   instead of the period, so the link is back within that cap of the peer listening again.
 *   The doubling up to the period let a peer that restarted in ~2 s wait another 1-2 s for its
 *   links (the dials had reached 0.8 s, then 1.6 s apart), and its metadata and partitions stayed
 *   latched meanwhile: a primary killed in that window stalled writes for ~3 s (the nemesis).
 *   A refused dial on a LAN costs a SYN and a RST; after the window a peer that stays away is
 *   dialed with the usual backoff.
 *
 *   due(target) ─┬─ installed? ─────────────── skip
 *                ├─ pending (younger than grace + period)? ── skip
 *                ├─ backing off (now < nextAttemptAt)? ─────── skip (a timer wakes at nextAttemptAt)
 *                └─ attempt(target) ─▶ true: failures = 0   false: failures++, nextAttemptAt = now + wait(failures)
 *   linkDown(target): shortLived = (up >= period ? 0 : shortLived + 1); failures = shortLived;
 *                     nextAttemptAt = now + wait(failures)
 *   wait(0) = 0, wait(n) = min(REDIAL_BASE_MS × 2^(n-1), cap)
 *   cap = RESTART_REDIAL_CAP_MS within RESTART_WINDOW_MS of a stable link's drop, else reconnect_period
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

/** The first re-dial after a failure; doubles per consecutive failure up to `reconnect_period`. */
export const REDIAL_BASE_MS = 100;
/** The longest re-dial wait while a peer whose stable link dropped is presumably restarting. */
export const RESTART_REDIAL_CAP_MS = 200;
/** How long after a stable link's drop the restart cap applies. */
export const RESTART_WINDOW_MS = 60_000;

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
  /** One-shot timer (the prompt re-dials); injectable for tests. Returns its cancel. */
  readonly setTimer?: (fn: () => void, ms: number) => () => void;
  /** First re-dial wait after a failure (default `REDIAL_BASE_MS`). */
  readonly redialBaseMs?: number;
  /** The restart cap and window (defaults `RESTART_REDIAL_CAP_MS`, `RESTART_WINDOW_MS`). */
  readonly restartRedialCapMs?: number;
  readonly restartWindowMs?: number;
}

interface TargetState {
  readonly target: PeerAddress;
  pendingSince: number | null;
  failures: number;
  nextAttemptAt: number;
  attempts: number;
  /** When the current link was installed (null: none installed by this dialer). */
  installedAt: number | null;
  /** Consecutive links that died younger than a period (a peer that accepts, then drops us). */
  shortLived: number;
  /** When a stable link last dropped (null: none since the last install): the restart window. */
  stableDroppedAt: number | null;
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
  readonly #setTimer: (fn: () => void, ms: number) => () => void;
  #timer: NodeJS.Timeout | null = null;
  /** The armed prompt re-dial: when it fires and how to cancel it. */
  #wake: { readonly at: number; readonly cancel: () => void } | null = null;
  #stopped = false;

  constructor(options: DialerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#setTimer = options.setTimer ?? unrefTimer;
    this.#targets = options.peers
      .filter((peer) => peer.replicaId > options.selfId)
      .sort((a, b) => a.replicaId - b.replicaId)
      .map((target) => ({ target, pendingSince: null, failures: 0, nextAttemptAt: 0, attempts: 0, installedAt: null, shortLived: 0, stableDroppedAt: null }));
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
    this.#wake?.cancel();
    this.#wake = null;
  }

  /**
   * The link to `peer` closed (either side): re-dial it at once if it had been up a period,
   * else after the backoff wait (a link that keeps dying young must not become a hot loop).
   */
  linkDown(peer: number): void {
    const state = this.#targets.find((t) => t.target.replicaId === peer);
    if (state === undefined || this.#stopped) return;
    const now = this.#now();
    const stable = state.installedAt !== null && now - state.installedAt >= this.#options.reconnectPeriodMs;
    state.installedAt = null;
    state.shortLived = stable ? 0 : state.shortLived + 1;
    if (stable) state.stableDroppedAt = now;
    // Failed attempts from here on continue the doubling where the short-lived links left it.
    state.failures = state.shortLived;
    state.nextAttemptAt = now + this.#wait(state.failures, state);
    this.#arm();
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
    this.#arm();
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
      state.installedAt = this.#now();
      state.stableDroppedAt = null;
      state.nextAttemptAt = 0;
      return;
    }
    state.failures++;
    state.nextAttemptAt = this.#now() + this.#wait(state.failures, state);
    this.#arm();
  }

  #wait(failures: number, state: TargetState): number {
    if (failures === 0) return 0;
    const base = this.#options.redialBaseMs ?? REDIAL_BASE_MS;
    const period = this.#options.reconnectPeriodMs;
    const restarting = state.stableDroppedAt !== null && this.#now() - state.stableDroppedAt < (this.#options.restartWindowMs ?? RESTART_WINDOW_MS);
    const cap = restarting ? Math.min(this.#options.restartRedialCapMs ?? RESTART_REDIAL_CAP_MS, period) : period;
    return Math.min(base * 2 ** Math.min(failures - 1, 30), cap);
  }

  /** Arms one timer for the earliest re-dial that falls before the next sweep would. */
  #arm(): void {
    if (this.#stopped) return;
    let at = Infinity;
    for (const state of this.#targets) {
      if (state.pendingSince !== null || this.#options.isInstalled(state.target.replicaId)) continue;
      at = Math.min(at, state.nextAttemptAt);
    }
    if (at === Infinity || (this.#wake !== null && this.#wake.at <= at)) return;
    this.#wake?.cancel();
    const wake = { at, cancel: this.#setTimer(() => {
      if (this.#wake === wake) this.#wake = null;
      this.sweep();
    }, Math.max(0, at - this.#now())) };
    this.#wake = wake;
  }
}

function unrefTimer(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
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
