/**
 * Checker for `manifest.json`: each vector decodes to its `entry_len` and `entries`, its trailer
 * is the listed one, it re-encodes from its entries to the same bytes, and its artifacts (when
 * given) match their entries' len and XXH3; each `negative` entry must be refused.
 */
import { fromHex, toHex } from '@shoal/stdx';
import { decodeManifest, encodeManifest, type ManifestEntry, verifyArtifact } from '../../src/replica/index.js';
import {
  big,
  bytesEqual,
  entryName,
  firstDifference,
  isRecord,
  listOf,
  num,
  problems,
  str,
  type Json,
} from './check-replica-frames.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

/**
 * A u64 given as hex. manifest.json writes these as the number (big-endian digits, like
 * `xxh3_64_hex` in xxh3.json), although the README's convention says hex lists wire bytes; both
 * readings are accepted so either form of the file checks.
 */
function checkU64Hex(what: string, wire: Uint8Array, listed: string): string | null {
  const asNumber = toHex(wire.slice().reverse());
  const lower = listed.toLowerCase();
  return lower === asNumber || lower === toHex(wire) ? null : `${what}: expected ${listed}, got ${asNumber} (wire ${toHex(wire)})`;
}

function checkVector(entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const bytes = fromHex(str(entry, 'hex'));
  const decoded = decodeManifest(bytes);
  if (!decoded.ok) return `decode refused a valid manifest: ${decoded.reason}`;
  const manifest = decoded.value;
  const out: (string | null)[] = [];
  if (entry['entry_len'] !== undefined) out.push(expectEqual('entry_len', manifest.entryLen, num(entry, 'entry_len')));
  if (typeof entry['trailer_hex'] === 'string') out.push(checkU64Hex('trailer_hex', bytes.subarray(bytes.length - 8), entry['trailer_hex']));
  const listed = Array.isArray(entry['entries']) ? entry['entries'] : [];
  out.push(expectEqual('entry count', manifest.entries.length, listed.length));
  const fromFields: ManifestEntry[] = [];
  listed.forEach((raw, i) => {
    if (!isRecord(raw)) {
      out.push(`entries[${i}] is not an object`);
      return;
    }
    const expected = {
      kind: num(raw, 'kind'),
      frontier: big(raw['frontier'], 'frontier'),
      len: big(raw['len'], 'len'),
      checksum: big(raw['checksum'], 'checksum'),
    };
    const got = manifest.entries[i];
    if (got === undefined) return;
    out.push(expectEqual(`entries[${i}].kind`, got.kind, expected.kind));
    out.push(expectEqual(`entries[${i}].frontier`, got.frontier, expected.frontier));
    out.push(expectEqual(`entries[${i}].len`, got.len, expected.len));
    out.push(expectEqual(`entries[${i}].checksum`, got.checksum, expected.checksum));
    if (typeof raw['checksum_hex'] === 'string') {
      const wire = new Uint8Array(8);
      new DataView(wire.buffer).setBigUint64(0, got.checksum, true);
      out.push(checkU64Hex(`entries[${i}].checksum_hex`, wire, raw['checksum_hex']));
    }
    // The listed fields name only the 25 known bytes; a longer entry's tail comes from the input.
    fromFields.push(got.extension !== undefined ? { ...expected, extension: got.extension } : expected);
  });
  const reencoded = encodeManifest(fromFields, manifest.entryLen);
  if (!bytesEqual(reencoded, bytes)) out.push(`re-encode differs: ${firstDifference(reencoded, bytes)}`);
  const artifacts = Array.isArray(entry['artifacts']) ? entry['artifacts'] : [];
  artifacts.forEach((raw, i) => {
    const described = manifest.entries[i];
    const hex = isRecord(raw) ? raw['hex'] : raw;
    if (described === undefined || typeof hex !== 'string') return;
    const reason = verifyArtifact(described, fromHex(hex));
    if (reason !== null) out.push(`artifacts[${i}]: ${reason}`);
  });
  return problems(out);
}

export function manifestRejections(doc: unknown): { name: string; reason: string | null; expect: string }[] {
  return listOf(doc, 'negative').map((entry, i) => {
    const record: Json = isRecord(entry) ? entry : {};
    const decoded = typeof record['hex'] === 'string' ? decodeManifest(fromHex(record['hex'])) : null;
    return {
      name: entryName(entry, i),
      reason: decoded === null ? 'malformed entry' : decoded.ok ? null : decoded.reason,
      expect: typeof record['expect'] === 'string' ? record['expect'] : '',
    };
  });
}

export const checkManifest: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] => {
  const outcomes: VectorOutcome[] = [];
  listOf(doc, 'vectors').forEach((entry, i) => {
    outcomes.push(checkEntry(`${fileName}#vectors/${entryName(entry, i)}`, () => checkVector(entry)));
  });
  listOf(doc, 'negative').forEach((entry, i) => {
    outcomes.push(
      checkEntry(`${fileName}#negative/${entryName(entry, i)}`, () => {
        if (!isRecord(entry)) return 'entry is not an object';
        const decoded = decodeManifest(fromHex(str(entry, 'hex')));
        return decoded.ok ? `accepted, but expected ${String(entry['expect'])}` : null;
      }),
    );
  });
  return outcomes;
};

export default checkManifest;
