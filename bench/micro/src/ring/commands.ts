/**
 * The typed boundary between the ring suite (main thread) and its two peer workers. The main
 * thread sends commands; a peer answers each with exactly one reply, in order.
 *
 * Times are `process.hrtime.bigint()` as a number of nanoseconds: one monotonic clock for the
 * whole process, so a producer's start and a consumer's end can be subtracted across threads
 * (`performance.now()` has a per-thread origin).
 */

import type { MessagePort } from 'node:worker_threads';
import type { RingHandle } from '@shoal/ring';

/** How the consumer treats each frame: touch two bytes of the view, same with no view allocated, or copy it out to a pooled buffer. */
export type ConsumeMode = 'view' | 'in-place' | 'copy';

export type PeerCommand =
  | { readonly kind: 'attach-rings'; readonly produce: readonly RingHandle[]; readonly consume: readonly RingHandle[] }
  | { readonly kind: 'attach-port'; readonly port: MessagePort }
  | { readonly kind: 'ring-send'; readonly ring: number; readonly frameBytes: number; readonly frames: number; readonly framesPerFlush: number }
  | { readonly kind: 'ring-receive'; readonly ring: number; readonly frames: number; readonly mode: ConsumeMode }
  | { readonly kind: 'port-send'; readonly frameBytes: number; readonly frames: number; readonly transfer: boolean; readonly window: number }
  | { readonly kind: 'port-receive'; readonly frames: number; readonly ackEvery: number }
  /** Ping-pong of 8-byte frames carrying a send time; the peer records one-way wake latencies. */
  | { readonly kind: 'ring-ping'; readonly out: number; readonly in: number; readonly rounds: number; readonly serve: boolean }
  | { readonly kind: 'port-ping'; readonly rounds: number; readonly serve: boolean };

export type PeerReply =
  | { readonly kind: 'attached' }
  | { readonly kind: 'ready' }
  | { readonly kind: 'sent'; readonly startNs: number; readonly paddingBytes: number; readonly recordBytes: number; readonly parks: number }
  | { readonly kind: 'received'; readonly endNs: number }
  /** One-way latencies (ns) of the frames that found this side parked. */
  | { readonly kind: 'latencies'; readonly samples: Float64Array; readonly rounds: number }
  | { readonly kind: 'failed'; readonly error: string };
