/**
 * The forwarding links of one shard, one per peer node, dialed on first use
 * (docs/cluster.md "Forwarded partition requests"). The shard that owns a partition's local
 * replica is the one that forwards its requests, so the links live where the partition does.
 */
import { randomBytes } from 'node:crypto';
import { clusterIdFromName } from '@shoal/protocol';
import type { ClientRequestMessage } from '../channels/messages.js';
import type { ShoalConfig } from '../config/index.js';
import type { Logger } from '../log/logger.js';
import { ForwardLink, type ForwardLinkSettings, type ForwardOutcomes } from './forward-link.js';
import { CHANNEL_HEADER_SIZE } from './frames.js';
import { channelKeys } from './handshake.js';

/** Requests one link may have outstanding (each client connection has at most 64 in flight). */
export const FORWARD_WINDOW_REQUESTS = 8192;
export const FORWARD_WINDOW_BYTES = 256 * 1024 * 1024;
export const FORWARD_CONNECT_TIMEOUT_MS = 3_000;

export interface LinkStats {
  readonly peer: number;
  readonly up: boolean;
  readonly outstanding: number;
  readonly forwarded: number;
  readonly answered: number;
  readonly failed: number;
  readonly connects: number;
}

export class ForwardLinks {
  readonly #config: ShoalConfig;
  readonly #settings: ForwardLinkSettings | null;
  readonly #outcomes: ForwardOutcomes;
  readonly #log: Logger;
  readonly #links = new Map<number, ForwardLink>();

  constructor(config: ShoalConfig, outcomes: ForwardOutcomes, log: Logger) {
    this.#config = config;
    this.#outcomes = outcomes;
    this.#log = log;
    const keys = config.cluster.enabled && config.node.replicaCount > 1 ? channelKeys(config.cluster.auth) : null;
    this.#settings = keys === null ? null : {
      identity: { cluster: clusterIdFromName(config.cluster.name), self: config.node.replicaId, replicaCount: config.node.replicaCount, keys },
      frameSizeMax: config.tcp.frameSizeMaxBytes + 2 * CHANNEL_HEADER_SIZE,
      windowRequests: FORWARD_WINDOW_REQUESTS,
      windowBytes: FORWARD_WINDOW_BYTES,
      timeoutMs: config.cluster.forwardTimeoutMs,
      connectTimeoutMs: FORWARD_CONNECT_TIMEOUT_MS,
      randomBytes: (size) => new Uint8Array(randomBytes(size)),
      tls: config.tcp.tls.enabled,
    };
  }

  /** Forwarding needs `[cluster.auth]` (the channel's key): off, requests get 58 as before. */
  get enabled(): boolean {
    return this.#settings !== null;
  }

  /** Whether requests can be carried to `peer` (auth on, the peer has a client port). */
  reaches(peer: number): boolean {
    return this.#settings !== null && this.#address(peer) !== null;
  }

  /** Carries a request to `peer` (the partition's primary as this replica knows it; `reaches(peer)`). */
  forward(peer: number, message: ClientRequestMessage): void {
    this.#link(peer).send(message, Date.now());
  }

  /** `group`'s requests carried to `peer` end now (57 sent, 58 queued): a newer view has another primary. */
  abandonGroup(peer: number, group: bigint): number {
    return this.#links.get(peer)?.abandonGroup(group) ?? 0;
  }

  /** Outstanding requests towards `peer`. */
  outstanding(peer: number): number {
    return this.#links.get(peer)?.outstanding ?? 0;
  }

  /** Deadlines (the shard's once-a-second sweep). */
  sweep(nowMs: number): void {
    for (const link of this.#links.values()) link.sweep(nowMs);
  }

  close(): void {
    for (const link of this.#links.values()) link.close();
  }

  stats(): LinkStats[] {
    return [...this.#links.values()].map((l) => ({ peer: l.peer, up: l.up, outstanding: l.outstanding, ...l.counters }));
  }

  #link(peer: number): ForwardLink {
    let link = this.#links.get(peer);
    if (link !== undefined) return link;
    const settings = this.#settings;
    const address = this.#address(peer);
    if (settings === null || address === null) throw new Error(`forwarding: replica ${peer} cannot be reached (check reaches() first)`);
    link = new ForwardLink(peer, address, settings, this.#outcomes, this.#log);
    this.#links.set(peer, link);
    return link;
  }

  /** A peer's client port at its roster `ip` (the cluster network), or null. */
  #address(peer: number): { host: string; port: number } | null {
    if (peer === this.#config.node.replicaId) return null;
    const node = this.#config.cluster.nodes.find((n) => n.replicaId === peer);
    return node === undefined || node.ports.tcp === null ? null : { host: node.ip, port: node.ports.tcp };
  }
}
