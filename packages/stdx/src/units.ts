/**
 * The one parser of human-readable durations and byte sizes, shared by the node's configuration,
 * topic options, connection strings and the CLI, so every surface accepts the same syntax.
 *
 * Durations are the reference server's (Rust `humantime`, as `IggyDuration` / `IggyExpiry` read
 * them): one or more `<integer><unit>` spans, blanks allowed between spans and between a number
 * and its unit ("500ms", "5 s", "1h 30m", "1h30m", "7 days"). Numbers are non-negative integers
 * (no fractions, no signs). Units are case-sensitive because `m` is a minute and `M` a month:
 *
 *   ns nsec nanos | us µs usec micros | ms msec millis | s sec secs second(s) | m min mins minute(s)
 *   h hr hrs hour(s) | d day(s) | w wk wks week(s) | M month(s) (30.44 d) | y yr yrs year(s) (365.25 d)
 *
 * `0` alone is zero. Any other bare number is refused: "5" could mean seconds or milliseconds.
 *
 * Sizes are a number with an optional fraction and an optional unit, case-insensitive, blanks
 * allowed before the unit ("64 MiB", "1GB", "1.5 KiB", "4096"): `B`; SI `KB MB GB TB PB` (also
 * `K M G T P`) × 1000; IEC `KiB MiB GiB TiB PiB` × 1024. A bare number is bytes. The result must
 * be a whole number of bytes ("1.5 KiB" = 1536 is fine, "0.1 B" is not).
 *
 * Results are exact (bigint nanoseconds, bigint bytes); the `...Ms` / `...Bytes` helpers convert
 * for callers that keep numbers. Sentinel words (`unlimited`, `server_default`, ...) differ by
 * surface and are read by the helpers at the end, not by the core grammar.
 */

export type UnitParse<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const NS = 1n;
const US = 1_000n * NS;
const MS = 1_000n * US;
const SECOND = 1_000n * MS;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;
const DAY = 24n * HOUR;

/** Nanoseconds per duration unit (humantime's table: a month is 30.44 days, a year 365.25 days). */
export const DURATION_UNITS: ReadonlyMap<string, bigint> = new Map<string, bigint>([
  ...aliases(['nanoseconds', 'nanosecond', 'nanos', 'nsec', 'ns'], NS),
  ...aliases(['microseconds', 'microsecond', 'micros', 'usec', 'us', 'µs'], US),
  ...aliases(['milliseconds', 'millisecond', 'millis', 'msec', 'ms'], MS),
  ...aliases(['seconds', 'second', 'secs', 'sec', 's'], SECOND),
  ...aliases(['minutes', 'minute', 'mins', 'min', 'm'], MINUTE),
  ...aliases(['hours', 'hour', 'hrs', 'hr', 'h'], HOUR),
  ...aliases(['days', 'day', 'd'], DAY),
  ...aliases(['weeks', 'week', 'wks', 'wk', 'w'], 7n * DAY),
  ...aliases(['months', 'month', 'M'], 2_630_016n * SECOND),
  ...aliases(['years', 'year', 'yrs', 'yr', 'y'], 31_557_600n * SECOND),
]);

/** Bytes per size unit, keyed in lower case. */
export const SIZE_UNITS: ReadonlyMap<string, bigint> = new Map<string, bigint>([
  ['', 1n], ['b', 1n],
  ...siUnits(['k', 'm', 'g', 't', 'p']),
  ['kib', 1n << 10n], ['mib', 1n << 20n], ['gib', 1n << 30n], ['tib', 1n << 40n], ['pib', 1n << 50n],
]);

/** A span: digits, optional blanks, a unit of letters (and `µ`), trailing blanks. */
const SPAN = /(\d+)[ \t]*([A-Za-zµ]+)[ \t]*/y;
const SIZE = /^(\d+)(?:\.(\d+))?[ \t]*([A-Za-z]*)$/;

/** A duration in nanoseconds. */
export function parseDuration(text: string): UnitParse<bigint> {
  const input = text.trim();
  if (input === '') return fail('empty duration');
  if (/^\d+$/.test(input)) {
    return /^0+$/.test(input) ? ok(0n) : fail(`missing unit (write e.g. "${input}ms" or "${input}s")`);
  }
  let total = 0n;
  let at = 0;
  while (at < input.length) {
    SPAN.lastIndex = at;
    const match = SPAN.exec(input);
    if (match === null) return fail(`cannot parse "${input.slice(at)}"`);
    const unit = DURATION_UNITS.get(match[2] ?? '');
    if (unit === undefined) return fail(`unknown unit "${match[2] ?? ''}"`);
    total += BigInt(match[1] ?? '0') * unit;
    at = SPAN.lastIndex;
  }
  return ok(total);
}

/** A duration in milliseconds (fractional below 1 ms), up to Number.MAX_SAFE_INTEGER ms. */
export function parseDurationMs(text: string): UnitParse<number> {
  const parsed = parseDuration(text);
  if (!parsed.ok) return parsed;
  const whole = parsed.value / MS;
  if (whole > BigInt(Number.MAX_SAFE_INTEGER)) return fail('duration too large');
  return ok(Number(whole) + Number(parsed.value % MS) / 1e6);
}

/** A size in bytes. */
export function parseSize(text: string): UnitParse<bigint> {
  const input = text.trim();
  if (input === '') return fail('empty size');
  const match = SIZE.exec(input);
  if (match === null) return fail(`cannot parse "${input}" as a size (e.g. "64 MiB")`);
  const unit = SIZE_UNITS.get((match[3] ?? '').toLowerCase());
  if (unit === undefined) return fail(`unknown size unit "${match[3] ?? ''}"`);
  const fraction = match[2] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const scaled = (BigInt(match[1] ?? '0') * scale + BigInt(fraction === '' ? '0' : fraction)) * unit;
  if (scaled % scale !== 0n) return fail(`"${input}" is not a whole number of bytes`);
  return ok(scaled / scale);
}

/** A size in bytes as a safe integer. */
export function parseSizeBytes(text: string): UnitParse<number> {
  const parsed = parseSize(text);
  if (!parsed.ok) return parsed;
  if (parsed.value > BigInt(Number.MAX_SAFE_INTEGER)) return fail(`"${text.trim()}" is too large`);
  return ok(Number(parsed.value));
}

// ---- sentinels, per surface -----------------------------------------------------------------

/** Words the reference's `IggyDuration` (server configuration) reads as zero, i.e. "off". */
export const DISABLED_DURATION_WORDS: ReadonlySet<string> = new Set(['0', 'disabled', 'unlimited', 'none']);

/** A configuration duration: a duration in ms, or one of DISABLED_DURATION_WORDS (0). */
export function parseConfigDurationMs(text: string): UnitParse<number> {
  return DISABLED_DURATION_WORDS.has(text.trim().toLowerCase()) ? ok(0) : parseDurationMs(text);
}

/** A message or token expiry (the reference's `IggyExpiry`). */
export type Expiry =
  | { readonly kind: 'server_default' }
  | { readonly kind: 'never' }
  | { readonly kind: 'after'; readonly ns: bigint };

const NEVER_WORDS: ReadonlySet<string> = new Set(['unlimited', 'none', 'never', 'never_expire']);

/** `server_default`, `unlimited` / `none` / `never` / `never_expire`, or a duration. */
export function parseExpiry(text: string): UnitParse<Expiry> {
  const word = text.trim().toLowerCase();
  if (word === 'server_default') return ok({ kind: 'server_default' });
  if (NEVER_WORDS.has(word)) return ok({ kind: 'never' });
  const parsed = parseDuration(text);
  return parsed.ok ? ok({ kind: 'after', ns: parsed.value }) : parsed;
}

/** A size limit (the reference's `MaxTopicSize`). */
export type SizeLimit = { readonly kind: 'server_default' } | { readonly kind: 'unlimited' } | { readonly kind: 'bytes'; readonly bytes: bigint };

/** `server_default`, `unlimited` / `none`, or a size. */
export function parseSizeLimit(text: string): UnitParse<SizeLimit> {
  const word = text.trim().toLowerCase();
  if (word === 'server_default') return ok({ kind: 'server_default' });
  if (word === 'unlimited' || word === 'none') return ok({ kind: 'unlimited' });
  const parsed = parseSize(text);
  return parsed.ok ? ok({ kind: 'bytes', bytes: parsed.value }) : parsed;
}

// ---- formatting ------------------------------------------------------------------------------

const DURATION_FORMATS: readonly (readonly [string, number])[] = [
  ['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000], ['ms', 1],
];

/**
 * Milliseconds in the largest unit that divides them exactly ("5s", "500ms", "2m", "7d"), so the
 * output parses back to the same value. Sub-millisecond values print in µs.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (!Number.isInteger(ms)) return `${Math.round(ms * 1000)}us`;
  for (const [unit, size] of DURATION_FORMATS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const SIZE_FORMATS: readonly (readonly [string, number])[] = [
  ['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10],
  ['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['KB', 1e3],
];

/** Bytes with the unit that gives the smallest exact number ("4 GB", "64 MiB", "1200 B"). */
export function formatSize(bytes: number): string {
  let best = `${bytes} B`;
  let bestValue = bytes;
  for (const [unit, size] of SIZE_FORMATS) {
    if (bytes !== 0 && bytes % size === 0 && bytes / size < bestValue) {
      best = `${bytes / size} ${unit}`;
      bestValue = bytes / size;
    }
  }
  return best;
}

function aliases(names: readonly string[], value: bigint): (readonly [string, bigint])[] {
  return names.map((name) => [name, value] as const);
}

function siUnits(letters: readonly string[]): (readonly [string, bigint])[] {
  return letters.flatMap((letter, i) => {
    const value = 1000n ** BigInt(i + 1);
    return [[letter, value] as const, [`${letter}b`, value] as const];
  });
}

function ok<T>(value: T): UnitParse<T> {
  return { ok: true, value };
}

function fail(reason: string): { readonly ok: false; readonly reason: string } {
  return { ok: false, reason };
}
