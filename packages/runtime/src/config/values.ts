/**
 * Turning one raw value (from TOML or from an environment variable) into the normalized value of
 * its key kind: booleans, strings, and numbers (integers, milliseconds, bytes).
 */
import { formatDuration, formatSize, parseConfigDurationMs, parseSizeBytes } from '@shoal/stdx';
import { TomlDate } from 'smol-toml';
import type { KeySpec } from './schema.js';
import { parseHostPort } from './address.js';

export type Value = string | number | boolean;

export type Converted = { readonly ok: true; readonly value: Value } | { readonly ok: false; readonly reason: string };

/** Converts a TOML value. */
export function fromToml(spec: KeySpec, raw: unknown): Converted {
  switch (spec.kind) {
    case 'bool':
      return typeof raw === 'boolean' ? ok(raw) : expected('a boolean (true or false)', raw);
    case 'string':
      return typeof raw === 'string' ? ok(raw) : expected('a string', raw);
    case 'uint':
      return uint(raw);
    case 'duration':
      if (typeof raw !== 'string') return expected('a duration string with a unit, like "5s" or "500ms"', raw);
      return duration(raw);
    case 'size':
      if (typeof raw === 'string') return size(raw);
      if (typeof raw === 'number' || typeof raw === 'bigint') return uint(raw);
      return expected('a size like "64 MiB" or a number of bytes', raw);
    case 'address':
      if (typeof raw !== 'string') return expected('an address string like "127.0.0.1:8090"', raw);
      return address(raw);
    case 'cpu_allocation':
      if (typeof raw === 'string') return ok(raw);
      if (typeof raw === 'number' || typeof raw === 'bigint') return uint(raw);
      return expected('"all", a number, or a range like "0..4"', raw);
  }
}

/** Converts an environment-variable string. */
export function fromEnv(spec: KeySpec, raw: string): Converted {
  switch (spec.kind) {
    case 'bool': {
      const lower = raw.trim().toLowerCase();
      if (lower === 'true') return ok(true);
      if (lower === 'false') return ok(false);
      return { ok: false, reason: `expected true or false (got "${raw}")` };
    }
    case 'string':
      return ok(raw);
    case 'uint':
      return /^\s*\d+\s*$/.test(raw) ? uint(Number(raw)) : { ok: false, reason: `expected a non-negative integer (got "${raw}")` };
    case 'duration':
      return duration(raw);
    case 'size':
      return size(raw);
    case 'address':
      return address(raw);
    case 'cpu_allocation':
      return /^\s*\d+\s*$/.test(raw) ? uint(Number(raw)) : ok(raw.trim());
  }
}

/** The value as a person would write it in the file, for messages and the startup log. */
export function displayValue(spec: KeySpec, value: Value): string {
  if (spec.kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (spec.kind === 'size' && typeof value === 'number') return formatSize(value);
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

function ok(value: Value): Converted {
  return { ok: true, value };
}

function uint(raw: unknown): Converted {
  if (typeof raw === 'bigint') return { ok: false, reason: `integer out of range (got ${raw})` };
  if (typeof raw !== 'number') return expected('a non-negative integer', raw);
  if (!Number.isSafeInteger(raw)) return { ok: false, reason: `expected an integer (got ${raw})` };
  if (raw < 0) return { ok: false, reason: `expected a non-negative integer (got ${raw})` };
  return ok(raw);
}

function duration(raw: string): Converted {
  const parsed = parseConfigDurationMs(raw);
  if (!parsed.ok) return { ok: false, reason: `invalid duration "${raw}": ${parsed.reason}` };
  return ok(parsed.value);
}

function size(raw: string): Converted {
  const parsed = parseSizeBytes(raw);
  if (!parsed.ok) return { ok: false, reason: `invalid size "${raw}": ${parsed.reason}` };
  return ok(parsed.value);
}

function address(raw: string): Converted {
  const parsed = parseHostPort(raw);
  if (!parsed.ok) return { ok: false, reason: `invalid address "${raw}": ${parsed.reason}` };
  return ok(raw);
}

function expected(what: string, raw: unknown): Converted {
  return { ok: false, reason: `expected ${what} (got ${describe(raw)})` };
}

function describe(raw: unknown): string {
  if (raw instanceof TomlDate) return 'a date';
  if (Array.isArray(raw)) return 'an array';
  if (typeof raw === 'object' && raw !== null) return 'a table';
  if (typeof raw === 'string') return JSON.stringify(raw);
  if (typeof raw === 'bigint') return raw.toString();
  return String(raw);
}
