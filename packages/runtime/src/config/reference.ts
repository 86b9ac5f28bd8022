/**
 * The key reference of docs/configuration.md, generated from the schema so that the page cannot
 * drift from the code (a test compares them; `npm run docs:config -w @shoal/runtime` rewrites it).
 */
import { boundRule } from './bounds.js';
import { KEYS, SECTIONS, envNameOf, type KeySpec } from './schema.js';

export const REFERENCE_BEGIN = '<!-- BEGIN GENERATED KEY REFERENCE (npm run docs:config -w @shoal/runtime) -->';
export const REFERENCE_END = '<!-- END GENERATED KEY REFERENCE -->';

export function renderConfigReference(): string {
  const lines: string[] = [REFERENCE_BEGIN, ''];
  for (const section of SECTIONS) {
    const keys = KEYS.filter((key) => sectionOf(key.path) === section.path);
    if (keys.length === 0) continue;
    const title = section.path.endsWith('[]') ? `[[${section.path.slice(0, -2).replace(/\[\]/g, '')}]]` : `[${section.path.replace(/\[\]/g, '')}]`;
    lines.push(`### \`${title}\`${section.shoal === true ? ' (Shoal)' : ''}`, '', section.doc, '');
    lines.push('| Key | Default | Env override | Rules | Description |', '| --- | --- | --- | --- | --- |');
    for (const key of keys) lines.push(row(key));
    lines.push('');
  }
  lines.push(REFERENCE_END);
  return lines.join('\n');
}

function row(key: KeySpec): string {
  const name = key.path.slice(key.path.lastIndexOf('.') + 1);
  const shoal = key.shoal === true ? ' **(Shoal)**' : '';
  const secret = key.secret === true ? ' *secret*' : '';
  const bound = boundRule(key);
  const rules = [bound === '' ? '' : `${bound[0]?.toUpperCase() ?? ''}${bound.slice(1)}.`, ...(key.rules ?? [])]
    .filter((rule) => rule !== '')
    .join(' ');
  const cells = [
    `\`${name}\`${shoal}${secret}`,
    defaultCell(key),
    `\`IGGY_${envNameOf(key.path)}\``,
    rules,
    key.doc,
  ];
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
}

function defaultCell(key: KeySpec): string {
  if (key.default === undefined) return key.required === true ? '(required)' : '(unset)';
  if (typeof key.default === 'string') return `\`"${key.default}"\``;
  return `\`${String(key.default)}\``;
}

function sectionOf(path: string): string {
  return path.slice(0, path.lastIndexOf('.'));
}
