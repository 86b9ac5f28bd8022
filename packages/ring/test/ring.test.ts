/**
 * Single-thread unit tests: limits, wrap-around at every position, reserve/commit, close,
 * handles, parking within one thread, Inbox, mesh. Threaded behaviour is in threads.test.ts.
 */

import { describe, expect, it } from 'vitest';
import {
  CAPACITY_BYTES_MAX, Inbox, RING_HEADER_BYTES, RingConfigError, RingConsumer, RingProducer, createDoorbell,
  createMesh, createRing, frameSizeLimit, meshBytes, meshEndpoints, recordBytes,
} from '@shoal/ring';
import { AssertionError, Prng } from '@shoal/stdx';

function bytes(length: number, fill: number): Uint8Array {
  return new Uint8Array(length).fill(fill & 0xff);
}

function drain(consumer: RingConsumer): Uint8Array[] {
  const out: Uint8Array[] = [];
  consumer.read((frame) => {
    out.push(frame.slice());
  });
  return out;
}

describe('limits checked at construction', () => {
  it('rejects capacities that are not powers of two or out of range', () => {
    for (const capacityBytes of [0, 3, 100, 1000, 32, 48, CAPACITY_BYTES_MAX * 2, 2.5, -64]) {
      expect(() => createRing({ capacityBytes }), String(capacityBytes)).toThrow(RingConfigError);
    }
    expect(() => createRing({ capacityBytes: 64 })).not.toThrow();
  });

  it('caps frameSizeMax so that a record fits in half the ring', () => {
    expect(frameSizeLimit(1024)).toBe(504);
    expect(recordBytes(frameSizeLimit(1024))).toBe(512);
    expect(createRing({ capacityBytes: 1024 }).frameSizeMax).toBe(504);
    expect(() => createRing({ capacityBytes: 1024, frameSizeMax: 505 })).toThrow(/half/);
    expect(() => createRing({ capacityBytes: 1024, frameSizeMax: -1 })).toThrow(RingConfigError);
    expect(() => createRing({ capacityBytes: 1024, indexOrigin: 4 })).toThrow(/aligned/);
  });

  it('refuses an oversize frame with a result, not a crash, and keeps working', () => {
    const handle = createRing({ capacityBytes: 1024, frameSizeMax: 100 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    expect(producer.tryWrite(bytes(101, 1))).toBe('too-large');
    expect(producer.tryWrite(bytes(50, 1), bytes(51, 1))).toBe('too-large');
    expect(producer.tryWriteParts([bytes(60, 1), bytes(41, 1)])).toBe('too-large');
    expect(producer.reserve(101)).toBe('too-large');
    expect(producer.unpublishedBytes).toBe(0);
    expect(producer.tryWrite(bytes(100, 7))).toBe('ok');
    producer.flush();
    expect(drain(consumer)).toEqual([bytes(100, 7)]);
  });

  it('allows one producer and one consumer per ring', () => {
    const handle = createRing({ capacityBytes: 256 });
    RingProducer.attach(handle);
    RingConsumer.attach(handle);
    expect(() => RingProducer.attach(handle)).toThrow(AssertionError);
    expect(() => RingConsumer.attach(handle)).toThrow(AssertionError);
  });
});

describe('wrap-around', () => {
  it('carries every frame length from every starting position, across the u32 counter wrap', () => {
    const capacityBytes = 256;
    const frameSizeMax = frameSizeLimit(capacityBytes);
    for (const base of [0, 0x1_0000_0000 - 2 * capacityBytes]) {
      for (let start = 0; start < capacityBytes; start += 8) {
        for (let length = 0; length <= frameSizeMax; length++) {
          const handle = createRing({ capacityBytes, indexOrigin: base + start });
          const producer = RingProducer.attach(handle);
          const consumer = RingConsumer.attach(handle);
          // Three laps' worth of frames, two at a time so the ring wraps while holding data.
          let written = 0;
          let read = 0;
          while (written < 3 * (capacityBytes / recordBytes(length))) {
            for (let k = 0; k < 2 && producer.tryWrite(bytes(length, written)) === 'ok'; k++) written++;
            producer.flush();
            for (const frame of drain(consumer)) {
              if (frame.length !== length || frame.some((b) => b !== (read & 0xff))) {
                expect.fail(`start ${base + start} length ${length}: frame ${read} corrupt`);
              }
              read++;
            }
          }
          if (read !== written) expect.fail(`start ${base + start} length ${length}: ${read} of ${written}`);
        }
      }
    }
  });

  it('pads to the end of the ring when a record does not fit before it', () => {
    const handle = createRing({ capacityBytes: 256, indexOrigin: 256 - 16 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    expect(producer.tryWrite(bytes(20, 1))).toBe('ok'); // record 32 > 16 left: 16 padding, then at 0
    expect(producer.unpublishedBytes).toBe(16 + 32);
    producer.flush();
    const data = new Uint8Array(handle.buffer, RING_HEADER_BYTES);
    expect(new Int32Array(handle.buffer, RING_HEADER_BYTES + 240, 1)[0]).toBe(-1);
    expect(data.subarray(8, 28)).toEqual(bytes(20, 1));
    expect(drain(consumer)).toEqual([bytes(20, 1)]);
  });

  it('guarantees progress: the largest frame fits an empty ring at any position', () => {
    const capacityBytes = 512;
    for (let start = 0; start < capacityBytes; start += 8) {
      const handle = createRing({ capacityBytes, indexOrigin: start });
      const producer = RingProducer.attach(handle);
      expect(producer.tryWrite(bytes(frameSizeLimit(capacityBytes), 1)), String(start)).toBe('ok');
    }
  });
});

describe('producer API', () => {
  it('writes header + body without concatenating, and parts', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    expect(producer.tryWrite(Uint8Array.of(1, 2), Uint8Array.of(3))).toBe('ok');
    expect(producer.tryWriteParts([Uint8Array.of(4), new Uint8Array(0), Uint8Array.of(5, 6)])).toBe('ok');
    expect(producer.tryWriteParts([])).toBe('ok');
    producer.flush();
    expect(drain(consumer)).toEqual([Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5, 6), new Uint8Array(0)]);
  });

  it('reserve gives a contiguous view in the ring; commit may use less of it', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    const view = producer.reserve(100);
    if (typeof view === 'string') return expect.fail(view);
    expect(view.buffer).toBe(handle.buffer);
    view.set([9, 8, 7]);
    expect(() => producer.tryWrite(bytes(1, 1))).toThrow(AssertionError);
    expect(() => producer.commit(101)).toThrow(AssertionError);
    producer.commit(3);
    producer.flush();
    expect(drain(consumer)).toEqual([Uint8Array.of(9, 8, 7)]);
  });

  it('stages writes until flush publishes them with one store', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    for (let i = 0; i < 5; i++) producer.tryWrite(bytes(10, i));
    expect(consumer.hasWork()).toBe(false);
    expect(drain(consumer)).toEqual([]);
    const write = new Int32Array(handle.buffer, 0, 1);
    const before = Atomics.load(write, 0);
    producer.flush();
    expect(Atomics.load(write, 0) - before).toBe(5 * recordBytes(10));
    expect(drain(consumer)).toHaveLength(5);
  });

  it("returns 'full' without copying, and makes progress once the consumer reads", () => {
    const handle = createRing({ capacityBytes: 256 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    let ok = 0;
    while (producer.tryWrite(bytes(24, ok)) === 'ok') ok++;
    expect(ok).toBe(256 / 32);
    const staged = producer.unpublishedBytes;
    expect(producer.tryWrite(bytes(24, 0))).toBe('full');
    expect(producer.unpublishedBytes).toBe(staged);
    producer.flush();
    expect(consumer.read(() => undefined, 1)).toBe(1);
    expect(producer.tryWrite(bytes(24, 99))).toBe('ok');
  });
});

describe('consumer API', () => {
  it('a visitor returning false keeps the frame for the next read', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    for (let i = 0; i < 4; i++) producer.tryWrite(bytes(4, i));
    producer.flush();
    const seen: number[] = [];
    expect(consumer.read((frame) => (frame[0] === 2 ? false : (seen.push(frame[0] as number), true)))).toBe(2);
    expect(consumer.read((frame) => void seen.push(frame[0] as number))).toBe(2);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('a visitor that throws leaves its frame; the earlier ones are released', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    for (let i = 0; i < 3; i++) producer.tryWrite(bytes(4, i));
    producer.flush();
    expect(() => consumer.read((frame) => {
      if (frame[0] === 1) throw new Error('boom');
    })).toThrow('boom');
    expect(drain(consumer).map((frame) => frame[0])).toEqual([1, 2]);
  });

  it('readInPlace hands out offsets into the data region', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    producer.tryWrite(Uint8Array.of(5, 6, 7));
    producer.flush();
    consumer.readInPlace((data, offset, length, source) => {
      expect(data.buffer).toBe(handle.buffer);
      expect([...data.subarray(offset, offset + length)]).toEqual([5, 6, 7]);
      expect(source).toBe(0);
    });
  });

  it('rejects reads from inside a visitor', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    producer.tryWrite(bytes(1, 1));
    producer.flush();
    expect(() => consumer.read(() => void consumer.read(() => undefined))).toThrow(AssertionError);
  });
});

describe('close', () => {
  it('the consumer reads what is left, then sees ended', async () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    producer.tryWrite(bytes(8, 1));
    producer.tryWrite(bytes(8, 2)); // unflushed: close flushes
    producer.close();
    expect(consumer.ended).toBe(false);
    expect(consumer.hasWork()).toBe(true);
    expect(drain(consumer)).toHaveLength(2);
    expect(consumer.ended).toBe(true);
    expect(consumer.hasWork()).toBe(false);
    expect(await consumer.wait()).toBe('ready'); // never parks once ended
    expect(() => producer.tryWrite(bytes(1, 1))).toThrow(AssertionError);
  });

  it("after the consumer closes, full writes and flushes report 'closed'", async () => {
    const handle = createRing({ capacityBytes: 64 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    consumer.close();
    expect(producer.consumerClosed).toBe(true);
    expect(producer.flush()).toBe('closed');
    while (producer.tryWrite(bytes(8, 0)) === 'ok');
    expect(producer.tryWrite(bytes(8, 0))).toBe('closed');
    expect(await producer.write(bytes(8, 0))).toBe('closed');
    expect(() => consumer.read(() => undefined)).toThrow(AssertionError);
  });
});

describe('handles', () => {
  it('are structured-clone safe: a clone attaches to the same memory', () => {
    const handle = createRing({ capacityBytes: 1024 });
    const clone = structuredClone(handle);
    expect(clone.buffer).not.toBe(handle.buffer);
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(clone);
    producer.tryWrite(Uint8Array.of(1, 2, 3));
    producer.flush();
    expect(drain(consumer)).toEqual([Uint8Array.of(1, 2, 3)]);
  });

  it('are checked against their buffer on attach', () => {
    const handle = createRing({ capacityBytes: 1024 });
    expect(() => RingProducer.attach({ ...handle, capacityBytes: 2048 })).toThrow(AssertionError);
    expect(() => RingProducer.attach({ ...handle, frameSizeMax: 10 })).toThrow(AssertionError);
    expect(() => RingProducer.attach({ ...handle, doorbell: createDoorbell() })).toThrow(/doorbell/);
    expect(() => RingProducer.attach({ ...handle, buffer: new SharedArrayBuffer(RING_HEADER_BYTES + 1024) })).toThrow(/magic/);
  });
});

describe('parking within one thread', () => {
  it('wait resolves at once when frames are there, and times out when none come', async () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    expect(await consumer.wait(5)).toBe('timed-out');
    producer.tryWrite(bytes(1, 1));
    producer.flush();
    expect(await consumer.wait(5)).toBe('ready');
  });

  it('a parked consumer is woken by a flush (and only then)', async () => {
    const handle = createRing({ capacityBytes: 1024 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    const parked = consumer.wait(5_000);
    const doorbell = new Int32Array(handle.doorbell.buffer);
    expect(Atomics.load(doorbell, 1)).toBe(1); // DATA_PARKED
    producer.tryWrite(bytes(1, 1));
    expect(Atomics.load(doorbell, 0)).toBe(0); // staged only: nobody rang
    producer.flush();
    expect(Atomics.load(doorbell, 0)).toBe(1);
    expect(await parked).toBe('ready');
    expect(Atomics.load(doorbell, 1)).toBe(0);
    // Not parked: a flush does not ring.
    producer.tryWrite(bytes(1, 1));
    producer.flush();
    expect(Atomics.load(doorbell, 0)).toBe(1);
  });

  it('a parked producer is woken only once the space it wants is free', async () => {
    const handle = createRing({ capacityBytes: 256 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    for (let i = 0; i < 8; i++) expect(producer.tryWrite(bytes(24, i))).toBe('ok'); // 8 × 32 = full
    let resolved = false;
    const write = producer.write(bytes(100, 9)).then((outcome) => {
      resolved = true;
      return outcome;
    }); // needs 112 bytes
    const control = new Int32Array(handle.buffer);
    expect(Atomics.load(control, 65)).toBe(112); // SPACE_WANTED
    expect(consumer.read(() => undefined, 1)).toBe(1); // 32 free: not enough, no ring
    expect(Atomics.load(control, 64)).toBe(0); // SPACE_SEQ
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(resolved).toBe(false);
    expect(consumer.read(() => undefined, 3)).toBe(3); // 128 free: ring
    expect(Atomics.load(control, 64)).toBe(1);
    expect(await write).toBe('ok');
  });

  it('one awaited write at a time: a second one would overtake the first', async () => {
    const handle = createRing({ capacityBytes: 64 });
    const producer = RingProducer.attach(handle);
    const consumer = RingConsumer.attach(handle);
    while (producer.tryWrite(bytes(8, 0)) === 'ok');
    const first = producer.write(bytes(8, 1));
    expect(() => producer.write(bytes(8, 2))).toThrow(AssertionError);
    expect(() => producer.tryWrite(bytes(8, 2))).toThrow(AssertionError);
    drain(consumer);
    expect(await first).toBe('ok');
  });
});

describe('Inbox', () => {
  it('reads several rings through one doorbell, round-robin, tagging the source', async () => {
    const doorbell = createDoorbell();
    const handles = [createRing({ capacityBytes: 1024, doorbell }), null, createRing({ capacityBytes: 1024, doorbell })];
    const inbox = Inbox.attach(handles);
    const producers = [RingProducer.attach(handles[0]!), RingProducer.attach(handles[2]!)];
    const parked = inbox.wait(5_000);
    for (let i = 0; i < 3; i++) producers[1]!.tryWrite(Uint8Array.of(20 + i));
    producers[1]!.flush(); // wakes the inbox through the shared doorbell
    expect(await parked).toBe('ready');
    for (let i = 0; i < 3; i++) producers[0]!.tryWrite(Uint8Array.of(i));
    producers[0]!.flush();
    const seen: [number, number][] = [];
    const visit = (frame: Uint8Array, source: number): void => void seen.push([source, frame[0] as number]);
    expect(inbox.read(visit, 1)).toBe(2);
    expect(inbox.read(visit, 1)).toBe(2);
    expect(inbox.read(visit)).toBe(2);
    // Per-source FIFO, and the pass start rotates so neither source always goes first.
    expect(seen.filter(([s]) => s === 0).map(([, v]) => v)).toEqual([0, 1, 2]);
    expect(seen.filter(([s]) => s === 2).map(([, v]) => v)).toEqual([20, 21, 22]);
    expect(seen[0]?.[0]).not.toBe(seen[2]?.[0]);
    expect(inbox.ended).toBe(false);
    producers[0]!.close();
    producers[1]!.close();
    expect(inbox.ended).toBe(true);
    expect(inbox.consumer(1)).toBe(null);
  });

  it('refuses rings that do not share its doorbell', () => {
    expect(() => Inbox.attach([createRing({ capacityBytes: 256 }), createRing({ capacityBytes: 256 })])).toThrow(/doorbell/);
  });
});

describe('mesh', () => {
  it('builds one ring per ordered pair with one doorbell per receiver', () => {
    const mesh = createMesh({ threadCount: 4, capacityBytes: 1024 });
    const endpoints = [0, 1, 2, 3].map((thread) => meshEndpoints(mesh, thread));
    const inboxes = endpoints.map((e) => Inbox.attach(e.inbound));
    const producers = endpoints.map((e) => e.outbound.map((handle) => (handle === null ? null : RingProducer.attach(handle))));
    const prng = new Prng(7);
    const sent = new Map<string, number[]>();
    for (let i = 0; i < 200; i++) {
      const from = prng.below(4);
      const to = (from + 1 + prng.below(3)) % 4;
      expect(producers[from]![to]!.tryWrite(Uint8Array.of(i))).toBe('ok');
      sent.set(`${from}>${to}`, [...(sent.get(`${from}>${to}`) ?? []), i]);
    }
    for (const row of producers) for (const producer of row) producer?.flush();
    const got = new Map<string, number[]>();
    inboxes.forEach((inbox, to) => inbox.read((frame, from) => {
      got.set(`${from}>${to}`, [...(got.get(`${from}>${to}`) ?? []), frame[0] as number]);
    }));
    expect(got).toEqual(sent);
    expect(meshBytes(4, 1024)).toBe(12 * (RING_HEADER_BYTES + 1024) + 4 * 128);
    expect(() => createMesh({ threadCount: 1, capacityBytes: 1024 })).toThrow(RingConfigError);
  });
});
