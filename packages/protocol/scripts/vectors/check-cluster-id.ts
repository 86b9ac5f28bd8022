/**
 * Checker for `cluster_id.json`: the cluster id of each name (BLAKE3 digest, first 16 bytes,
 * little-endian u128) in every form the vector lists.
 */
import { fromHex, toHex } from '@shoal/stdx';
import { blake3 } from '../../src/hash/blake3.js';
import { clusterIdBytes, clusterIdFromName } from '../../src/replica/index.js';
import { big, entryName, isRecord, listOf, problems, str } from './check-replica-frames.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

function checkVector(entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const out: (string | null)[] = [];
  const name = str(entry, 'name');
  const utf8 = new TextEncoder().encode(name);
  if (typeof entry['name_utf8_hex'] === 'string') out.push(expectEqual('name_utf8_hex', toHex(utf8), entry['name_utf8_hex']));
  if (typeof entry['blake3_hex'] === 'string') out.push(expectEqual('blake3', toHex(blake3(utf8)), entry['blake3_hex']));
  const bytes = clusterIdBytes(name);
  const id = clusterIdFromName(name);
  if (typeof entry['cluster_id_bytes_hex'] === 'string') {
    out.push(expectEqual('cluster id bytes', toHex(bytes), entry['cluster_id_bytes_hex']));
    const fromBytes = fromHex(entry['cluster_id_bytes_hex']).reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);
    out.push(expectEqual('cluster id from the listed bytes', id, fromBytes));
  }
  if (entry['cluster_id_dec'] !== undefined) out.push(expectEqual('cluster_id_dec', id, big(entry['cluster_id_dec'], 'cluster_id_dec')));
  if (typeof entry['cluster_id_hex_be'] === 'string') {
    out.push(expectEqual('cluster_id_hex_be', id.toString(16).padStart(32, '0'), entry['cluster_id_hex_be'].toLowerCase()));
  }
  return problems(out);
}

export const checkClusterId: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] =>
  listOf(doc, 'vectors').map((entry, i) => checkEntry(`${fileName}#vectors/${entryName(entry, i)}`, () => checkVector(entry)));

export default checkClusterId;
