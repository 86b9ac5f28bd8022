/**
 * Per-key rules that the schema states as data: bounds, powers of two, non-zero durations and
 * sizes, non-empty strings, the Node timer ceiling, required array-item keys and array gaps.
 */
import type { Diagnostics } from './errors.js';
import { arrayIndexes, type Layer } from './layers.js';
import { KEYS, KEY_BY_PATH, TABLE_ARRAYS, TIMER_MS_MAX, schemaPathOf, type KeySpec } from './schema.js';
import { formatDuration, formatSize } from '@shoal/stdx';
import { displayValue } from './values.js';

export function checkBounds(layer: Layer, diagnostics: Diagnostics): void {
  for (const [path, entry] of layer.entries) {
    const spec = KEY_BY_PATH.get(schemaPathOf(path));
    if (spec === undefined) continue;
    const problem = boundProblem(spec, entry.value);
    if (problem !== undefined) {
      diagnostics.error('range', path, `${problem} (got ${displayValue(spec, entry.value)})`, entry.origin);
    }
  }
  checkArrays(layer, '', diagnostics);
}

/** The rule text for a key's own bounds, for the docs; empty when there are none. (The Node timer cap is stated once in the docs prose.) */
export function boundRule(spec: KeySpec): string {
  const parts: string[] = [];
  if (spec.nonempty === true) parts.push('non-empty');
  if (spec.nonzero === true) parts.push('non-zero');
  const range = rangeText(spec);
  if (range !== undefined) parts.push(range);
  if (spec.pow2 === true) parts.push('a power of two');
  if (spec.required === true) parts.push('required');
  return parts.join('; ');
}

function boundProblem(spec: KeySpec, value: string | number | boolean): string | undefined {
  if (typeof value === 'string') {
    return spec.nonempty === true && value.trim() === '' ? 'must not be empty' : undefined;
  }
  if (typeof value !== 'number') return undefined;
  if (spec.nonzero === true && value === 0) return 'must be non-zero (0, "disabled" and "unlimited" are refused)';
  const range = rangeText(spec);
  if (range !== undefined && ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max))) {
    return `must be ${range}`;
  }
  if (spec.pow2 === true && !isPowerOfTwo(value)) return 'must be a power of two';
  if (spec.kind === 'duration' && spec.notTimer !== true && value > TIMER_MS_MAX) {
    return `must be at most ${TIMER_MS_MAX}ms (about 24.8 days; a Node timer cannot wait longer)`;
  }
  return undefined;
}

function rangeText(spec: KeySpec): string | undefined {
  const show = (n: number): string =>
    spec.kind === 'duration' ? formatDuration(n) : spec.kind === 'size' ? formatSize(n) : String(n);
  if (spec.min !== undefined && spec.max !== undefined) return `between ${show(spec.min)} and ${show(spec.max)}`;
  if (spec.min !== undefined) return `at least ${show(spec.min)}`;
  if (spec.max !== undefined) return `at most ${show(spec.max)}`;
  return undefined;
}

export function isPowerOfTwo(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && Math.log2(value) % 1 === 0;
}

/** Required item keys and index gaps, for every array of tables, recursively. */
function checkArrays(layer: Layer, concretePrefix: string, diagnostics: Diagnostics): void {
  const schemaPrefix = schemaPathOf(concretePrefix);
  for (const array of TABLE_ARRAYS) {
    if (!array.path.startsWith(schemaPrefix)) continue;
    const relative = array.path.slice(schemaPrefix.length);
    if (relative.includes('[]')) continue;
    const arrayPath = `${concretePrefix}${relative}`;
    const { count, gaps } = arrayIndexes(layer, arrayPath);
    for (const gap of gaps) {
      diagnostics.error('required', `${arrayPath}[${gap}]`,
        `missing entry: a later index is set (array items must be contiguous from 0)`);
    }
    for (let index = 0; index < count; index += 1) {
      if (gaps.includes(index)) continue;
      const itemPrefix = `${arrayPath}[${index}].`;
      for (const key of KEYS) {
        if (key.required !== true || !key.path.startsWith(`${array.path}[].`)) continue;
        const rest = key.path.slice(array.path.length + 3);
        if (rest.includes('[]')) continue;
        if (!layer.entries.has(`${itemPrefix}${rest}`)) diagnostics.error('required', `${itemPrefix}${rest}`, 'required');
      }
      checkArrays(layer, itemPrefix, diagnostics);
    }
  }
}
