import { assert } from '@shoal/stdx';

/** One field of a fixed binary layout: byte offset and byte size. */
export interface FieldLayout {
  readonly offset: number;
  readonly size: number;
}

/**
 * Load-time self-check of a frozen offset table: the fields, sorted by offset, start at 0, are
 * contiguous (no gap, no overlap), have positive sizes and add up to exactly `total` bytes.
 * A failure is our bug (a typo in a table), so it asserts: the module refuses to load.
 */
export function checkLayout(name: string, fields: Readonly<Record<string, FieldLayout>>, total: number): void {
  assert(Object.isFrozen(fields), `${name}: layout table must be frozen`);
  const sorted = Object.entries(fields).sort((a, b) => a[1].offset - b[1].offset);
  let cursor = 0;
  for (const [field, layout] of sorted) {
    assert(Object.isFrozen(layout), `${name}.${field}: field entry must be frozen`);
    assert(Number.isInteger(layout.size) && layout.size > 0, `${name}.${field}: bad size ${layout.size}`);
    assert(layout.offset === cursor, `${name}.${field}: offset ${layout.offset}, expected ${cursor}`);
    cursor += layout.size;
  }
  assert(cursor === total, `${name}: fields total ${cursor} bytes, expected ${total}`);
}

/** Freezes a layout table and each of its entries (for `checkLayout`). */
export function frozenLayout<T extends Record<string, FieldLayout>>(fields: T): Readonly<T> {
  for (const layout of Object.values(fields)) Object.freeze(layout);
  return Object.freeze(fields);
}
