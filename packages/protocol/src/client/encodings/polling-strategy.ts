import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';

/**
 * Polling strategy (encodings.mdx): fixed 9 bytes `[kind: u8][value: u64]`.
 *   1 offset, 2 timestamp (µs), 3 first, 4 last, 5 next (value ignored for 3..5, kept verbatim so
 *   a decode → encode round trip is exact).
 */
export const PollingKind = { Offset: 1, Timestamp: 2, First: 3, Last: 4, Next: 5 } as const;
export type PollingKindName = 'offset' | 'timestamp' | 'first' | 'last' | 'next';
export const POLLING_STRATEGY_LENGTH = 9;

const NAMES: readonly PollingKindName[] = ['offset', 'timestamp', 'first', 'last', 'next'];

export interface PollingStrategy {
  readonly kind: PollingKindName;
  readonly value: bigint;
}

export function writePollingStrategy(w: ByteWriter, strategy: PollingStrategy): void {
  const code = NAMES.indexOf(strategy.kind) + 1;
  assert(code >= 1, `polling kind ${strategy.kind}`);
  w.u8(code).u64(strategy.value);
}

export function readPollingStrategy(r: ByteReader): PollingStrategy {
  const code = r.u8('polling_kind');
  const value = r.u64('polling_value');
  const kind = NAMES[code - 1];
  if (!r.failed && kind === undefined) r.fail('unknown_polling_kind');
  return { kind: kind ?? 'offset', value };
}

export function encodePollingStrategy(strategy: PollingStrategy): Uint8Array {
  return encodeWith((w) => writePollingStrategy(w, strategy));
}

export function decodePollingStrategy(bytes: Uint8Array): Decoded<PollingStrategy> {
  return decodeExact(bytes, readPollingStrategy);
}
