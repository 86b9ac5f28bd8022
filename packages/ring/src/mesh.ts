/**
 * Mesh: one SPSC ring per ordered pair of threads, and one doorbell per receiving thread, so
 * every ring has exactly one producer and one consumer and each thread waits on one word.
 *
 * ```
 *   rings[from][to]         to: 0        1        2
 *              from 0:         ·      0→1      0→2        doorbells[k] is shared by
 *                   1:       1→0        ·      1→2        every rings[*][k]: thread k's
 *                   2:       2→0      2→1        ·        Inbox parks on it once
 * ```
 *
 * Memory: T threads need T·(T−1) rings, each RING_HEADER_BYTES + capacityBytes, plus T
 * doorbells of DOORBELL_BYTES. docs/ring.md tabulates it for N shards.
 */

import { assert } from '@shoal/stdx';
import { type DoorbellHandle, type RingHandle, RingConfigError, createDoorbell, createRing } from './handle.js';
import { DOORBELL_BYTES, RING_HEADER_BYTES } from './layout.js';

export interface MeshOptions {
  readonly threadCount: number;
  /** Data bytes per ring: one number, or one per ordered pair (e.g. larger towards shards). */
  readonly capacityBytes: number | ((from: number, to: number) => number);
  /** Default: the largest the capacity allows. */
  readonly frameSizeMax?: number;
}

export interface Mesh {
  readonly threadCount: number;
  readonly doorbells: readonly DoorbellHandle[];
  /** rings[from][to]; null on the diagonal. */
  readonly rings: readonly (readonly (RingHandle | null)[])[];
}

/** What one thread needs: post it to the thread, then `Inbox.attach(inbound)` and one producer per outbound ring. */
export interface MeshEndpoints {
  readonly thread: number;
  /** inbound[from]: the ring `from` → this thread, null for itself. */
  readonly inbound: readonly (RingHandle | null)[];
  /** outbound[to]: the ring this thread → `to`, null for itself. */
  readonly outbound: readonly (RingHandle | null)[];
}

/** Largest mesh we build: 64 threads is already 4,032 rings. */
export const MESH_THREAD_COUNT_MAX = 64;

export function createMesh(options: MeshOptions): Mesh {
  const { threadCount } = options;
  if (!Number.isInteger(threadCount) || threadCount < 2 || threadCount > MESH_THREAD_COUNT_MAX) {
    throw new RingConfigError(`mesh threadCount ${threadCount} not in [2, ${MESH_THREAD_COUNT_MAX}]`);
  }
  const capacity = options.capacityBytes;
  const doorbells = Array.from({ length: threadCount }, () => createDoorbell());
  const rings = Array.from({ length: threadCount }, (_, from) =>
    Array.from({ length: threadCount }, (_, to): RingHandle | null => {
      if (from === to) return null;
      const capacityBytes = typeof capacity === 'number' ? capacity : capacity(from, to);
      const doorbell = doorbells[to] as DoorbellHandle;
      return options.frameSizeMax === undefined
        ? createRing({ capacityBytes, doorbell })
        : createRing({ capacityBytes, doorbell, frameSizeMax: options.frameSizeMax });
    }),
  );
  return { threadCount, doorbells, rings };
}

export function meshEndpoints(mesh: Mesh, thread: number): MeshEndpoints {
  assert(Number.isInteger(thread) && thread >= 0 && thread < mesh.threadCount, 'mesh: thread out of range');
  const inbound = mesh.rings.map((row) => row[thread] ?? null);
  const outbound = (mesh.rings[thread] as readonly (RingHandle | null)[]).slice();
  return { thread, inbound, outbound };
}

/** Shared memory a mesh of `threadCount` threads with `capacityBytes` rings takes. */
export function meshBytes(threadCount: number, capacityBytes: number): number {
  return threadCount * (threadCount - 1) * (RING_HEADER_BYTES + capacityBytes) + threadCount * DOORBELL_BYTES;
}
