import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith } from '../../codec/body-codec.js';
import { type Identifier, readIdentifier, writeIdentifier } from './identifier.js';

/** Consumer (encodings.mdx): `[kind: u8][id: Identifier]`, kind 1 consumer, 2 consumer group. */
export const ConsumerKind = { Consumer: 1, ConsumerGroup: 2 } as const;

export interface Consumer {
  readonly kind: 'consumer' | 'consumer_group';
  readonly id: Identifier;
}

export function writeConsumer(w: ByteWriter, consumer: Consumer): void {
  assert(consumer.kind === 'consumer' || consumer.kind === 'consumer_group', 'consumer kind');
  w.u8(consumer.kind === 'consumer' ? ConsumerKind.Consumer : ConsumerKind.ConsumerGroup);
  writeIdentifier(w, consumer.id);
}

export function readConsumer(r: ByteReader): Consumer {
  const kind = r.u8('consumer_kind');
  if (!r.failed && kind !== ConsumerKind.Consumer && kind !== ConsumerKind.ConsumerGroup) r.fail('unknown_consumer_kind');
  const id = readIdentifier(r, 'consumer_id');
  return { kind: kind === ConsumerKind.ConsumerGroup ? 'consumer_group' : 'consumer', id };
}

export function encodeConsumer(consumer: Consumer): Uint8Array {
  return encodeWith((w) => writeConsumer(w, consumer));
}

export function decodeConsumer(bytes: Uint8Array): Decoded<Consumer> {
  return decodeExact(bytes, readConsumer);
}
