/**
 * The shape `npm run fuzz` (packages/protocol/scripts/fuzz/harness.ts) loads from
 * each file of fuzz-targets/: the same interface as protocol's `FuzzTarget`, restated here so the
 * runtime's targets do not import another package's scripts. The harness checks the shape.
 */
import type { Prng } from '@shoal/stdx';

export interface FuzzTarget {
  readonly name: string;
  seeds(prng: Prng): Uint8Array[];
  /** Never throws; a deterministic summary of the outcome (over-reads show as differing summaries). */
  run(input: Uint8Array): string;
}
