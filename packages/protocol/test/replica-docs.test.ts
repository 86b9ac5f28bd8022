import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toHex } from '@shoal/stdx';
import {
  COMMAND_NAMES,
  LAYOUT_BY_COMMAND,
  MAC_TRANSCRIPT_SIZE,
  NAMED_LAYOUTS,
  PREFIX_LAYOUT,
  encodeManifest,
  fieldsInOrder,
  isPrepareCommand,
  isSealedCommand,
  manifestEntryFor,
  type ReplicaHeaderLayout as HeaderLayout,
} from '../src/replica/index.js';

const docs = (name: string): string => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');
const cells = (line: string): string[] => line.split('|').slice(1, -1).map((c) => c.trim().replace(/`/g, ''));

/** Rows of the first table after `heading`. */
function tableAfter(text: string, heading: string): string[][] {
  const lines = text.split('\n');
  let i = lines.findIndex((l) => l.trim() === heading);
  if (i < 0) throw new Error(`no heading ${heading}`);
  while (i < lines.length && !(lines[i] as string).startsWith('|')) i++;
  const rows: string[][] = [];
  for (i += 2; i < lines.length && (lines[i] as string).startsWith('|'); i++) rows.push(cells(lines[i] as string));
  return rows;
}

describe('docs/wire-replica-headers.md matches the code', () => {
  const text = docs('wire-replica-headers.md');

  it('has every layout table, field for field', () => {
    for (const [name, layout] of Object.entries(NAMED_LAYOUTS)) {
      const rows = tableAfter(text, `#### ${name}`);
      const expected = fieldsInOrder(layout).filter(([, s]) => s.offset >= 128).map(([f, s]) => [String(s.offset), String(s.size), f, s.kind]);
      expect(rows, name).toEqual(expected);
    }
  });

  it('has the prefix table', () => {
    const rows = tableAfter(text, '## The common prefix (bytes 0..128, every command)');
    expect(rows).toEqual(fieldsInOrder(PREFIX_LAYOUT).map(([f, s]) => [String(s.offset), String(s.size), f, s.kind]));
  });

  it('lists all 30 commands with their shape and checksum', () => {
    const rows = tableAfter(text, '## All 30 commands');
    expect(rows).toHaveLength(30);
    rows.forEach((row, value) => {
      expect(row[0]).toBe(String(value));
      expect(row[1]).toBe(COMMAND_NAMES[value]);
      expect(NAMED_LAYOUTS[row[2] as string] as HeaderLayout, `command ${value}`).toBe(LAYOUT_BY_COMMAND[value]);
      const kind = isSealedCommand(value) ? 'seal' : isPrepareCommand(value) ? 'identity' : '0';
      expect((row[3] as string).split(' ')[0], `command ${value}`).toBe(kind);
    });
  });
});

describe('docs/wire-state-transfer-formats.md matches the code', () => {
  it('shows the encoding of the §6.5 example', () => {
    const text = docs('wire-state-transfer-formats.md');
    const match = /`(49534d31[0-9a-f ]+)`/.exec(text);
    const te = new TextEncoder();
    const bytes = encodeManifest([manifestEntryFor(0, 192n, te.encode('snapshot-bytes')), manifestEntryFor(1, 195n, te.encode('table-bytes'))]);
    expect(match?.[1]?.replace(/ /g, '')).toBe(toHex(bytes));
  });
});

describe('docs/wire-replica-handshake.md matches the code', () => {
  it('lays the transcript out contiguously over 143 bytes', () => {
    const rows = tableAfter(docs('wire-replica-handshake.md'), '## MAC transcript (exactly 143 bytes) and MAC');
    let cursor = 0;
    for (const row of rows) {
      expect(Number(row[0])).toBe(cursor);
      cursor += Number(row[1]);
    }
    expect(cursor).toBe(MAC_TRANSCRIPT_SIZE);
  });
});
