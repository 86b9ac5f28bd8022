/**
 * Byte sizes in the forms the reference server accepts: a number with an optional decimal
 * (SI, ×1000) or binary (IEC, ×1024) unit, case-insensitive, with optional blanks between:
 *
 *   "64 MiB"  "1GB"  "2 MB"  "1200 B"  "1.5 KiB"  "4096"
 *
 * A bare number is bytes. A fraction is allowed only when the result is a whole number of bytes
 * ("1.5 KiB" = 1536 is fine, "0.1 B" is not).
 */

export type SizeParse =
  | { readonly ok: true; readonly bytes: number }
  | { readonly ok: false; readonly reason: string };

const UNIT_BYTES: ReadonlyMap<string, bigint> = new Map<string, bigint>([
  ['', 1n], ['b', 1n],
  ['kb', 1_000n], ['mb', 1_000n ** 2n], ['gb', 1_000n ** 3n], ['tb', 1_000n ** 4n], ['pb', 1_000n ** 5n],
  ['kib', 1n << 10n], ['mib', 1n << 20n], ['gib', 1n << 30n], ['tib', 1n << 40n], ['pib', 1n << 50n],
]);

const SIZE = /^(\d+)(?:\.(\d+))?[ \t]*([A-Za-z]*)$/;

export function parseSize(text: string): SizeParse {
  const input = text.trim();
  if (input.length === 0) return { ok: false, reason: 'empty size' };
  const match = SIZE.exec(input);
  if (match === null) return { ok: false, reason: `cannot parse "${input}" as a size (e.g. "64 MiB")` };
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  const unit = (match[3] ?? '').toLowerCase();
  const unitBytes = UNIT_BYTES.get(unit);
  if (unitBytes === undefined) return { ok: false, reason: `unknown size unit "${match[3] ?? ''}"` };
  const scale = 10n ** BigInt(fraction.length);
  const scaled = (BigInt(whole) * scale + BigInt(fraction === '' ? '0' : fraction)) * unitBytes;
  if (scaled % scale !== 0n) return { ok: false, reason: `"${input}" is not a whole number of bytes` };
  const bytes = scaled / scale;
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: `"${input}" is too large` };
  return { ok: true, bytes: Number(bytes) };
}

const FORMAT_UNITS: readonly (readonly [string, number])[] = [
  ['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10],
  ['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['KB', 1e3],
];

/** Formats bytes with the unit that gives the smallest exact number ("4 GB", "64 MiB", "1200 B"). */
export function formatSize(bytes: number): string {
  let best = `${bytes} B`;
  let bestValue = bytes;
  for (const [unit, size] of FORMAT_UNITS) {
    if (bytes !== 0 && bytes % size === 0 && bytes / size < bestValue) {
      best = `${bytes / size} ${unit}`;
      bestValue = bytes / size;
    }
  }
  return best;
}
