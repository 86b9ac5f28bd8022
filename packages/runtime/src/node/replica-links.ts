/**
 * Replica-plane frames inside a node, by consensus group (replication-semantics.md §10.3–10.4).
 *
 * ```
 *  peer socket, on the thread that owns its link (one per peer pair, node-wide):
 *    plaintext: handshake on the supervisor, fd handed to a shard (`adopt_replica`) → adopt()
 *    TLS:       the whole ReplicaPlane runs on one shard (the replica-I/O owner) → attachPlane()
 *     │ validated frames (replica-plane/peer-connection.ts), views valid during the call
 *     ▼
 *  onPeerFrames ─ groupOfReplicaFrame ─ ownerThreadOfGroup ─┬─ this thread: deliver(group, frame, ingress)
 *                                                           └─ other thread: ring `replica_frame` in
 *
 * Every inbound frame was validated once by its link (`PeerConnection`); the group's core is told
 * so (`FrameIngress.validated`), also after a ring crossing (only links put `in` frames on a
 * ring). A frame the link handed over (`owned`) keeps that on this thread; the ring copies.
 *  send(replica, group, frame) from a driver on any thread
 *     ─▶ the thread holding the link (status table `replicaOwner`) ─┬─ this thread: the link's queue
 *                                                                   └─ other: ring `replica_frame` out
 * ```
 *
 * One connection per peer pair lives on exactly one thread. Frames of one group keep their
 * order end to end: a group's driver lives on one thread, one ring (FIFO) connects it to the link
 * owner, one connection (FIFO) carries them, and one ring connects the peer's link owner to the
 * group's thread there.
 */
import { METADATA_GROUP, viewHeader } from '@shoal/protocol';
import type { ReplicaFrameMessage } from '../channels/messages.js';
import type { ShoalConfig } from '../config/index.js';
import type { Logger } from '../log/logger.js';
import type { HandshakeFigures, ReplicaPeerStats } from '../metrics/thread-stats.js';
import type { FrameIngress } from '@shoal/consensus';
import { LINK_VIEW, PeerConnection, adoptHandedOff, type LinkFrame, type ReplicaPlane } from '../replica-plane/index.js';
import { shardOfGroup } from '../shard/shard-of.js';
import type { StatusTable } from '../status/status-table.js';
import { METADATA_THREAD, shardThread } from './worker-data.js';

/** The consensus group a replica-plane frame belongs to (forwarding frames 26–29 carry none: metadata). */
export function groupOfReplicaFrame(frame: Uint8Array): bigint {
  const view = viewHeader(frame);
  if (view !== undefined && 'group' in view) return (view as { readonly group: bigint }).group;
  return METADATA_GROUP;
}

/** The mesh thread that runs a group's driver. */
export function ownerThreadOfGroup(group: bigint, shardCount: number): number {
  return group === METADATA_GROUP ? METADATA_THREAD : shardThread(shardOfGroup(group, shardCount));
}

/** What a link needs from `[message_bus]` (PeerConnection options). */
export interface LinkSettings {
  readonly replicaCount: number;
  readonly messageSizeMax: number;
  readonly queueCapacity: number;
  readonly maxBatch: number;
  readonly closeTimeoutMs: number;
}

/** A plane's handshake counters, for the metrics. */
export function handshakeFigures(plane: ReplicaPlane): HandshakeFigures {
  const stats = plane.stats();
  return { established: stats.handshakesEstablished, refused: { ...stats.handshakesRefused }, duplicatesClosed: stats.duplicatesClosed };
}

/** `[message_bus]` as a replica link needs it. */
export function linkSettings(config: ShoalConfig): LinkSettings {
  const bus = config.messageBus;
  return {
    replicaCount: config.node.replicaCount,
    messageSizeMax: bus.maxMessageSizeBytes,
    queueCapacity: bus.peerQueueCapacity,
    maxBatch: bus.maxBatch,
    closeTimeoutMs: bus.closePeerTimeoutMs,
  };
}

export interface ReplicaLinksOptions {
  /** This thread's mesh index. */
  readonly self: number;
  readonly shardCount: number;
  readonly status: StatusTable;
  readonly log: Logger;
  readonly link: LinkSettings;
  /** A frame for a group this thread runs (a view, valid during the call). */
  readonly deliver: (group: bigint, frame: Uint8Array, ingress: FrameIngress) => void;
  /** A frame for another thread (the ring copies it). */
  readonly ring: (thread: number, message: ReplicaFrameMessage) => void;
  /** An adopted (handed-off) link closed: the supervisor frees the pair slot. */
  readonly closed: (replica: number) => void;
}

interface PeerCounters {
  notConnected: number;
}

export class ReplicaLinks {
  readonly #o: ReplicaLinksOptions;
  /** Adopted plaintext links of this thread. */
  readonly #links = new Map<number, PeerConnection>();
  /** TLS: the plane runs on this thread and owns every link. */
  #plane: ReplicaPlane | null = null;
  readonly #counters = new Map<number, PeerCounters>();
  #closing = false;

  constructor(options: ReplicaLinksOptions) {
    this.#o = options;
  }

  /** A plaintext link handed over by the supervisor (fd + bytes read past the handshake). */
  adopt(replica: number, fd: number, leftover: Uint8Array): void {
    const o = this.#o;
    const { socket, leftover: bytes } = adoptHandedOff({ fd, leftover });
    if (this.#closing) {
      socket.destroy();
      o.closed(replica);
      return;
    }
    const connection = new PeerConnection({
      peer: replica,
      socket,
      leftover: bytes,
      replicaCount: o.link.replicaCount,
      messageSizeMax: o.link.messageSizeMax,
      queueCapacity: o.link.queueCapacity,
      maxBatch: o.link.maxBatch,
      closeTimeoutMs: o.link.closeTimeoutMs,
      onFrames: (peer, frames) => this.onPeerFrames(peer, frames),
      onClose: (peer, reason) => {
        o.log.info('replica link closed', { peer, reason });
        if (this.#links.get(peer) !== connection) return;
        this.#links.delete(peer);
        if (o.status.replicaOwner(peer) === o.self) o.status.publishReplicaOwner(peer, null);
        o.closed(peer);
      },
      log: o.log,
    });
    // The supervisor hands a peer over again only after this thread reported its link closed.
    this.#links.get(replica)?.destroy('local_close');
    this.#links.set(replica, connection);
    o.status.publishReplicaOwner(replica, o.self);
    o.log.info('replica link adopted', { peer: replica, fd });
    connection.start();
  }

  /** TLS: the plane on this thread owns every link; it reports peers up and down here. */
  attachPlane(plane: ReplicaPlane): void {
    this.#plane = plane;
  }

  peerUp(replica: number): void {
    this.#o.status.publishReplicaOwner(replica, this.#o.self);
  }

  peerDown(replica: number): void {
    if (this.#o.status.replicaOwner(replica) === this.#o.self) this.#o.status.publishReplicaOwner(replica, null);
  }

  /** Validated frames from a peer, routed by group (views: delivered or copied into a ring now). */
  onPeerFrames(peer: number, frames: readonly LinkFrame[]): void {
    const o = this.#o;
    for (const { bytes, ingress } of frames) {
      const group = groupOfReplicaFrame(bytes);
      const owner = ownerThreadOfGroup(group, o.shardCount);
      if (owner === o.self) o.deliver(group, bytes, ingress);
      else o.ring(owner, { kind: 'replica_frame', direction: 'in', replica: peer, group, frame: bytes });
    }
  }

  /** A driver of this thread sends to `replica`: on the link here, or through the owner's ring. */
  send(replica: number, group: bigint, frame: Uint8Array): void {
    const owner = this.#o.status.replicaOwner(replica);
    if (owner < 0) this.#count(replica).notConnected += 1;
    else if (owner === this.#o.self) this.#sendHere(replica, frame);
    else this.#o.ring(owner, { kind: 'replica_frame', direction: 'out', replica, group, frame });
  }

  /** A `replica_frame` from the ring: in → a group of this thread; out → a link of this thread. */
  onRing(message: ReplicaFrameMessage): void {
    if (message.direction === 'in') this.#o.deliver(message.group, message.frame, LINK_VIEW);
    else this.#sendHere(message.replica, message.frame.slice()); // the ring view dies after the visit
  }

  stats(): ReplicaPeerStats[] {
    const out: ReplicaPeerStats[] = [];
    const peers = new Set<number>([...this.#links.keys(), ...this.#counters.keys()]);
    const planeStats = this.#plane?.stats().peers ?? [];
    for (const p of planeStats) peers.add(p.peer);
    for (const peer of [...peers].sort((a, b) => a - b)) {
      const link = this.#links.get(peer);
      const s = link?.stats ?? planeStats.find((p) => p.peer === peer)?.connection ?? null;
      out.push({
        peer,
        connected: s !== null,
        framesIn: s?.framesIn ?? 0,
        framesOut: s?.framesOut ?? 0,
        bytesIn: s?.bytesIn ?? 0,
        bytesOut: s?.bytesOut ?? 0,
        queueDropped: s?.queueDropped ?? 0,
        dropReasons: { ...(s?.dropReasons ?? {}) },
        notConnected: this.#counters.get(peer)?.notConnected ?? 0,
      });
    }
    return out;
  }

  /** The plane's handshake figures when it runs on this thread (TLS), else null. */
  handshakes(): HandshakeFigures | null {
    return this.#plane === null ? null : handshakeFigures(this.#plane);
  }

  /** Shutdown: flush and close every link of this thread (the plane's, if it runs here). */
  async close(): Promise<void> {
    this.#closing = true;
    const closing: Promise<void>[] = [];
    for (const link of this.#links.values()) {
      closing.push(new Promise<void>((resolve) => link.onceClosed(resolve)));
      link.close('local_close');
    }
    if (this.#plane !== null) closing.push(this.#plane.stop());
    await Promise.all(closing);
  }

  #sendHere(replica: number, frame: Uint8Array): void {
    const plane = this.#plane;
    if (plane !== null) {
      const outcome = plane.send(replica, frame);
      if (outcome === 'not_connected' || outcome === 'closed') this.#count(replica).notConnected += 1;
      return;
    }
    const link = this.#links.get(replica);
    if (link === undefined || link.send(frame) === 'closed') this.#count(replica).notConnected += 1;
  }

  #count(replica: number): PeerCounters {
    let counters = this.#counters.get(replica);
    if (counters === undefined) {
      counters = { notConnected: 0 };
      this.#counters.set(replica, counters);
    }
    return counters;
  }
}
