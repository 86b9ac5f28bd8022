import { describe, expect, it } from 'vitest';
import { AssertionError, toHex } from '@shoal/stdx';
import { xxh3_64 } from '../src/hash/xxh3.js';
import {
  ArtifactKind,
  CLIENT_TABLE_ENTRIES_MAX,
  CONSUMER_OFFSETS_SECTION_MAX,
  MANIFEST_ENTRIES_MAX,
  decodeClientTable,
  decodeConsumerOffsets,
  decodeManifest,
  encodeClientTable,
  encodeConsumerOffsets,
  encodeFrame,
  encodeManifest,
  manifestEntryFor,
  verifyArtifact,
  type ClientTableEntry,
  type ConsumerOffsets,
} from '../src/replica/index.js';
import { CLUSTER } from './replica-fixtures.js';

/** Rewrites the 8-byte trailer so a test reaches the rule behind it. */
function retrail(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(bytes.length - 8, xxh3_64(bytes.subarray(0, bytes.length - 8)), true);
  return bytes;
}

/** `content` (without trailer) with a valid trailer appended. */
function sealed(content: Uint8Array): Uint8Array {
  const out = new Uint8Array(content.length + 8);
  out.set(content);
  return retrail(out);
}

const te = new TextEncoder();

describe('ISM1 manifest (§6.5)', () => {
  const sample = [manifestEntryFor(0, 192n, te.encode('snapshot-bytes')), manifestEntryFor(1, 195n, te.encode('table-bytes'))];

  it('encodes the §6.5 example byte for byte and round-trips', () => {
    const bytes = encodeManifest(sample);
    expect(toHex(bytes)).toBe(
      '49534d31020000001900c0000000000000000e000000000000000b9f080384ac8e2901c3000000000000000b000000000000003d79dd7c4daebef593d5b845d4548338',
    );
    expect(decodeManifest(bytes)).toEqual({ ok: true, value: { entryLen: 25, entries: sample } });
  });

  it('round-trips empty, unknown kinds, u64 extremes and longer entries (tail kept as extension)', () => {
    expect(decodeManifest(encodeManifest([]))).toEqual({ ok: true, value: { entryLen: 25, entries: [] } });
    const odd = [{ kind: 255, frontier: (1n << 64n) - 1n, len: 0n, checksum: 1n }];
    expect(decodeManifest(encodeManifest(odd))).toEqual({ ok: true, value: { entryLen: 25, entries: odd } });
    const tail = new Uint8Array(7).fill(0xab);
    const longer = sample.map((e) => ({ ...e, extension: tail }));
    const bytes = encodeManifest(longer, 32);
    const decoded = decodeManifest(bytes);
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value.entryLen).toBe(32);
    expect(decoded.value.entries.map(({ kind, frontier, len, checksum }) => ({ kind, frontier, len, checksum }))).toEqual(sample);
    expect(decoded.value.entries[0]?.extension).toEqual(tail);
    expect(encodeManifest(decoded.value.entries, 32)).toEqual(bytes);
    expect(encodeManifest(sample, 30).length).toBe(9 + 2 * 30 + 8);
  });

  it('refuses truncation, bad trailer, bad magic, short entries, too many entries, leftovers', () => {
    const good = encodeManifest(sample);
    expect(decodeManifest(good.subarray(0, 7))).toEqual({ ok: false, reason: 'manifest_truncated' });
    expect(decodeManifest(good.subarray(0, good.length - 1))).toEqual({ ok: false, reason: 'manifest_trailer_mismatch' });
    const flipped = good.slice();
    flipped[20] = (flipped[20] as number) ^ 1;
    expect(decodeManifest(flipped)).toEqual({ ok: false, reason: 'manifest_trailer_mismatch' });
    const magic = good.slice();
    magic[3] = 0x30;
    expect(decodeManifest(retrail(magic))).toEqual({ ok: false, reason: 'manifest_bad_magic' });
    expect(decodeManifest(sealed(te.encode('ISM')))).toEqual({ ok: false, reason: 'manifest_truncated' });
    expect(decodeManifest(sealed(te.encode('XYZW')))).toEqual({ ok: false, reason: 'manifest_bad_magic' });
    expect(decodeManifest(sealed(new Uint8Array([0x49, 0x53, 0x4d, 0x31, 0, 0, 0, 0])))).toEqual({ ok: false, reason: 'manifest_truncated' });
    const short = encodeManifest([]);
    short[8] = 24;
    expect(decodeManifest(retrail(short))).toEqual({ ok: false, reason: 'manifest_entry_too_short' });
    const many = encodeManifest([]);
    new DataView(many.buffer).setUint32(4, MANIFEST_ENTRIES_MAX + 1, true);
    expect(decodeManifest(retrail(many))).toEqual({ ok: false, reason: 'manifest_too_many_entries' });
    const missing = encodeManifest(sample);
    new DataView(missing.buffer).setUint32(4, 3, true);
    expect(decodeManifest(retrail(missing))).toEqual({ ok: false, reason: 'manifest_truncated' });
    const fewer = encodeManifest(sample);
    new DataView(fewer.buffer).setUint32(4, 1, true);
    expect(decodeManifest(retrail(fewer))).toEqual({ ok: false, reason: 'manifest_trailing_bytes' });
  });

  it('accepts exactly 65536 entries', () => {
    const entries = Array.from({ length: MANIFEST_ENTRIES_MAX }, (_, i) => ({ kind: 2, frontier: BigInt(i), len: 1n, checksum: 2n }));
    const decoded = decodeManifest(encodeManifest(entries));
    expect(decoded.ok && decoded.value.entries.length).toBe(MANIFEST_ENTRIES_MAX);
    expect(() => encodeManifest([...entries, entries[0] as never])).toThrow(AssertionError);
  });

  it('verifies artifacts by length and XXH3', () => {
    const entry = manifestEntryFor(ArtifactKind.SegmentLog, 0n, new Uint8Array([1, 2, 3]));
    expect(verifyArtifact(entry, new Uint8Array([1, 2, 3]))).toBeNull();
    expect(verifyArtifact(entry, new Uint8Array([1, 2]))).toBe('artifact_length_mismatch');
    expect(verifyArtifact(entry, new Uint8Array([1, 2, 4]))).toBe('artifact_checksum_mismatch');
  });
});

function reply(client: bigint, request: bigint, commit: bigint, bodyLength = 4): Uint8Array {
  return encodeFrame(8, {
    cluster: CLUSTER, view: 3, replica: 0, requestChecksum: 0n, context: 0n, client, op: commit, commit,
    timestamp: 0n, request, operation: 128, status: 0,
  }, new Uint8Array(bodyLength));
}

describe('ICT2 client table (§7.6)', () => {
  const entries: ClientTableEntry[] = [
    { clientId: 0x0123456789abcdeffedcba9876543210n, epoch: 7n, userId: 1, watermark: 3n, watermarkChecksum: 99n, replies: [reply(0x0123456789abcdeffedcba9876543210n, 3n, 10n)] },
    { clientId: 2n, epoch: 8n, userId: 2, watermark: 5n, watermarkChecksum: 0n, replies: [1n, 2n, 3n, 4n, 5n].map((r) => reply(2n, r, 10n + r, Number(r))) },
  ];

  it('round-trips, with latest_commit recomputed from the newest reply', () => {
    const bytes = encodeClientTable(entries);
    expect(toHex(bytes.subarray(0, 8))).toBe('4943543202000000');
    const decoded = decodeClientTable(bytes);
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value.map(({ latestCommit: _l, ...rest }) => rest)).toEqual(entries);
    expect(decoded.value.map((e) => e.latestCommit)).toEqual([10n, 15n]);
    expect(encodeClientTable(decoded.value)).toEqual(bytes);
    expect(decodeClientTable(encodeClientTable([]))).toEqual({ ok: true, value: [] });
  });

  it('accepts a reply whose slot is longer than its declared size', () => {
    const padded = new Uint8Array(300);
    padded.set(reply(9n, 1n, 1n, 4));
    const decoded = decodeClientTable(encodeClientTable([{ ...entries[1] as ClientTableEntry, clientId: 9n, replies: [padded] }]));
    expect(decoded.ok).toBe(true);
  });

  /** Encodes with the given entry bytes spliced in place of a valid table's entries (re-trailed). */
  function table(count: number, body: Uint8Array): Uint8Array {
    const content = new Uint8Array(8 + body.length);
    content.set(te.encode('ICT2'));
    new DataView(content.buffer).setUint32(4, count, true);
    content.set(body, 8);
    return sealed(content);
  }

  function entryBytes(clientId: bigint, ringLen: number, replies: Uint8Array[]): Uint8Array {
    const fixed = new Uint8Array(53);
    const dv = new DataView(fixed.buffer);
    dv.setBigUint64(0, clientId & ((1n << 64n) - 1n), true);
    dv.setBigUint64(8, clientId >> 64n, true);
    fixed[52] = ringLen;
    const parts: number[] = [...fixed];
    for (const r of replies) {
      const len = new Uint8Array(4);
      new DataView(len.buffer).setUint32(0, r.length, true);
      parts.push(...len, ...r);
    }
    return new Uint8Array(parts);
  }

  it('refuses truncation, bad trailer, bad magic, too many entries, duplicates, bad rings, bad replies, leftovers', () => {
    const good = encodeClientTable(entries);
    expect(decodeClientTable(good.subarray(0, 4))).toEqual({ ok: false, reason: 'ict2_truncated' });
    expect(decodeClientTable(good.subarray(0, good.length - 1))).toEqual({ ok: false, reason: 'ict2_trailer_mismatch' });
    const magic = good.slice();
    magic[3] = 0x33; // "ICT3"
    expect(decodeClientTable(retrail(magic))).toEqual({ ok: false, reason: 'ict2_bad_magic' });
    expect(decodeClientTable(table(CLIENT_TABLE_ENTRIES_MAX + 1, new Uint8Array(0)))).toEqual({ ok: false, reason: 'ict2_too_many_entries' });
    expect(decodeClientTable(table(1, new Uint8Array(0)))).toEqual({ ok: false, reason: 'ict2_truncated' });
    const r = reply(5n, 1n, 1n);
    expect(decodeClientTable(table(2, new Uint8Array([...entryBytes(5n, 1, [r]), ...entryBytes(5n, 1, [r])])))).toEqual({ ok: false, reason: 'ict2_duplicate_client_id' });
    expect(decodeClientTable(table(1, entryBytes(5n, 0, [])))).toEqual({ ok: false, reason: 'ict2_ring_len_out_of_range' });
    expect(decodeClientTable(table(1, entryBytes(5n, 6, [r, r, r, r, r, r])))).toEqual({ ok: false, reason: 'ict2_ring_len_out_of_range' });
    expect(decodeClientTable(table(1, entryBytes(5n, 2, [r])))).toEqual({ ok: false, reason: 'ict2_truncated' });
    expect(decodeClientTable(table(1, entryBytes(5n, 1, [r.subarray(0, 255)])))).toEqual({ ok: false, reason: 'ict2_reply_too_short' });
    const notReply = r.slice();
    notReply[60] = 7;
    expect(decodeClientTable(table(1, entryBytes(5n, 1, [notReply])))).toEqual({ ok: false, reason: 'ict2_reply_not_a_reply' });
    const badOperation = r.slice();
    badOperation[208] = 5;
    expect(decodeClientTable(table(1, entryBytes(5n, 1, [badOperation])))).toEqual({ ok: false, reason: 'ict2_reply_invalid_operation' });
    const overSize = r.slice();
    new DataView(overSize.buffer).setUint32(48, r.length + 1, true);
    expect(decodeClientTable(table(1, entryBytes(5n, 1, [overSize])))).toEqual({ ok: false, reason: 'ict2_reply_size_above_len' });
    const underSize = r.slice();
    new DataView(underSize.buffer).setUint32(48, 100, true);
    expect(decodeClientTable(table(1, entryBytes(5n, 1, [underSize])))).toEqual({ ok: false, reason: 'ict2_reply_size_below_header' });
    expect(decodeClientTable(table(1, new Uint8Array([...entryBytes(5n, 1, [r]), 0])))).toEqual({ ok: false, reason: 'ict2_trailing_bytes' });
  });

  it('asserts on sender bugs', () => {
    expect(() => encodeClientTable([{ ...entries[0] as ClientTableEntry, replies: [] }])).toThrow(AssertionError);
    expect(() => encodeClientTable([{ ...entries[0] as ClientTableEntry, replies: [new Uint8Array(256)] }])).toThrow(AssertionError);
  });
});

describe('ICO1 consumer offsets (§6.6)', () => {
  const value: ConsumerOffsets = {
    purgeGeneration: 3n,
    nextOffset: 1000n,
    consumers: [{ id: 1, offset: 10n }, { id: 7, offset: 70n }],
    groups: [{ id: 0, offset: 5n }, { id: 0xffff_ffff, offset: (1n << 64n) - 1n }],
  };

  it('round-trips with the documented layout', () => {
    const bytes = encodeConsumerOffsets(value);
    expect(bytes.length).toBe(29 + 4 * 12 + 8);
    expect(toHex(bytes.subarray(0, 5))).toBe('49434f3101');
    expect(decodeConsumerOffsets(bytes)).toEqual({ ok: true, value });
    const empty = { purgeGeneration: 0n, nextOffset: 0n, consumers: [], groups: [] };
    expect(decodeConsumerOffsets(encodeConsumerOffsets(empty))).toEqual({ ok: true, value: empty });
  });

  it('refuses truncation, bad trailer, bad magic, bad version, too many entries, unordered ids, leftovers', () => {
    const good = encodeConsumerOffsets(value);
    expect(decodeConsumerOffsets(good.subarray(0, 10))).toEqual({ ok: false, reason: 'ico1_trailer_mismatch' });
    expect(decodeConsumerOffsets(good.subarray(0, 3))).toEqual({ ok: false, reason: 'ico1_truncated' });
    const flipped = good.slice();
    flipped[40] = (flipped[40] as number) ^ 1;
    expect(decodeConsumerOffsets(flipped)).toEqual({ ok: false, reason: 'ico1_trailer_mismatch' });
    const magic = good.slice();
    magic[0] = 0x58;
    expect(decodeConsumerOffsets(retrail(magic))).toEqual({ ok: false, reason: 'ico1_bad_magic' });
    const version = good.slice();
    version[4] = 2;
    expect(decodeConsumerOffsets(retrail(version))).toEqual({ ok: false, reason: 'ico1_unsupported_version' });
    expect(decodeConsumerOffsets(sealed(good.subarray(0, 20)))).toEqual({ ok: false, reason: 'ico1_truncated' });
    const many = good.slice();
    new DataView(many.buffer).setUint32(21, CONSUMER_OFFSETS_SECTION_MAX + 1, true);
    expect(decodeConsumerOffsets(retrail(many))).toEqual({ ok: false, reason: 'ico1_too_many_entries' });
    const manyGroups = good.slice();
    new DataView(manyGroups.buffer).setUint32(25, CONSUMER_OFFSETS_SECTION_MAX + 1, true);
    expect(decodeConsumerOffsets(retrail(manyGroups))).toEqual({ ok: false, reason: 'ico1_too_many_entries' });
    const more = good.slice();
    new DataView(more.buffer).setUint32(25, 3, true);
    expect(decodeConsumerOffsets(retrail(more))).toEqual({ ok: false, reason: 'ico1_truncated' });
    const fewer = good.slice();
    new DataView(fewer.buffer).setUint32(25, 1, true);
    expect(decodeConsumerOffsets(retrail(fewer))).toEqual({ ok: false, reason: 'ico1_trailing_bytes' });
    const duplicate = good.slice();
    new DataView(duplicate.buffer).setUint32(29 + 12, 1, true); // consumer ids 1, 1
    expect(decodeConsumerOffsets(retrail(duplicate))).toEqual({ ok: false, reason: 'ico1_consumer_ids_not_ascending' });
    const descending = good.slice();
    new DataView(descending.buffer).setUint32(29 + 24, 9, true); // group ids 9, 0xffffffff ok; make 9 then 5
    new DataView(descending.buffer).setUint32(29 + 36, 5, true);
    expect(decodeConsumerOffsets(retrail(descending))).toEqual({ ok: false, reason: 'ico1_group_ids_not_ascending' });
  });

  it('asserts on sender bugs', () => {
    expect(() => encodeConsumerOffsets({ ...value, consumers: [{ id: 2, offset: 0n }, { id: 2, offset: 0n }] })).toThrow(AssertionError);
    expect(() => encodeConsumerOffsets({ ...value, nextOffset: -1n })).toThrow(AssertionError);
  });
});
