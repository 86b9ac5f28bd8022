/**
 * A resolved consumer (state's `ConsumerRef`: a consumer's numeric key or a consumer group's id)
 * packed into the u64 `hostValue` of a forwarded poll / offset request:
 *
 *   bit 32 = 1 for a consumer group, bits 0..31 = the key
 */
import type { ConsumerRef } from '@shoal/state';

export function packConsumerRef(ref: ConsumerRef): bigint {
  return (ref.kind === 'consumer_group' ? 1n << 32n : 0n) | BigInt(ref.key >>> 0);
}

export function unpackConsumerRef(value: bigint): ConsumerRef {
  return { kind: (value >> 32n) & 1n ? 'consumer_group' : 'consumer', key: Number(value & 0xffff_ffffn) };
}
