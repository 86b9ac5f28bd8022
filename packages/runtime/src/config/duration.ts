/**
 * Human-readable durations, in the form the reference server accepts (Rust `humantime` plus the
 * `IggyDuration` sentinels): one or more `<integer><unit>` spans, optionally separated by
 * whitespace, with optional whitespace between the number and its unit.
 *
 *   "500ms"  "5s"  "5 s"  "2m"  "1h 30m"  "1 day"  "7 days"  "0"  "disabled"
 *
 * Numbers are non-negative integers (no fractions, no signs), as in humantime. A bare number
 * without a unit is refused except `0`: "5" could mean seconds or milliseconds, and a config
 * that silently means the wrong one is worse than one that does not boot.
 *
 * The sentinels `0`, `disabled`, `unlimited` and `none` parse to zero; whether zero is allowed
 * is a per-key rule decided by the caller.
 */

export type DurationParse =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly reason: string };

const NS_PER_MS = 1_000_000n;

/** Nanoseconds per unit. Case-sensitive: `M` is a month, `m` a minute (as in humantime). */
const UNIT_NS: ReadonlyMap<string, bigint> = new Map<string, bigint>([
  ...unitAliases(['nsec', 'ns'], 1n),
  ...unitAliases(['usec', 'us', 'µs'], 1_000n),
  ...unitAliases(['msec', 'ms', 'millis'], 1_000_000n),
  ...unitAliases(['seconds', 'second', 'secs', 'sec', 's'], 1_000_000_000n),
  ...unitAliases(['minutes', 'minute', 'mins', 'min', 'm'], 60n * 1_000_000_000n),
  ...unitAliases(['hours', 'hour', 'hrs', 'hr', 'h'], 3_600n * 1_000_000_000n),
  ...unitAliases(['days', 'day', 'd'], 86_400n * 1_000_000_000n),
  ...unitAliases(['weeks', 'week', 'wks', 'wk', 'w'], 7n * 86_400n * 1_000_000_000n),
  // humantime: a month is 30.44 days and a year 365.25 days.
  ...unitAliases(['months', 'month', 'M'], 2_630_016n * 1_000_000_000n),
  ...unitAliases(['years', 'year', 'yrs', 'yr', 'y'], 31_557_600n * 1_000_000_000n),
]);

const ZERO_SENTINELS: ReadonlySet<string> = new Set(['0', 'disabled', 'unlimited', 'none']);

/** A span: digits, optional blanks, a unit made of letters (and `µ`). */
const SPAN = /(\d+)[ \t]*([A-Za-zµ]+)[ \t]*/y;

/** The largest accepted duration: the largest integer millisecond count a double holds exactly. */
export const DURATION_MS_MAX = Number.MAX_SAFE_INTEGER;

export function parseDuration(text: string): DurationParse {
  const input = text.trim();
  if (input.length === 0) return { ok: false, reason: 'empty duration' };
  if (ZERO_SENTINELS.has(input)) return { ok: true, ms: 0 };
  if (/^\d+$/.test(input)) {
    return { ok: false, reason: `missing unit (write e.g. "${input}ms" or "${input}s")` };
  }
  let totalNs = 0n;
  SPAN.lastIndex = 0;
  let at = 0;
  while (at < input.length) {
    SPAN.lastIndex = at;
    const match = SPAN.exec(input);
    if (match === null) return { ok: false, reason: `cannot parse "${input.slice(at)}"` };
    const digits = match[1] ?? '';
    const unit = match[2] ?? '';
    const unitNs = UNIT_NS.get(unit);
    if (unitNs === undefined) return { ok: false, reason: `unknown unit "${unit}"` };
    totalNs += BigInt(digits) * unitNs;
    at = SPAN.lastIndex;
  }
  const wholeMs = totalNs / NS_PER_MS;
  if (wholeMs > BigInt(DURATION_MS_MAX)) return { ok: false, reason: 'duration too large' };
  const ms = Number(wholeMs) + Number(totalNs % NS_PER_MS) / 1e6;
  return { ok: true, ms };
}

const FORMAT_UNITS: readonly (readonly [string, number])[] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
];

/**
 * Formats milliseconds in the largest unit that divides them exactly ("5s", "500ms", "2m",
 * "7d"), so the output parses back to the same value. Sub-millisecond values print in µs.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (!Number.isInteger(ms)) return `${Math.round(ms * 1000)}us`;
  for (const [unit, size] of FORMAT_UNITS) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function unitAliases(names: readonly string[], ns: bigint): (readonly [string, bigint])[] {
  return names.map((name) => [name, ns] as const);
}
