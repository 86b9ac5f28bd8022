import { gbPerSecond } from './measure.js';
import type { BenchRow } from './suite.js';

function fixed(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** A compact text table: case | ns/op | ops/s | GB/s | ±spread. */
export function formatTable(rows: readonly BenchRow[]): string {
  const header = ['case', 'ns/op', 'ops/s', 'GB/s', 'spread'];
  const body = rows.map((r) => {
    const gbs = gbPerSecond(r);
    return [
      r.name,
      fixed(r.nsPerOp),
      Math.round(1e9 / r.nsPerOp).toLocaleString('en-US'),
      gbs === null ? '' : fixed(gbs),
      `±${Math.round(r.spread * 50)}%`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
