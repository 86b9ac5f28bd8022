import { Prng } from '@shoal/stdx';
import type { FuzzTarget } from '../target.js';
import { FrameDecoder } from '../../../src/framing/index.js';

const FRAME_SIZE_MAX = 4096;

/**
 * The incremental frame decoder over untrusted streams, under several chunkings derived from the
 * input itself (so both runs of the harness see the same ones): all of them must yield the same
 * frames and the same stream error as the whole input in one chunk; the frames must tile a prefix
 * of the input; buffered bytes never exceed the frame being assembled.
 */
const target: FuzzTarget = {
  name: 'framing-decoder',
  seeds(prng) {
    const seeds: Uint8Array[] = [];
    for (let i = 0; i < 16; i++) {
      const frames: Uint8Array[] = [];
      for (let n = 1 + prng.below(5); n > 0; n--) {
        const size = prng.chance(1, 4) ? 256 : 256 + prng.below(1500);
        const frame = prng.bytes(size);
        new DataView(frame.buffer).setUint32(48, size, true);
        frame[60] = prng.below(30);
        frames.push(frame);
      }
      seeds.push(concat(frames));
    }
    return seeds;
  },
  run(input) {
    const whole = decode(input, [input]);
    const prng = new Prng(BigInt(`0x${fingerprint(input)}`) * 0x1_0000_0001n + BigInt(input.length));
    for (let round = 0; round < 3; round++) {
      const cuts: number[] = [];
      // Tiny chunks only for small inputs: a 100 KiB input in 4-byte chunks costs more than it finds.
      const step = round === 0 ? (input.length <= 2048 ? 7 : 61) : round === 1 ? 300 : 5000;
      for (let at = prng.below(step); at < input.length; at += 1 + prng.below(step)) cuts.push(at);
      const chunked = decode(input, chunkAt(input, cuts));
      if (chunked !== whole) throw new Error(`chunking (step ${step}) changed the result: ${chunked} vs ${whole}`);
    }
    return whole;
  },
};

function decode(input: Uint8Array, chunks: Uint8Array[]): string {
  const decoder = new FrameDecoder({ frameSizeMax: FRAME_SIZE_MAX, assemblyRetainBytes: 1024 });
  let offset = 0;
  let hash = '';
  for (const chunk of chunks) {
    if (!decoder.push(chunk)) break;
    for (let frame = decoder.pull(); frame !== null; frame = decoder.pull()) {
      const size = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint32(48, true);
      if (frame.length !== size || size < 256 || size > FRAME_SIZE_MAX) throw new Error(`frame length ${frame.length}, size ${size}`);
      for (let i = 0; i < frame.length; i++) if (frame[i] !== input[offset + i]) throw new Error('frame is not the next input bytes');
      offset += frame.length;
      hash = fingerprint(frame, 0, Math.min(frame.length, 64)) + hash.slice(0, 8);
    }
    if (decoder.bufferedBytes > FRAME_SIZE_MAX) throw new Error(`buffered ${decoder.bufferedBytes}`);
    if (decoder.retainedBytes > FRAME_SIZE_MAX + 1024) throw new Error(`retained ${decoder.retainedBytes}`);
  }
  return `${decoder.error ?? 'ok'}:${decoder.frames}:${offset}:${hash}`;
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

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export default target;

/** FNV-1a of a byte range. */
function fingerprint(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}
