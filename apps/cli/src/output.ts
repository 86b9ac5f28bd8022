import { stringify as yamlStringify } from 'yaml';

/**
 * Output for humans (`--output table`, the default: aligned tables, key/value lists) and for
 * scripts (`--output json` / `--json`: one JSON document per command, NDJSON for `message poll
 * --follow`; `--output yaml`: one YAML document per command, a `---`-separated stream in follow
 * mode). In JSON and YAML, 64-bit integers are numbers when they fit in 2^53 and decimal strings
 * otherwise; byte arrays are lowercase hex. YAML is written by `yaml` (eemeli/yaml: the
 * reference YAML 1.2 implementation for JavaScript, no dependencies), so strings that look like
 * numbers, booleans or dates are quoted correctly.
 */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface Output {
  readonly format: OutputFormat;
  /** JSON or YAML: actions print raw records instead of human-formatted ones. */
  readonly structured: boolean;
  readonly quiet: boolean;
  /** A list of records: a table, or a JSON array. */
  table(rows: readonly Record<string, unknown>[], columns?: readonly string[]): void;
  /** One record: key/value lines, or a JSON object. */
  record(value: Record<string, unknown>): void;
  /** A plain message for humans; `value` is what JSON mode prints instead. */
  message(text: string, value?: unknown): void;
  /** One JSON line (NDJSON) or one human line, flushed at once (follow mode). */
  line(text: string, value: unknown): void;
}

export interface Sink {
  out(text: string): void;
}

export function toJsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toJsonValue(v)]));
  }
  return value;
}

export function stringify(value: unknown, pretty = true): string {
  return JSON.stringify(toJsonValue(value), null, pretty ? 2 : undefined);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(cell).join(', ');
  return stringify(value, false);
}

export function renderTable(rows: readonly Record<string, unknown>[], columns?: readonly string[]): string {
  const keys = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => keys.map((k) => cell(r[k]).replace(/\s+/g, ' ')));
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (parts: readonly string[]): string => parts.map((p, i) => p.padEnd(widths[i] as number)).join('  ').trimEnd();
  return [line(keys), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function renderRecord(value: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(value).map((k) => k.length));
  return Object.entries(value).map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}

/** One YAML document. */
export function toYaml(value: unknown): string {
  return yamlStringify(toJsonValue(value), { lineWidth: 0 }).trimEnd();
}

export function createOutput(sink: Sink, format: OutputFormat, quiet: boolean): Output {
  const write = (text: string): void => {
    if (!quiet) sink.out(`${text}\n`);
  };
  const document = (value: unknown): string => (format === 'yaml' ? toYaml(value) : stringify(value));
  let lines = 0;
  const line = (text: string, value: unknown): string => {
    if (format === 'json') return stringify(value, false);
    if (format === 'yaml') return `${lines++ === 0 ? '' : '---\n'}${toYaml(value)}`;
    return text;
  };
  const structured = format !== 'table';
  return {
    format,
    structured,
    quiet,
    table: (rows, columns) => write(structured ? document(rows) : renderTable(rows, columns)),
    record: (value) => write(structured ? document(value) : renderRecord(value)),
    message: (text, value) => write(structured ? document(value ?? { message: text }) : text),
    line: (text, value) => write(line(text, value)),
  };
}

/** µs since the epoch → ISO-8601 (UTC). */
export function isoFromMicros(micros: bigint): string {
  if (micros === 0n) return '-';
  const ms = Number(micros / 1000n);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(micros) : date.toISOString();
}

export function formatBytes(bytes: bigint | number): string {
  const n = Number(bytes);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(2)} ${units[unit] as string}`;
}

/** µs duration → compact text (`0` = never). */
export function formatExpiry(micros: bigint): string {
  if (micros === 0n || micros === 0xffff_ffff_ffff_ffffn) return 'never';
  const seconds = Number(micros / 1_000_000n);
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.length === 0 ? `${micros}us` : parts.join(' ');
}
