/**
 * What the host knows about an inbound replica-plane frame. The core validates every frame it is
 * given (replication-semantics.md §1.2 steps 1..7) unless the host says it already has: a node's
 * replica link validates each frame once, at ingress, with the same limits (`validateHeader` with
 * `max_message_size` and the replica count), so that work is not repeated here. The simulator and
 * tests hand frames in with the default and get the core's own validation.
 */
export interface FrameIngress {
  /** `validateHeader` passed with this replica's `messageSizeMax` and `replicaCount`. */
  readonly validated: boolean;
  /**
   * The buffer holds exactly this frame, was made for it alone, and nothing else keeps or reuses
   * it: the journal adopts a live prepare's bytes instead of copying them.
   */
  readonly owned: boolean;
}

/** A frame the core knows nothing about: validated here, copied where kept. */
export const UNCHECKED_INGRESS: FrameIngress = Object.freeze({ validated: false, owned: false });
