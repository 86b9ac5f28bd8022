/**
 * Deterministic single-thread property test: random interleavings of producer and consumer
 * operations against a model that uses unbounded counters and a plain array of frames. The ring
 * uses u32 counters, masks and padding records; the model spells out what they must add up to.
 * Seeds are printed in the test names: a failure replays with the same seed.
 */

import { describe, expect, it } from 'vitest';
import { type RingHandle, RingConsumer, RingProducer, createRing, recordBytes } from '@shoal/ring';
import { Prng } from '@shoal/stdx';

interface ModelFrame {
  readonly bytes: Uint8Array;
  /** Counter (unbounded) where the frame's record starts, after any padding before it. */
  readonly recordStart: number;
  readonly recordEnd: number;
}

class Model {
  readonly frames: ModelFrame[] = []; // written, not yet consumed (published or not)
  write: number; // staged
  published: number;
  read: number;

  constructor(readonly capacity: number, origin: number) {
    this.write = origin;
    this.published = origin;
    this.read = origin;
  }

  /** Where a frame of `length` goes, or null when it does not fit: [padding bytes, record start]. */
  place(length: number): { padding: number; start: number } | null {
    const record = recordBytes(length);
    const tail = this.capacity - (this.write % this.capacity);
    const padding = record <= tail ? 0 : tail;
    if (this.write - this.read + padding + record > this.capacity) return null;
    return { padding, start: this.write + padding };
  }

  add(bytes: Uint8Array, start: number): void {
    const recordEnd = start + recordBytes(bytes.length);
    this.frames.push({ bytes, recordStart: start, recordEnd });
    this.write = recordEnd;
  }

  /** Frames the consumer can see, oldest first (at most `limit` of them). */
  visible(limit: number): ModelFrame[] {
    const visible: ModelFrame[] = [];
    for (const frame of this.frames) {
      if (visible.length >= limit || frame.recordEnd > this.published) break;
      visible.push(frame);
    }
    return visible;
  }
}

/** expect() per byte array is slow; compare by hand and fail with a message. */
function check(condition: boolean, message: string): void {
  if (!condition) expect.fail(message);
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const ORIGIN_NEAR_WRAP = 0x1_0000_0000 - 64 * 1024;

function fuzz(seed: number, steps: number, capacityBytes: number, origin: number): void {
  const prng = new Prng(seed);
  const frameSizeMax = prng.chance(1, 2) ? capacityBytes / 2 - 8 : prng.range(0, capacityBytes / 2 - 8);
  const handle: RingHandle = createRing({ capacityBytes, frameSizeMax, indexOrigin: origin });
  const producer = RingProducer.attach(handle);
  const consumer = RingConsumer.attach(handle);
  const model = new Model(capacityBytes, origin);
  const drawLength = (): number => (prng.chance(1, 4) ? prng.range(0, 16) : prng.range(0, frameSizeMax));

  let consumed = 0;
  let fullSeen = 0;
  for (let step = 0; step < steps; step++) {
    const where = `seed ${seed} step ${step}`;
    const op = prng.below(100);
    if (op < 35) {
      // tryWrite with one or two parts
      const bytes = prng.bytes(drawLength());
      const place = model.place(bytes.length);
      const split = prng.below(bytes.length + 1);
      const status = prng.bool() ? producer.tryWrite(bytes) : producer.tryWrite(bytes.subarray(0, split), bytes.subarray(split));
      check(status === (place === null ? 'full' : 'ok'), `${where}: tryWrite ${status}`);
      if (place === null) fullSeen += 1;
      else model.add(bytes, place.start);
    } else if (op < 45) {
      // tryWriteParts with 0..4 parts
      const bytes = prng.bytes(drawLength());
      const cuts = Array.from({ length: prng.below(4) }, () => prng.below(bytes.length + 1)).sort((a, b) => a - b);
      const parts: Uint8Array[] = [];
      let from = 0;
      for (const cut of cuts) {
        parts.push(bytes.subarray(from, cut));
        from = cut;
      }
      parts.push(bytes.subarray(from));
      const place = model.place(bytes.length);
      const status = producer.tryWriteParts(parts);
      check(status === (place === null ? 'full' : 'ok'), `${where}: tryWriteParts ${status}`);
      if (place !== null) model.add(bytes, place.start);
    } else if (op < 55) {
      // reserve, then commit a prefix or cancel
      const lengthMax = drawLength();
      const place = model.place(lengthMax);
      const view = producer.reserve(lengthMax);
      if (place === null) {
        expect(view, where).toBe('full');
        continue;
      }
      expect(typeof view, where).toBe('object');
      if (typeof view === 'string') return;
      expect(view.length, where).toBe(lengthMax);
      model.write += place.padding; // the padding record is written at reserve time
      if (prng.chance(1, 5)) {
        producer.cancel();
      } else {
        const length = prng.range(0, lengthMax);
        const bytes = prng.bytes(length);
        view.set(bytes);
        producer.commit(length);
        model.add(bytes, place.start);
      }
    } else if (op < 57) {
      // oversize frames are a result, not a crash, and change nothing
      const length = frameSizeMax + 1 + prng.below(64);
      expect(producer.tryWrite(new Uint8Array(length)), where).toBe('too-large');
      expect(producer.reserve(length), where).toBe('too-large');
    } else if (op < 72) {
      check(producer.flush() === 'ok', `${where}: flush`);
      model.published = model.write;
    } else if (op < 97) {
      // read a batch: maybe with a frame limit, maybe rejecting the k-th frame
      const limit = prng.chance(1, 3) ? prng.range(1, 8) : Infinity;
      const rejectAt = prng.chance(1, 5) ? prng.below(8) : -1;
      const visible = model.visible(limit);
      const got: Uint8Array[] = [];
      const inPlace = prng.bool();
      const count = inPlace
        ? consumer.readInPlace((data, offset, length) => {
            if (got.length === rejectAt) return false;
            got.push(data.slice(offset, offset + length));
            return true;
          }, limit)
        : consumer.read((frame) => {
            if (got.length === rejectAt) return false;
            got.push(frame.slice());
            return undefined;
          }, limit);
      const take = Math.min(visible.length, limit, rejectAt < 0 ? Infinity : rejectAt);
      check(count === take, `${where}: read ${count} frames, model says ${take}`);
      for (let i = 0; i < take; i++) check(sameBytes(got[i], visible[i]?.bytes), `${where}: frame ${i} differs`);
      // Where READ lands: past trailing padding only when the batch ran out of frames.
      const rejected = rejectAt >= 0 && rejectAt < Math.min(visible.length, limit);
      if (rejected) model.read = (visible[take] as ModelFrame).recordStart;
      else if (take < limit && take === visible.length) model.read = model.published;
      else if (take > 0) model.read = (visible[take - 1] as ModelFrame).recordEnd;
      model.frames.splice(0, take);
      consumed += take;
    } else {
      expect(consumer.hasWork(), where).toBe(model.published !== model.read);
      expect(producer.unpublishedBytes, where).toBe(model.write - model.published);
    }
  }
  // Drain: everything written comes out, in order.
  producer.flush();
  model.published = model.write;
  const rest: Uint8Array[] = [];
  consumer.read((frame) => {
    rest.push(frame.slice());
  });
  check(rest.length === model.frames.length, `seed ${seed}: drained ${rest.length}, model has ${model.frames.length}`);
  rest.forEach((bytes, i) => check(sameBytes(bytes, model.frames[i]?.bytes), `seed ${seed}: drained frame ${i} differs`));
  expect(consumer.hasWork()).toBe(false);
  expect(consumed + rest.length).toBeGreaterThan(steps / 10);
  expect(fullSeen).toBeGreaterThan(0);
}

describe('ring against an array model (single thread, deterministic)', () => {
  const cases: [number, number, number][] = [
    // seed, capacity, origin
    [1, 256, 0],
    [2, 1024, 0],
    [3, 4096, 8],
    [4, 512, ORIGIN_NEAR_WRAP], // the u32 counters wrap mid-run
    [5, 64, 0x1_0000_0000 - 8],
    [6, 65536, ORIGIN_NEAR_WRAP],
  ];
  for (const [seed, capacity, origin] of cases) {
    it(`seed ${seed}: capacity ${capacity}, origin ${origin}, 40k steps`, () => {
      fuzz(seed, 40_000, capacity, origin);
    });
  }
});
