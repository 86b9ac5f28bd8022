/**
 * Consensus time. The VSR core counts ticks, never milliseconds (style habit 3); the host turns
 * a 10 ms timer into `tick()` calls. Config durations become ticks by integer division, with a
 * floor of one tick so that a sub-tick duration means "next tick", never "never" or "now"
 * (replication-semantics.md §4.2).
 */

export const TICK_MS = 10;

export function msToTicks(ms: number): number {
  return Math.max(1, Math.floor(ms / TICK_MS));
}
