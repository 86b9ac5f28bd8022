/**
 * What the replica plane needs from the configuration, as plain data (structured-cloneable, so
 * a worker can receive it), and the identity derived from it at start.
 *
 *   ShoalConfig ──replicaPlaneSettingsFrom──▶ ReplicaPlaneSettings ──deriveIdentity──▶ ReplicaPlaneIdentity
 *                                             (tests build these directly)            (cluster id, MAC keys)
 */
import { isIP } from 'node:net';
import { join } from 'node:path';
import {
  SHARED_SECRET_MIN_BYTES,
  clusterIdFromName,
  deriveMacKey,
  type MacKeys,
} from '@shoal/protocol';
import type { ClusterAuthConfig, ClusterTlsConfig, MessageBusConfig, ShoalConfig } from '../config/index.js';
import { ReplicaPlaneError } from './errors.js';

/** One roster entry as the replica plane sees it: the `ip` to dial and its `ports.tcp_replica`. */
export interface PeerAddress {
  readonly replicaId: number;
  readonly ip: string;
  readonly port: number;
}

export interface ReplicaPlaneTlsSettings extends ClusterTlsConfig {
  /** Self-signed mode: where the generated certificate and key are kept across restarts. */
  readonly selfSignedDir: string;
}

export interface ReplicaPlaneSettings {
  /** `cluster.name`; hashed into the cluster id (replication-semantics.md §3.1). */
  readonly clusterName: string;
  readonly selfId: number;
  readonly replicaCount: number;
  /** This node's roster `ip` (the self-signed certificate's IP SAN). */
  readonly selfIp: string;
  /** Where the replica listener binds; null: no listener (a plane that only dials). */
  readonly listen: { readonly host: string; readonly port: number } | null;
  /** Every other roster node. The plane dials those with a greater id and accepts the lower ones. */
  readonly peers: readonly PeerAddress[];
  readonly auth: ClusterAuthConfig;
  readonly tls: ReplicaPlaneTlsSettings;
  readonly messageBus: MessageBusConfig;
}

/** Directory (under `system.path`) that keeps the self-signed replica certificate. */
export const SELF_SIGNED_DIR_NAME = 'tls';

/** The replica-plane view of a loaded configuration (cluster mode). */
export function replicaPlaneSettingsFrom(config: ShoalConfig): ReplicaPlaneSettings {
  const selfId = config.node.replicaId;
  const self = config.cluster.nodes.find((node) => node.replicaId === selfId);
  const listen = config.node.listeners.tcpReplica;
  return {
    clusterName: config.cluster.name,
    selfId,
    replicaCount: config.node.replicaCount,
    selfIp: self?.ip ?? listen?.host ?? '127.0.0.1',
    listen: listen === null ? null : { host: listen.host, port: listen.port },
    peers: config.cluster.nodes
      .filter((node) => node.replicaId !== selfId)
      .map((node) => ({ replicaId: node.replicaId, ip: node.ip, port: node.ports.tcpReplica })),
    auth: config.cluster.auth,
    tls: { ...config.cluster.tls, selfSignedDir: join(config.system.path, SELF_SIGNED_DIR_NAME) },
    messageBus: config.messageBus,
  };
}

/** What every handshake needs, derived once. */
export interface ReplicaPlaneIdentity {
  /** `clusterIdFromName(clusterName)`: header bytes 32..48 of every replica frame. */
  readonly cluster: bigint;
  readonly selfId: number;
  readonly replicaCount: number;
  /** The MAC keys (current, and previous during a rotation); null with auth disabled. */
  readonly keys: MacKeys | null;
}

const utf8 = new TextEncoder();
/** The replica id is one header byte, and consensus sizes arrays for at most 32 replicas. */
export const REPLICA_COUNT_MAX = 32;

/**
 * Checks the settings and derives the identity; throws `ReplicaPlaneError` for anything the
 * plane refuses to run with. Configuration validation (packages/runtime/src/config) already
 * refuses these at boot; this repeats the rules that protect the wire, for settings built by hand.
 */
export function deriveIdentity(settings: ReplicaPlaneSettings): ReplicaPlaneIdentity {
  checkRoster(settings);
  checkLimits(settings);
  const { auth, tls } = settings;
  if (tls.enabled && !auth.enabled) {
    throw new ReplicaPlaneError(
      'tls_requires_auth',
      'cluster.tls.enabled requires cluster.auth.enabled: replica TLS authenticates only the acceptor, the PSK handshake authenticates the peer',
    );
  }
  if (!auth.enabled) return { cluster: clusterIdFromName(settings.clusterName), selfId: settings.selfId, replicaCount: settings.replicaCount, keys: null };
  const shared = utf8.encode(auth.sharedSecret);
  const previous = utf8.encode(auth.previousSharedSecret);
  if (shared.length < SHARED_SECRET_MIN_BYTES) {
    throw new ReplicaPlaneError('auth_secret_invalid', `cluster.auth.shared_secret must be at least ${SHARED_SECRET_MIN_BYTES} bytes (got ${shared.length})`);
  }
  if (previous.length > 0 && previous.length < SHARED_SECRET_MIN_BYTES) {
    throw new ReplicaPlaneError('auth_secret_invalid', `cluster.auth.previous_shared_secret must be at least ${SHARED_SECRET_MIN_BYTES} bytes (got ${previous.length})`);
  }
  const keys: MacKeys = previous.length > 0 ? { current: deriveMacKey(shared), previous: deriveMacKey(previous) } : { current: deriveMacKey(shared) };
  return { cluster: clusterIdFromName(settings.clusterName), selfId: settings.selfId, replicaCount: settings.replicaCount, keys };
}

function checkRoster(settings: ReplicaPlaneSettings): void {
  const { selfId, replicaCount } = settings;
  if (!(Number.isInteger(replicaCount) && replicaCount >= 1 && replicaCount <= REPLICA_COUNT_MAX)) {
    throw new ReplicaPlaneError('settings_invalid', `replica count ${replicaCount} outside 1..${REPLICA_COUNT_MAX}`);
  }
  if (!(Number.isInteger(selfId) && selfId >= 0 && selfId < replicaCount)) {
    throw new ReplicaPlaneError('settings_invalid', `replica id ${selfId} outside 0..${replicaCount - 1}`);
  }
  const seen = new Set<number>([selfId]);
  for (const peer of settings.peers) {
    if (!(Number.isInteger(peer.replicaId) && peer.replicaId >= 0 && peer.replicaId < replicaCount) || seen.has(peer.replicaId)) {
      throw new ReplicaPlaneError('settings_invalid', `peer replica id ${peer.replicaId} is out of range or listed twice`);
    }
    seen.add(peer.replicaId);
    if (isIP(peer.ip) === 0) throw new ReplicaPlaneError('settings_invalid', `peer ${peer.replicaId}: ip ${peer.ip} is not a literal IP`);
    if (!(Number.isInteger(peer.port) && peer.port > 0 && peer.port <= 0xffff)) {
      throw new ReplicaPlaneError('settings_invalid', `peer ${peer.replicaId}: port ${peer.port} out of range`);
    }
  }
}

function checkLimits(settings: ReplicaPlaneSettings): void {
  const bus = settings.messageBus;
  const positive: [string, number][] = [
    ['message_bus.max_batch', bus.maxBatch],
    ['message_bus.peer_queue_capacity', bus.peerQueueCapacity],
    ['message_bus.reconnect_period', bus.reconnectPeriodMs],
    ['message_bus.handshake_grace', bus.handshakeGraceMs],
    ['message_bus.close_grace', bus.closeGraceMs],
    ['message_bus.close_peer_timeout', bus.closePeerTimeoutMs],
  ];
  for (const [key, value] of positive) {
    if (!(Number.isFinite(value) && value > 0)) throw new ReplicaPlaneError('settings_invalid', `${key} must be > 0 (got ${value})`);
  }
  if (!(Number.isInteger(bus.maxMessageSizeBytes) && bus.maxMessageSizeBytes > 256 && bus.maxMessageSizeBytes <= 0xffff_ffff)) {
    throw new ReplicaPlaneError('settings_invalid', `message_bus.max_message_size ${bus.maxMessageSizeBytes} outside 257..2^32-1`);
  }
}
