import { describe, expect, it } from 'vitest';
import { AssertionError, Prng, toHex } from '@shoal/stdx';
import { FRAME_SIZE_MAX_DEFAULT, FrameDecoder, type FrameDecoderOptions } from '../src/framing/index.js';

function frame(size: number, command = 5, fill = size & 0xff): Uint8Array {
  const bytes = new Uint8Array(Math.max(size, 256));
  for (let i = 0; i < bytes.length; i++) bytes[i] = (fill + i * 7) & 0xff;
  new DataView(bytes.buffer).setUint32(48, size, true);
  bytes[60] = command;
  return bytes;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Decodes `chunks` in order; frames are copied out (assembled views live until the next push). */
function decode(chunks: Uint8Array[], options: FrameDecoderOptions = {}): { frames: string[]; error: string | null } {
  const decoder = new FrameDecoder(options);
  const frames: string[] = [];
  for (const chunk of chunks) {
    if (!decoder.push(chunk)) break;
    for (let f = decoder.pull(); f !== null; f = decoder.pull()) frames.push(toHex(f));
  }
  return { frames, error: decoder.error };
}

function chunkAt(stream: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (const cut of [...cuts, stream.length]) {
    out.push(stream.subarray(at, cut));
    at = cut;
  }
  return out;
}

const STREAM_FRAMES = [frame(256, 5), frame(300, 6, 1), frame(257, 29, 2), frame(700, 8, 3), frame(256, 0, 4)];
const STREAM = concat(STREAM_FRAMES);
const EXPECTED = STREAM_FRAMES.map(toHex);

describe('FrameDecoder: whole and coalesced frames', () => {
  it('returns a frame inside one chunk as a view of that chunk', () => {
    const chunk = frame(400);
    const decoder = new FrameDecoder();
    expect(decoder.push(chunk)).toBe(true);
    const f = decoder.pull();
    expect(f?.buffer).toBe(chunk.buffer);
    expect(f?.byteOffset).toBe(0);
    expect(f?.length).toBe(400);
    expect(decoder.pull()).toBeNull();
    expect(decoder.error).toBeNull();
    expect(decoder.frames).toBe(1);
  });

  it('returns many coalesced frames from one chunk, in order, all views', () => {
    const decoder = new FrameDecoder();
    decoder.push(STREAM);
    const got: Uint8Array[] = [];
    for (let f = decoder.pull(); f !== null; f = decoder.pull()) got.push(f);
    expect(got.map(toHex)).toEqual(EXPECTED);
    for (const f of got) expect(f.buffer).toBe(STREAM.buffer);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('accepts Buffer chunks and empty chunks', () => {
    expect(decode([Buffer.alloc(0), Buffer.from(STREAM), new Uint8Array(0)]).frames).toEqual(EXPECTED);
  });
});

describe('FrameDecoder: fragmentation', () => {
  it('decodes the stream split at every byte (two chunks)', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      expect(decode(chunkAt(STREAM, [cut])), `cut ${cut}`).toEqual({ frames: EXPECTED, error: null });
    }
  });

  it('decodes the stream fed one byte at a time', () => {
    const cuts = Array.from({ length: STREAM.length - 1 }, (_, i) => i + 1);
    expect(decode(chunkAt(STREAM, cuts))).toEqual({ frames: EXPECTED, error: null });
  });

  it('decodes every three-chunk split of a two-frame stream', () => {
    const small = concat([frame(256, 1), frame(290, 2, 9)]);
    const expected = [toHex(frame(256, 1)), toHex(frame(290, 2, 9))];
    for (let a = 0; a <= small.length; a += 3) {
      for (let b = a; b <= small.length; b += 5) {
        expect(decode(chunkAt(small, [a, b])).frames, `${a}/${b}`).toEqual(expected);
      }
    }
  });

  it('never overwrites an assembled frame while the same push starts the next one', () => {
    const a = frame(600, 6, 1);
    const b = frame(600, 6, 2);
    const stream = concat([a, b]);
    const decoder = new FrameDecoder();
    decoder.push(stream.subarray(0, 100));
    expect(decoder.pull()).toBeNull();
    decoder.push(stream.subarray(100, 700)); // completes a, starts b
    const first = decoder.pull();
    expect(decoder.pull()).toBeNull();
    expect(decoder.bufferedBytes).toBe(100);
    expect(toHex(first ?? new Uint8Array(0))).toBe(toHex(a));
    decoder.push(stream.subarray(700));
    expect(toHex(decoder.pull() ?? new Uint8Array(0))).toBe(toHex(b));
  });

  it('random streams under random chunkings (property)', () => {
    const prng = new Prng(77);
    for (let round = 0; round < 300; round++) {
      const frames = Array.from({ length: 1 + prng.below(8) }, () => frame(256 + (prng.chance(1, 3) ? 0 : prng.below(3000)), prng.below(30), prng.below(256)));
      const stream = concat(frames);
      const cuts: number[] = [];
      for (let at = prng.below(600); at < stream.length; at += 1 + prng.below(prng.chance(1, 4) ? 8 : 1500)) cuts.push(at);
      expect(decode(chunkAt(stream, cuts))).toEqual({ frames: frames.map(toHex), error: null });
    }
  });
});

describe('FrameDecoder: limits and stream errors', () => {
  it('size bounds: 255 refused, 256 accepted, max accepted, max + 1 refused', () => {
    const options = { frameSizeMax: 1024 };
    expect(decode([frame(255)], options)).toEqual({ frames: [], error: 'frame_size_below_header' });
    expect(decode([frame(0)], options).error).toBe('frame_size_below_header');
    expect(decode([frame(256)], options)).toEqual({ frames: [toHex(frame(256))], error: null });
    expect(decode([frame(1024)], options)).toEqual({ frames: [toHex(frame(1024))], error: null });
    expect(decode([frame(1025)], options)).toEqual({ frames: [], error: 'frame_size_above_max' });
    expect(decode([frame(256)], { frameSizeMax: 256 }).error).toBeNull();
    expect(decode([frame(257)], { frameSizeMax: 256 }).error).toBe('frame_size_above_max');
  });

  it('the default maximum is 64 MiB: a header declaring it is buffered, one more byte is refused', () => {
    const atMax = new FrameDecoder();
    const header = new Uint8Array(256);
    new DataView(header.buffer).setUint32(48, FRAME_SIZE_MAX_DEFAULT, true);
    atMax.push(header.slice());
    expect(atMax.pull()).toBeNull();
    expect(atMax.error).toBeNull();
    expect(atMax.bufferedBytes).toBe(256);
    expect(atMax.retainedBytes).toBeLessThanOrEqual(1024 * 1024);
    new DataView(header.buffer).setUint32(48, FRAME_SIZE_MAX_DEFAULT + 1, true);
    const above = new FrameDecoder();
    above.push(header);
    expect(above.pull()).toBeNull();
    expect(above.error).toBe('frame_size_above_max');
    const u32Max = new FrameDecoder();
    new DataView(header.buffer).setUint32(48, 0xffff_ffff, true);
    u32Max.push(header);
    expect(u32Max.pull()).toBeNull();
    expect(u32Max.error).toBe('frame_size_above_max');
  });

  it('command 29 passes, 30 and above are a stream error, also when the header straddles', () => {
    expect(decode([frame(300, 29)]).error).toBeNull();
    expect(decode([frame(300, 30)]).error).toBe('frame_command_invalid');
    expect(decode([frame(300, 255)]).error).toBe('frame_command_invalid');
    const bad = frame(300, 30);
    for (const cut of [1, 48, 52, 60, 61, 255, 256, 299]) {
      expect(decode(chunkAt(bad, [cut])).error, `cut ${cut}`).toBe('frame_command_invalid');
    }
  });

  it('delivers the frames before a bad header, then stays dead', () => {
    const stream = concat([frame(256, 1), frame(300, 2), frame(255, 3), frame(256, 4)]);
    const decoder = new FrameDecoder();
    decoder.push(stream);
    expect(decoder.pull()?.length).toBe(256);
    expect(decoder.pull()?.length).toBe(300);
    expect(decoder.pull()).toBeNull();
    expect(decoder.error).toBe('frame_size_below_header');
    expect(decoder.pull()).toBeNull();
    expect(decoder.push(frame(256))).toBe(false);
    expect(decoder.pull()).toBeNull();
    expect(decoder.bufferedBytes).toBe(0);
    expect(decoder.retainedBytes).toBe(0);
  });

  it('buffers at most the declared frame, and retains bounded assembly buffers', () => {
    const decoder = new FrameDecoder({ frameSizeMax: 1 << 20, assemblyRetainBytes: 4096 });
    const big = frame(1 << 20, 6);
    for (let at = 0; at < big.length; at += 999) {
      decoder.push(big.subarray(at, Math.min(big.length, at + 999)));
      for (let f = decoder.pull(); f !== null; f = decoder.pull()) expect(f.length).toBe(1 << 20);
      expect(decoder.bufferedBytes).toBeLessThanOrEqual(1 << 20);
      expect(decoder.retainedBytes).toBeLessThanOrEqual((1 << 20) + 4096);
    }
    expect(decoder.frames).toBe(1);
    expect(decoder.retainedBytes).toBeLessThanOrEqual(2 * 4096);
    // A header that declares a large frame holds only what has arrived, not the declared size.
    const partial = new FrameDecoder();
    partial.push(frame(1 << 20).subarray(0, 300));
    expect(partial.pull()).toBeNull();
    expect(partial.bufferedBytes).toBe(300);
  });

  it('reuses its assembly buffers across straddling frames', () => {
    const stream = concat(Array.from({ length: 6 }, (_, i) => frame(5000, 6, i)));
    const decoder = new FrameDecoder();
    const buffers = new Set<ArrayBufferLike>();
    for (let at = 0; at < stream.length; at += 4096) {
      decoder.push(stream.subarray(at, at + 4096));
      for (let f = decoder.pull(); f !== null; f = decoder.pull()) if (f.buffer !== stream.buffer) buffers.add(f.buffer);
    }
    expect(decoder.frames).toBe(6);
    expect(buffers.size).toBe(2);
  });

  it('refuses to be pushed before it is drained (a caller bug), and bad options', () => {
    const decoder = new FrameDecoder();
    decoder.push(STREAM);
    decoder.pull();
    expect(() => decoder.push(STREAM)).toThrow(AssertionError);
    expect(() => new FrameDecoder({ frameSizeMax: 255 })).toThrow(RangeError);
    expect(() => new FrameDecoder({ frameSizeMax: 2 ** 32 })).toThrow(RangeError);
    expect(() => new FrameDecoder({ assemblyRetainBytes: 10 })).toThrow(RangeError);
  });

  it('never throws on random bytes under random chunkings', () => {
    const prng = new Prng(123);
    for (let round = 0; round < 500; round++) {
      const stream = prng.chance(1, 2) ? prng.bytes(prng.below(3000)) : concat([frame(256 + prng.below(500), prng.below(40)), prng.bytes(prng.below(600))]);
      if (stream.length > 52 && prng.chance(1, 2)) new DataView(stream.buffer).setUint32(48, 256 + prng.below(2000), true);
      const cuts: number[] = [];
      for (let at = prng.below(300); at < stream.length; at += 1 + prng.below(400)) cuts.push(at);
      const whole = decode([stream], { frameSizeMax: 4096 });
      expect(decode(chunkAt(stream, cuts), { frameSizeMax: 4096 })).toEqual(whole);
      expect(toHex(stream).startsWith(whole.frames.join(''))).toBe(true);
    }
  });
});

describe('FrameDecoder: hand-off of large straddling frames', () => {
  const HAND_OFF = 1024;
  const frames = [frame(300, 5, 1), frame(HAND_OFF, 6, 2), frame(5000, 6, 3), frame(HAND_OFF - 1, 6, 4), frame(3000, 19, 5)];
  const stream = concat(frames);

  it('hands each straddling frame of at least handOffBytes over in a buffer of its own, untouched by later input', () => {
    for (const step of [97, 256, 1000, 4096]) {
      const decoder = new FrameDecoder({ handOffBytes: HAND_OFF });
      const kept: { bytes: Uint8Array; hex: string; owned: boolean }[] = [];
      for (let at = 0; at < stream.length; at += step) {
        decoder.push(stream.subarray(at, at + step));
        for (let f = decoder.pull(); f !== null; f = decoder.pull()) kept.push({ bytes: f, hex: toHex(f), owned: decoder.lastFrameOwned });
      }
      expect(kept.map((k) => k.hex)).toEqual(frames.map(toHex));
      for (const [i, k] of kept.entries()) {
        const straddles = Math.floor(frames.slice(0, i).reduce((n, f) => n + f.length, 0) / step) !== Math.floor((frames.slice(0, i + 1).reduce((n, f) => n + f.length, 0) - 1) / step);
        expect(k.owned, `step ${step} frame ${i}`).toBe(straddles && k.bytes.length >= HAND_OFF);
        if (k.owned) {
          expect(k.bytes.byteOffset).toBe(0);
          expect(k.bytes.buffer.byteLength).toBe(k.bytes.length);
          expect(k.bytes.buffer).not.toBe(stream.buffer);
        }
        // Every frame kept past the pushes that followed it is still intact only when owned (or a
        // view of the caller's own stream); views of the reused slots are documented as transient.
        if (k.owned) expect(toHex(k.bytes)).toBe(k.hex);
      }
      expect(new Set(kept.filter((k) => k.owned).map((k) => k.bytes.buffer)).size).toBe(kept.filter((k) => k.owned).length);
    }
  });

  it('reports views of a chunk and of the reused slots as not owned, and is off by default', () => {
    const decoder = new FrameDecoder();
    decoder.push(stream.subarray(0, 2000));
    for (let f = decoder.pull(); f !== null; f = decoder.pull()) expect(decoder.lastFrameOwned).toBe(false);
    decoder.push(stream.subarray(2000));
    for (let f = decoder.pull(); f !== null; f = decoder.pull()) expect(decoder.lastFrameOwned).toBe(false);
    expect(decoder.frames).toBe(frames.length);
    expect(() => new FrameDecoder({ handOffBytes: 256 })).toThrow(RangeError);
    expect(() => new FrameDecoder({ handOffBytes: 1.5e3 + 0.5 })).toThrow(RangeError);
  });

  it('decodes random streams under random chunkings exactly as without hand-off, and fails the same way', () => {
    const prng = new Prng(321);
    for (let round = 0; round < 300; round++) {
      const parts = Array.from({ length: 1 + prng.below(5) }, () => frame(256 + prng.below(3000), prng.below(30), prng.below(256)));
      if (prng.chance(1, 4)) parts.push(prng.bytes(prng.below(600)));
      const s = concat(parts);
      const cuts: number[] = [];
      for (let at = prng.below(300); at < s.length; at += 1 + prng.below(1500)) cuts.push(at);
      expect(decode(chunkAt(s, cuts), { frameSizeMax: 4096, handOffBytes: 257 + prng.below(3000) })).toEqual(decode([s], { frameSizeMax: 4096 }));
    }
  });
});
