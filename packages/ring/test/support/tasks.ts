/**
 * The typed boundary between the threaded tests and support/ring-worker.ts: one task in (as
 * workerData), one report out. Kept apart from the worker module, which only runs in a worker.
 */

import type { RingHandle } from '@shoal/ring';

export type ProduceApi = 'write' | 'parts' | 'reserve';

export type WorkerTask =
  /** Writes `frameCount` checked frames (lengths from `seed`), flushing every 1..batchMax, then closes. */
  | { readonly kind: 'produce'; readonly ring: RingHandle; readonly seed: number; readonly frameCount: number;
      readonly sizeMax: number; readonly batchMax: number; readonly api: ProduceApi; readonly spinMax: number }
  /** Reads and checks `frameCount` frames until the producer closes. */
  | { readonly kind: 'consume'; readonly ring: RingHandle; readonly seed: number; readonly frameCount: number;
      readonly sizeMax: number; readonly spinMax: number }
  /** Sends every inbound frame back on outbound, until inbound ends; spins randomly around each park and flush. */
  | { readonly kind: 'echo'; readonly inbound: RingHandle; readonly outbound: RingHandle; readonly seed: number;
      readonly spinMax: number }
  /** Writes `frameLength`-byte frames with `write()` until a write resolves 'closed'. */
  | { readonly kind: 'produce-until-closed'; readonly ring: RingHandle; readonly frameLength: number }
  /** Attaches as producer, posts 'attached', closes when told to (without writing). */
  | { readonly kind: 'close-on-message'; readonly ring: RingHandle }
  /** Waits for a handle by message, posts it back (a clone of a clone), then produces on it. */
  | { readonly kind: 'relay-handle'; readonly frameCount: number };

export type WorkerReport =
  | { readonly kind: 'report'; readonly ok: true; readonly frames: number; readonly slowWrites: number; readonly parks: number }
  | { readonly kind: 'report'; readonly ok: false; readonly error: string };

export interface HandleMessage {
  readonly kind: 'handle';
  readonly ring: RingHandle;
}

export function isHandleMessage(message: unknown): message is HandleMessage {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'handle';
}
