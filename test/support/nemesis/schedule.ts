/**
 * The nemesis's fault plan: a pure function of (seed, cluster size, duration). The same seed
 * always gives the same list of episodes, so a failing run is named by its seed; what the real
 * processes do under the plan is not deterministic, which is why the checks look only at
 * outcomes (acknowledged data, convergence), never at timings.
 *
 * An episode is one fault (or one overlapping pair) followed by a heal and a quiet gap:
 *
 *   kill        SIGKILL one node, restart it after `holdMs`
 *   kill-primary SIGKILL the data partitions' primary of the moment (the metadata leader when
 *               unknown), restart it after `holdMs`
 *   pause       SIGSTOP one node, SIGCONT after `holdMs` (a node that looks alive but says nothing)
 *   isolate     every link of one node blackholed (`hold`: bytes stall) or dropped (`drop`: bytes
 *               vanish, the stream breaks) for `holdMs`
 *   cut         one replica link dropped both ways for `holdMs`
 *   restart-then-kill-primary   restart one node, and `gapMs` later (before it caught up) SIGKILL
 *               the primary: the overlapping recovery of issue 12 (the 35-45 s stall)
 *   rolling     restart every node in turn, each `gapMs` after the previous one came back (not
 *               after it caught up): recovery overlaps the next crash
 *
 * At most f = (n-1)/2 nodes are down at once, so the cluster stays able to commit: a run checks
 * safety and also that writes resume after every heal.
 */
import { Prng } from '@shoal/stdx';

export type Fault =
  | { readonly kind: 'kill'; readonly node: number; readonly holdMs: number }
  | { readonly kind: 'kill-primary'; readonly holdMs: number }
  | { readonly kind: 'pause'; readonly node: number; readonly holdMs: number }
  | { readonly kind: 'isolate'; readonly node: number; readonly mode: 'hold' | 'drop'; readonly holdMs: number }
  | { readonly kind: 'cut'; readonly a: number; readonly b: number; readonly holdMs: number }
  | { readonly kind: 'restart-then-kill-primary'; readonly node: number; readonly gapMs: number; readonly holdMs: number }
  | { readonly kind: 'rolling'; readonly order: readonly number[]; readonly gapMs: number; readonly signal: 'SIGKILL' | 'SIGTERM' };

export interface Episode {
  readonly fault: Fault;
  /** Quiet time after the heal, before the next episode. */
  readonly quietMs: number;
}

export interface PlanOptions {
  readonly seed: number;
  readonly nodes: number;
  /** Total planned fault time (sum of the episodes' estimated lengths). */
  readonly durationMs: number;
  /** Which fault kinds to draw from (default: all). */
  readonly kinds?: readonly Fault['kind'][];
}

export const ALL_KINDS: readonly Fault['kind'][] = ['kill', 'kill-primary', 'pause', 'isolate', 'cut', 'restart-then-kill-primary', 'rolling'];

/** How long a fault lasts at least and at most (ms): beyond the 5 s heartbeat window and below it. */
const HOLD_MIN_MS = 1_000;
const HOLD_MAX_MS = 9_000;
const QUIET_MIN_MS = 1_500;
const QUIET_MAX_MS = 5_000;
/** A restart takes a few seconds on this machine: what an episode's estimate adds per restart. */
const RESTART_ESTIMATE_MS = 3_000;

export function plan(options: PlanOptions): Episode[] {
  const prng = new Prng(options.seed);
  const kinds = options.kinds ?? ALL_KINDS;
  const episodes: Episode[] = [];
  let planned = 0;
  while (planned < options.durationMs) {
    const fault = drawFault(prng, kinds[prng.below(kinds.length)] as Fault['kind'], options.nodes);
    const quietMs = prng.range(QUIET_MIN_MS, QUIET_MAX_MS);
    episodes.push({ fault, quietMs });
    planned += estimateMs(fault) + quietMs;
  }
  return episodes;
}

function drawFault(prng: Prng, kind: Fault['kind'], nodes: number): Fault {
  const node = prng.below(nodes);
  const holdMs = prng.range(HOLD_MIN_MS, HOLD_MAX_MS);
  switch (kind) {
    case 'kill': return { kind, node, holdMs };
    case 'kill-primary': return { kind, holdMs };
    case 'pause': return { kind, node, holdMs };
    case 'isolate': return { kind, node, mode: prng.bool() ? 'hold' : 'drop', holdMs };
    case 'cut': {
      const b = (node + 1 + prng.below(nodes - 1)) % nodes;
      return { kind, a: Math.min(node, b), b: Math.max(node, b), holdMs };
    }
    case 'restart-then-kill-primary': return { kind, node, gapMs: prng.range(200, 3_000), holdMs };
    case 'rolling': return { kind, order: shuffled(prng, nodes), gapMs: prng.range(0, 2_000), signal: prng.bool() ? 'SIGKILL' : 'SIGTERM' };
  }
}

function shuffled(prng: Prng, nodes: number): number[] {
  const order = Array.from({ length: nodes }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = prng.below(i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

export function estimateMs(fault: Fault): number {
  switch (fault.kind) {
    case 'rolling': return fault.order.length * (RESTART_ESTIMATE_MS + fault.gapMs);
    case 'restart-then-kill-primary': return 2 * RESTART_ESTIMATE_MS + fault.gapMs + fault.holdMs;
    case 'kill': case 'kill-primary': return RESTART_ESTIMATE_MS + fault.holdMs;
    default: return fault.holdMs;
  }
}

/** One line per episode, for the report and for replaying a seed by eye. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'kill': return `kill -9 node ${fault.node}, restart after ${fault.holdMs} ms`;
    case 'kill-primary': return `kill -9 the primary, restart after ${fault.holdMs} ms`;
    case 'pause': return `SIGSTOP node ${fault.node} for ${fault.holdMs} ms`;
    case 'isolate': return `isolate node ${fault.node} (${fault.mode}) for ${fault.holdMs} ms`;
    case 'cut': return `drop link ${fault.a}-${fault.b} for ${fault.holdMs} ms`;
    case 'restart-then-kill-primary': return `restart node ${fault.node}, ${fault.gapMs} ms later kill -9 the primary, restart it after ${fault.holdMs} ms`;
    case 'rolling': return `rolling ${fault.signal} restart ${fault.order.join(',')} with ${fault.gapMs} ms between`;
  }
}
