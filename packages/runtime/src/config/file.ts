/**
 * The file layer: TOML text → flat entries. Unknown keys are refused with their path (a typo
 * must not silently leave a default in force), relocated keys are refused with the reference
 * server's reason, every value is converted to its kind here.
 */
import { parse, TomlDate, TomlError } from 'smol-toml';
import type { Diagnostics } from './errors.js';
import { emptyLayer, type Layer } from './layers.js';
import { REFERENCE_ONLY_SECTIONS, type ReferenceOnlyJudge, findReferenceOnly } from './reference-only.js';
import { findRelocated, relocatedMessage, unsupportedHint } from './relocated.js';
import { KEYS, KEY_BY_PATH, TABLE_ARRAY_BY_PATH, TABLE_PATHS } from './schema.js';
import { fromToml } from './values.js';

/** Nesting deeper than this is never a Shoal config (deepest real path: 4 levels + 2 arrays). */
const TOML_DEPTH_MAX = 16;

export function readFile(text: string, diagnostics: Diagnostics, judge: ReferenceOnlyJudge): Layer {
  const layer = emptyLayer();
  let document: Record<string, unknown>;
  try {
    document = parse(text, { integersAsBigInt: 'asNeeded', unsafeKeyBehaviour: 'throw', maxDepth: TOML_DEPTH_MAX });
  } catch (error) {
    if (error instanceof TomlError) {
      const firstLine = error.message.split('\n')[0] ?? error.message;
      diagnostics.error('syntax', '(file)', `invalid TOML at line ${error.line}, column ${error.column}: ${firstLine}`, 'file');
      return layer;
    }
    throw error;
  }
  walkTable(document, '', '', layer, diagnostics, judge);
  return layer;
}

function walkTable(
  table: Record<string, unknown>,
  schemaPrefix: string,
  concretePrefix: string,
  layer: Layer,
  diagnostics: Diagnostics,
  judge: ReferenceOnlyJudge,
): void {
  for (const [key, value] of Object.entries(table)) {
    if (/[.[\]]/.test(key)) {
      // A quoted key like "tcp.address" would otherwise pose as a nested path.
      const at = concretePrefix === '' ? JSON.stringify(key) : `${concretePrefix}.${JSON.stringify(key)}`;
      diagnostics.error('unknown_key', at, 'unknown key (quoted keys with ".", "[" or "]" are never config keys)', 'file');
      continue;
    }
    const schemaPath = schemaPrefix === '' ? key : `${schemaPrefix}.${key}`;
    const concretePath = concretePrefix === '' ? key : `${concretePrefix}.${key}`;
    walkValue(value, schemaPath, concretePath, layer, diagnostics, judge);
  }
}

function walkValue(value: unknown, schemaPath: string, concretePath: string, layer: Layer, diagnostics: Diagnostics, judge: ReferenceOnlyJudge): void {
  const relocated = findRelocated(schemaPath);
  if (relocated !== undefined) {
    diagnostics.error('relocated_key', concretePath, relocatedMessage(relocated), 'file');
    return;
  }
  const spec = KEY_BY_PATH.get(schemaPath);
  if (spec !== undefined) {
    const converted = fromToml(spec, value);
    if (converted.ok) layer.entries.set(concretePath, { value: converted.value, origin: 'file' });
    else diagnostics.error('type', concretePath, converted.reason, 'file');
    return;
  }
  const arraySpec = TABLE_ARRAY_BY_PATH.get(schemaPath);
  if (arraySpec !== undefined) {
    if (!Array.isArray(value) || !value.every(isTable)) {
      diagnostics.error('type', concretePath, `expected an array of tables ([[${schemaPath.replace(/\[\]/g, '')}]])`, 'file');
      return;
    }
    if (value.length > arraySpec.itemsMax) {
      diagnostics.error('range', concretePath, `at most ${arraySpec.itemsMax} entries (got ${value.length})`, 'file');
      return;
    }
    layer.arrays.set(concretePath, value.length);
    value.forEach((item, index) => walkTable(item, `${schemaPath}[]`, `${concretePath}[${index}]`, layer, diagnostics, judge));
    return;
  }
  if (TABLE_PATHS.has(schemaPath)) {
    if (isTable(value)) walkTable(value, schemaPath, concretePath, layer, diagnostics, judge);
    else diagnostics.error('type', concretePath, 'expected a table', 'file');
    return;
  }
  if (judgeReferenceOnly(value, schemaPath, concretePath, judge)) return;
  diagnostics.error('unknown_key', concretePath, unknownKeyRule(schemaPath), 'file');
}

/**
 * A reference-server section Shoal does not implement (reference-only.ts): every leaf is judged
 * (one warning per section, or a refusal for a protection asked for). False: not one of them.
 */
function judgeReferenceOnly(value: unknown, schemaPath: string, concretePath: string, judge: ReferenceOnlyJudge): boolean {
  const section = findReferenceOnly(schemaPath);
  if (section === undefined) {
    // A table that only holds reference-only sections (`[data_maintenance]` of `[data_maintenance.messages]`).
    const container = isTable(value) && REFERENCE_ONLY_SECTIONS.some((s) => s.path.startsWith(`${schemaPath}.`));
    if (!container) return false;
    return Object.entries(value).every(([key, inner]) => judgeReferenceOnly(inner, `${schemaPath}.${key}`, `${concretePath}.${key}`, judge));
  }
  if (isTable(value)) {
    for (const [key, inner] of Object.entries(value)) judgeReferenceOnly(inner, `${schemaPath}.${key}`, `${concretePath}.${key}`, judge);
    return true;
  }
  const key = schemaPath === section.path ? null : schemaPath.slice(section.path.length + 1);
  judge.judge(section, key, value, concretePath, 'file');
  return true;
}

function unknownKeyRule(schemaPath: string): string {
  const hint = unsupportedHint(schemaPath);
  if (hint !== undefined) return `unknown key: ${hint}`;
  const suggestion = closestKey(schemaPath);
  return suggestion === undefined ? 'unknown key' : `unknown key (did you mean ${suggestion.replace(/\[\]/g, '[i]')}?)`;
}

/** The known key or table at a small edit distance, to catch typos. */
function closestKey(schemaPath: string): string | undefined {
  const candidates = [...KEYS.map((key) => key.path), ...TABLE_PATHS];
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(schemaPath, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof TomlDate);
}
