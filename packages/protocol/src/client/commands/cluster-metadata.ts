import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readLongString, writeLongString } from '../encodings/name.js';
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
