import { describe, expect, it } from 'vitest';
import { Prng, fromHex } from '@shoal/stdx';
import { validateBatch, type BatchRejectReason } from '../src/batch/index.js';
import { batchDoc, batchVector, mustBuild, randomMessages } from './batch-fixtures.js';

function producerBytes(): Uint8Array {
  return fromHex(batchVector('producer_batch').hex);
}
function setU32(bytes: Uint8Array, at: number, value: number): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, value, true);
  return bytes;
}
function setU64(bytes: Uint8Array, at: number, value: bigint): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(at, value, true);
  return bytes;
}
function flip(bytes: Uint8Array, at: number, mask: number): void {
  bytes[at] = (bytes[at] ?? 0) ^ mask;
}
function reasonOf(bytes: Uint8Array, options = {}): [BatchRejectReason | 'ok', number] {
  const verdict = validateBatch(bytes, options);
  return verdict.ok ? ['ok', -1] : [verdict.reason, verdict.frameIndex];
}

// producer_batch frames: 0 at 256 (57 bytes), 1 at 313 (79 bytes), 2 at 392 (91 bytes); length 483.
const FRAME = [256, 313, 392] as const;

describe('validateBatch: the shared vectors', () => {
  it('accepts every valid vector with a summary', () => {
    for (const v of batchDoc().vectors) {
      const verdict = validateBatch(fromHex(v.hex));
      expect(verdict.ok, v.name).toBe(true);
      if (!verdict.ok) continue;
      expect(verdict.value.messageCount).toBe(Number(v.header['message_count']));
      expect(verdict.value.batchLength).toBe(Number(v.header['batch_length']));
      expect(verdict.value.batchChecksum).toBe(BigInt(v.header['batch_checksum'] as string));
      expect(verdict.value.originTimestamp).toBe(BigInt(v.header['origin_timestamp'] as string));
      expect(verdict.value.lastOffsetDelta).toBe(v.frames.length - 1);
    }
  });

  it('summarises producer_batch', () => {
    const verdict = validateBatch(producerBytes());
    expect(verdict).toMatchObject({
      ok: true,
      value: {
        messageCount: 3,
        batchLength: 483,
        firstOffsetDelta: 0,
        lastOffsetDelta: 2,
        firstTimestampDelta: 0,
        lastTimestampDelta: 2500,
        timestampDeltaMax: 2500,
        payloadBytes: 9 + 9 + 13,
        userHeadersBytes: 22 + 30,
      },
    });
  });

  it('rejects every negative vector with the matching reason', () => {
    const expected: Record<string, [BatchRejectReason, number]> = {
      flipped_last_body_byte: ['frame_checksum_mismatch', 2],
      flipped_batch_checksum: ['batch_checksum_mismatch', -1],
      nonzero_header_reserved: ['batch_header_reserved_nonzero', -1],
      nonzero_frame_reserved: ['frame_reserved_nonzero', 0],
      message_count_too_high: ['message_count_mismatch', 3],
      truncated: ['batch_truncated', -1],
    };
    for (const n of batchDoc().negative) {
      expect(reasonOf(fromHex(n.hex)), n.name).toEqual(expected[n.name] ?? ['unexpected vector', n.name]);
    }
  });
});

describe('validateBatch: every rule', () => {
  it('length: at least 256 bytes, within maxBytes, equal to batch_length', () => {
    expect(reasonOf(new Uint8Array(0))[0]).toBe('batch_too_short');
    expect(reasonOf(new Uint8Array(255))[0]).toBe('batch_too_short');
    expect(reasonOf(producerBytes(), { maxBytes: 482 })[0]).toBe('batch_too_large');
    expect(reasonOf(producerBytes(), { maxBytes: 483 })[0]).toBe('ok');
    expect(reasonOf(setU64(producerBytes(), 32, 484n))[0]).toBe('batch_truncated');
    expect(reasonOf(setU64(producerBytes(), 32, 483n + (1n << 32n)))[0]).toBe('batch_truncated');
    expect(reasonOf(setU64(producerBytes(), 32, 1n << 63n))[0]).toBe('batch_truncated');
    expect(reasonOf(setU64(producerBytes(), 32, 482n))[0]).toBe('batch_trailing_bytes');
    expect(reasonOf(setU64(producerBytes(), 32, 0n))[0]).toBe('batch_trailing_bytes');
    const longer = new Uint8Array(484);
    longer.set(producerBytes());
    expect(reasonOf(longer)[0]).toBe('batch_trailing_bytes');
    // 256 bytes that claim to be a batch of length 256: no frames.
    const empty = setU64(new Uint8Array(256), 32, 256n);
    expect(reasonOf(empty)[0]).toBe('batch_empty');
  });

  it('every header reserved byte 52..256 must be zero', () => {
    for (let at = 52; at < 256; at++) {
      const bytes = producerBytes();
      bytes[at] = 1 << (at % 8);
      expect(reasonOf(bytes), `byte ${at}`).toEqual(['batch_header_reserved_nonzero', -1]);
    }
  });

  it('message_count: non-zero, within maxMessages, tiling the frames exactly', () => {
    expect(reasonOf(setU32(producerBytes(), 48, 0))[0]).toBe('batch_empty');
    expect(reasonOf(producerBytes(), { maxMessages: 2 })[0]).toBe('batch_too_many_messages');
    expect(reasonOf(producerBytes(), { maxMessages: 3 })[0]).toBe('ok');
    expect(reasonOf(setU32(producerBytes(), 48, 2))).toEqual(['message_count_mismatch', 2]);
    expect(reasonOf(setU32(producerBytes(), 48, 4))).toEqual(['message_count_mismatch', 3]);
    // A count that 48-byte frames could never tile is refused before anything is sized from it.
    expect(reasonOf(setU32(producerBytes(), 48, 0xffff_ffff))).toEqual(['message_count_mismatch', -1]);
  });

  it('frames: header fits, no overrun, reserved zero, offset_delta = index, length caps', () => {
    const bytes = new Uint8Array(483 + 20);
    bytes.set(producerBytes());
    setU64(bytes, 32, 503n);
    setU32(bytes, 48, 4);
    expect(reasonOf(bytes)).toEqual(['frame_header_truncated', 3]);

    expect(reasonOf(setU32(producerBytes(), FRAME[2] + 36, 14))).toEqual(['frame_overrun', 2]);
    expect(reasonOf(setU32(producerBytes(), FRAME[2] + 32, 0xffff_ffff), { maxUserHeadersBytes: 0xffff_ffff })).toEqual(['frame_overrun', 2]);
    expect(reasonOf(setU32(producerBytes(), FRAME[0] + 36, 0xffff_ffff), { maxPayloadBytes: 0xffff_ffff })).toEqual(['frame_overrun', 0]);
    for (let k = 40; k < 48; k++) {
      const bytes = producerBytes();
      bytes[FRAME[1] + k] = 0x80;
      expect(reasonOf(bytes), `frame byte ${k}`).toEqual(['frame_reserved_nonzero', 1]);
    }
    expect(reasonOf(setU32(producerBytes(), FRAME[1] + 24, 7))).toEqual(['frame_offset_delta_mismatch', 1]);
    expect(reasonOf(setU32(producerBytes(), FRAME[0] + 24, 1))).toEqual(['frame_offset_delta_mismatch', 0]);
    expect(reasonOf(producerBytes(), { maxPayloadBytes: 12 })).toEqual(['frame_payload_too_large', 2]);
    expect(reasonOf(producerBytes(), { maxUserHeadersBytes: 29 })).toEqual(['frame_user_headers_too_large', 2]);
  });

  it('checksums: every frame checksum, then batch_checksum over the header fields', () => {
    for (const [i, start] of FRAME.entries()) {
      const bytes = producerBytes();
      flip(bytes, start + 8, 1); // the id, covered by the frame checksum
      expect(reasonOf(bytes)).toEqual(['frame_checksum_mismatch', i]);
    }
    expect(reasonOf(setU64(producerBytes(), 8, 1n))).toEqual(['batch_checksum_mismatch', -1]);
    expect(reasonOf(setU64(producerBytes(), 24, 1n))).toEqual(['batch_checksum_mismatch', -1]);
    const bytes = producerBytes();
    flip(bytes, 40, 0x80);
    expect(reasonOf(bytes)).toEqual(['batch_checksum_mismatch', -1]);
  });

  it('contiguous offset deltas: accepted only when asked for', () => {
    const bytes = producerBytes();
    // Shift deltas to 5, 6, 7: frame checksums break, so this checks the ordering of rules only.
    for (const [i, start] of FRAME.entries()) setU32(bytes, start + 24, 5 + i);
    expect(reasonOf(bytes)).toEqual(['frame_offset_delta_mismatch', 0]);
    expect(reasonOf(bytes, { offsetDeltas: 'contiguous' })).toEqual(['frame_checksum_mismatch', 0]);
    setU32(bytes, FRAME[2] + 24, 8);
    expect(reasonOf(bytes, { offsetDeltas: 'contiguous' })).toEqual(['frame_offset_delta_mismatch', 2]);
  });
});

describe('validateBatch: properties', () => {
  it('rejects every single-bit flip of a valid batch', () => {
    const prng = new Prng(5);
    for (let round = 0; round < 4; round++) {
      const original = mustBuild(randomMessages(prng, 1 + prng.below(4), 16));
      for (let bit = 0; bit < original.length * 8; bit++) {
        const bytes = original.slice();
        flip(bytes, bit >> 3, 1 << (bit & 7));
        expect(validateBatch(bytes).ok, `bit ${bit}`).toBe(false);
      }
    }
  });

  it('never throws on random or mutated bytes, and works on unaligned views', () => {
    const prng = new Prng(9);
    const seed = mustBuild(randomMessages(prng, 5));
    for (let round = 0; round < 3000; round++) {
      const bytes = prng.bool() ? prng.bytes(prng.below(700)) : seed.slice(0, prng.below(seed.length + 1));
      for (let k = prng.below(4); k > 0 && bytes.length > 0; k--) bytes[prng.below(bytes.length)] = prng.u32() & 0xff;
      const host = new Uint8Array(bytes.length + 3);
      host.set(bytes, 3);
      const a = validateBatch(bytes);
      const b = validateBatch(host.subarray(3));
      expect(a).toEqual(b);
    }
  });
});

describe("validateBatch with frameChecksums: 'stored' (a partition backup's check, §2.5)", () => {
  it('accepts every valid vector with the same summary as a full verify', () => {
    for (const v of batchDoc().vectors) {
      const full = validateBatch(fromHex(v.hex));
      const stored = validateBatch(fromHex(v.hex), { frameChecksums: 'stored' });
      expect(stored, v.name).toEqual(full);
    }
  });

  it('does not re-hash frame bodies: a flipped payload byte passes, a full verify names the frame', () => {
    const bytes = producerBytes();
    flip(bytes, FRAME[1] + 48 + 2, 0x01);
    expect(reasonOf(bytes)).toEqual(['frame_checksum_mismatch', 1]);
    expect(reasonOf(bytes, { frameChecksums: 'stored' })).toEqual(['ok', -1]);
  });

  it('still binds the stored frame checksums and the header through batch_checksum, and walks the structure', () => {
    const checksum = producerBytes();
    flip(checksum, FRAME[2] + 3, 0x10);
    expect(reasonOf(checksum, { frameChecksums: 'stored' })).toEqual(['batch_checksum_mismatch', -1]);
    const header = producerBytes();
    flip(header, 16, 0x01); // base_timestamp
    expect(reasonOf(header, { frameChecksums: 'stored' })).toEqual(['batch_checksum_mismatch', -1]);
    const reserved = producerBytes();
    flip(reserved, FRAME[0] + 40, 0x01);
    expect(reasonOf(reserved, { frameChecksums: 'stored' })[0]).toBe('frame_reserved_nonzero');
  });
});
