import type { Prng } from '@shoal/stdx';

/**
 * A fuzz target wraps one decoder/validator. The harness feeds it random inputs and mutations of
 * its seeds. `run` must never throw for any input; it returns a deterministic summary of the
 * outcome (e.g. `ok:<key fields>` or `fail:<reason>`). The harness runs each input twice, once as
 * an exact-size copy and once embedded between random canary bytes, and a differing summary
 * means the decoder read outside its input (an over-read).
 */
export interface FuzzTarget {
  readonly name: string;
  /** Well-formed inputs that the mutator starts from. */
  seeds(prng: Prng): Uint8Array[];
  run(input: Uint8Array): string;
}
