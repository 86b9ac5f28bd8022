/**
 * Test frames: lengths drawn from a seeded PRNG (producer and consumer draw the same sequence),
 * payload = frame sequence number (u32 LE) ‖ pseudo-random bytes seeded by it ‖ FNV-1a-32 of
 * everything before it (u32 LE). The consumer checks length, sequence (loss, duplication,
 * reordering) and checksum (torn or corrupted copies) without regenerating the content.
 */

import { Prng } from '@shoal/stdx';

export const FRAME_CHECKED_LENGTH_MIN = 8;

export interface SizeMix {
  /** Largest frame drawn. */
  readonly sizeMax: number;
}

/** Mostly small frames, some medium, a few up to sizeMax: wraps at many offsets, some big ones. */
export function drawLength(prng: Prng, mix: SizeMix): number {
  const roll = prng.below(100);
  if (roll < 90) return prng.below(Math.min(129, mix.sizeMax + 1));
  if (roll < 99) return prng.below(Math.min(2049, mix.sizeMax + 1));
  return prng.below(mix.sizeMax + 1);
}

export function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}

/** Fills `bytes[0, length)` for frame `seq`. */
export function fillFrame(bytes: Uint8Array, length: number, seq: number): void {
  let state = (seq * 0x9e3779b1) | 1;
  for (let i = 0; i < length; i++) {
    if ((i & 3) === 0) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
    }
    bytes[i] = (state >>> ((i & 3) * 8)) & 0xff;
  }
  if (length < FRAME_CHECKED_LENGTH_MIN) return;
  writeU32(bytes, 0, seq);
  writeU32(bytes, length - 4, fnv1a(bytes, 0, length - 4));
}

/** Null when the frame is intact, else what is wrong with it. */
export function checkFrame(frame: Uint8Array, expectedLength: number, seq: number): string | null {
  if (frame.length !== expectedLength) return `frame ${seq}: length ${frame.length}, expected ${expectedLength}`;
  if (frame.length < FRAME_CHECKED_LENGTH_MIN) {
    const expected = new Uint8Array(frame.length);
    fillFrame(expected, frame.length, seq);
    for (let i = 0; i < frame.length; i++) if (frame[i] !== expected[i]) return `frame ${seq}: short frame byte ${i}`;
    return null;
  }
  const got = readU32(frame, 0);
  if (got !== seq >>> 0) return `frame ${seq}: carries sequence ${got}`;
  const sum = fnv1a(frame, 0, frame.length - 4);
  if (sum !== readU32(frame, frame.length - 4)) return `frame ${seq}: checksum mismatch`;
  return null;
}

function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

export function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;
}

export { Prng };
