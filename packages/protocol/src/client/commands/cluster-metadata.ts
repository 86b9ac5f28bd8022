import { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readLongString, readShortString, writeLongString, writeShortString } from '../encodings/name.js';
import type { BodyParts } from './command-codec.js';

/**
 * GetClusterMetadata reply (apache/iggy core/binary_protocol/src/responses/cluster/, struct
 * `ClusterMetadataResponse`):
 *
 *   [name_len:u32][name][nodes_count:u32] x node
 *   node: [name_len:u32][name][ip_len:u32][ip][tcp:u16][quic:u16][http:u16][websocket:u16][role:u8][status:u8]
 */
export interface ClusterNode {
  readonly name: string;
  readonly ip: string;
  readonly tcpPort: number;
  readonly quicPort: number;
  readonly httpPort: number;
  readonly websocketPort: number;
  readonly role: number;
  readonly status: number;
}

export interface ClusterMetadata {
  readonly name: string;
  readonly nodes: readonly ClusterNode[];
}

export const CLUSTER_NODE_MIN_SIZE = 18;

function writeNode(w: ByteWriter, n: ClusterNode): void {
  writeLongString(w, n.name);
  writeLongString(w, n.ip);
  w.u16(n.tcpPort).u16(n.quicPort).u16(n.httpPort).u16(n.websocketPort).u8(n.role).u8(n.status);
}

function readNode(r: ByteReader): ClusterNode {
  return {
    name: readLongString(r, 'node_name'),
    ip: readLongString(r, 'node_ip'),
    tcpPort: r.u16('tcp_port'),
    quicPort: r.u16('quic_port'),
    httpPort: r.u16('http_port'),
    websocketPort: r.u16('websocket_port'),
    role: r.u8('node_role'),
    status: r.u8('node_status'),
  };
}

export const CLUSTER_METADATA: BodyParts<ClusterMetadata> = {
  write: (w, m) => {
    writeLongString(w, m.name);
    w.u32(m.nodes.length);
    for (const n of m.nodes) writeNode(w, n);
  },
  read: (r) => {
    const name = readLongString(r, 'cluster_name');
    const count = r.u32('nodes_count');
    const nodes: ClusterNode[] = [];
    if (checkCount(r, count, CLUSTER_NODE_MIN_SIZE, 'nodes')) {
      for (let i = 0; i < count && !r.failed; i++) nodes.push(readNode(r));
    }
    return { name, nodes };
  },
};

/**
 * Shoal extension of the GetClusterMetadata reply: who leads each consensus group, appended
 * AFTER the standard payload above. Stock 0.11.0 decoders read the standard part and ignore
 * trailing bytes; the Shoal SDK reads this section to send each partition write straight to the
 * partition's primary (docs/cluster.md "GetClusterMetadata extension"). All integers little-endian.
 *
 *   [magic: u32 = "SHG1"][length: u32 = bytes after this field]
 *   [version: u8 = 1][metadata_view: u32][metadata_primary: u8]
 *   [nodes_count: u8] x [replica_id: u8]                  the standard node list's replica ids, in order
 *   [topics_count: u32] x topic
 *   topic:     [stream_id: u32][stream_name: u8 len + UTF-8][topic_id: u32][topic_name: u8 len + UTF-8]
 *              [partitions_count: u32] x [partition_id: u32][view: u32][primary: u8]
 *
 * A primary is a replica id; 0xFF (`GROUP_PRIMARY_UNKNOWN`) when the answering node does not
 * know one (a view change or recovery in progress there, or the group not open yet). Every
 * value is the answering node's view of the cluster: a hint for routing, never authoritative (a
 * write sent to a node that is not the primary is answered 58 and retried).
 */
export const CLUSTER_GROUPS_MAGIC = 0x3147_4853; // "SHG1" as bytes
export const CLUSTER_GROUPS_VERSION = 1;
export const GROUP_PRIMARY_UNKNOWN = 0xff;

export interface ClusterPartitionPrimary {
  readonly partitionId: number;
  readonly view: number;
  readonly primary: number;
}

export interface ClusterTopicPrimaries {
  readonly streamId: number;
  readonly streamName: string;
  readonly topicId: number;
  readonly topicName: string;
  readonly partitions: readonly ClusterPartitionPrimary[];
}

export interface ClusterGroups {
  readonly metadataView: number;
  readonly metadataPrimary: number;
  /** Replica id of each node of the standard list, in its order. */
  readonly nodeReplicaIds: readonly number[];
  readonly topics: readonly ClusterTopicPrimaries[];
}

export function writeClusterGroups(w: ByteWriter, groups: ClusterGroups): void {
  w.u32(CLUSTER_GROUPS_MAGIC);
  const lengthAt = w.length;
  w.u32(0).u8(CLUSTER_GROUPS_VERSION).u32(groups.metadataView).u8(groups.metadataPrimary);
  w.u8(groups.nodeReplicaIds.length);
  for (const id of groups.nodeReplicaIds) w.u8(id);
  w.u32(groups.topics.length);
  for (const t of groups.topics) {
    w.u32(t.streamId);
    writeShortString(w, t.streamName);
    w.u32(t.topicId);
    writeShortString(w, t.topicName);
    w.u32(t.partitions.length);
    for (const p of t.partitions) w.u32(p.partitionId).u32(p.view).u8(p.primary);
  }
  w.patchU32(lengthAt, w.length - lengthAt - 4);
}

/**
 * Reads the extension if the payload has one after the standard part: null when absent (a stock
 * server) or undecodable (a future version: routing falls back to learning).
 */
export function readClusterGroups(r: ByteReader): ClusterGroups | null {
  if (r.remaining < 8) return null;
  if (r.u32('groups_magic') !== CLUSTER_GROUPS_MAGIC) return null;
  const length = r.u32('groups_length');
  if (length > r.remaining) return null;
  const s = new ByteReader(r.bytes, r.offset, r.offset + length);
  r.offset += length;
  if (s.u8('groups_version') !== CLUSTER_GROUPS_VERSION) return null;
  const metadataView = s.u32('metadata_view');
  const metadataPrimary = s.u8('metadata_primary');
  const nodeReplicaIds: number[] = [];
  const nodes = s.u8('nodes_count');
  for (let i = 0; i < nodes && !s.failed; i++) nodeReplicaIds.push(s.u8('replica_id'));
  const topics: ClusterTopicPrimaries[] = [];
  const topicsCount = s.u32('topics_count');
  if (!checkCount(s, topicsCount, 14, 'topics')) return null;
  for (let i = 0; i < topicsCount && !s.failed; i++) {
    const streamId = s.u32('stream_id');
    const streamName = readShortString(s, 'stream_name');
    const topicId = s.u32('topic_id');
    const topicName = readShortString(s, 'topic_name');
    const count = s.u32('partitions_count');
    if (!checkCount(s, count, 9, 'partitions')) return null;
    const partitions: ClusterPartitionPrimary[] = [];
    for (let j = 0; j < count && !s.failed; j++) partitions.push({ partitionId: s.u32('partition_id'), view: s.u32('view'), primary: s.u8('primary') });
    topics.push({ streamId, streamName, topicId, topicName, partitions });
  }
  return s.failed ? null : { metadataView, metadataPrimary, nodeReplicaIds, topics };
}
