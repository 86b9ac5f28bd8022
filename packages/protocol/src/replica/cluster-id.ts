/**
 * Cluster id (replication-semantics.md §3.1, cluster.mdx "Handshake"): the first 16 bytes of
 * BLAKE3(cluster name as UTF-8), read as a little-endian u128. Written little-endian into header
 * bytes 32..48, the 16 bytes are simply the digest's first 16 bytes in digest order.
 */
import { blake3 } from '../hash/blake3.js';
import { readU128Big } from './little-endian.js';

export const CLUSTER_ID_SIZE = 16;

const utf8 = new TextEncoder();

/** The 16 bytes that header offset 32..48 carries for this cluster name. */
export function clusterIdBytes(name: string): Uint8Array {
  return blake3(utf8.encode(name)).slice(0, CLUSTER_ID_SIZE);
}

/** The cluster id of this cluster name as a u128. */
export function clusterIdFromName(name: string): bigint {
  return readU128Big(clusterIdBytes(name), 0);
}
