import {
  type Consumer, ErrorCode, type Identifier, type PollingStrategy, checkName,
} from '@shoal/protocol';
import { ShoalInvalidArgumentError } from './errors.js';

/**
 * Inputs as users write them (Node SDK habit): an id is a number (numeric identifier) or a
 * string (a name); a consumer is an id or `{ kind, id }`; a polling strategy is a word or an
 * offset / timestamp.
 */
export type Id = number | string;

export function toIdentifier(id: Id, what = 'id'): Identifier {
  if (typeof id === 'number') {
    if (!Number.isInteger(id) || id < 0 || id > 0xffff_ffff) throw new ShoalInvalidArgumentError(`${what} ${id} is not a u32`, ErrorCode.InvalidIdentifier);
    return { kind: 'numeric', value: id };
  }
  const problem = checkName(id);
  if (problem !== null) throw new ShoalInvalidArgumentError(`${what} '${id}': ${problem}`, ErrorCode.InvalidIdentifier);
  return { kind: 'string', value: id };
}

/** A stable text key for an identifier (routing caches). */
export function identifierKey(id: Identifier): string {
  return id.kind === 'numeric' ? `#${id.value}` : `'${id.value}'`;
}

export type ConsumerInput = Id | { readonly kind: 'consumer' | 'consumer_group'; readonly id: Id };

export function toConsumer(input: ConsumerInput): Consumer {
  if (typeof input === 'number' || typeof input === 'string') return { kind: 'consumer', id: toIdentifier(input, 'consumer id') };
  return { kind: input.kind, id: toIdentifier(input.id, 'consumer id') };
}

/** A single consumer (offsets stored per consumer id). */
export function consumer(id: Id): { readonly kind: 'consumer'; readonly id: Id } {
  return { kind: 'consumer', id };
}

/** A consumer group member (offsets stored per group; the server assigns partitions). */
export function consumerGroup(id: Id): { readonly kind: 'consumer_group'; readonly id: Id } {
  return { kind: 'consumer_group', id };
}

export type PollingStrategyInput =
  | 'first' | 'last' | 'next'
  | { readonly offset: bigint | number }
  | { readonly timestamp: bigint | number };

export function toPollingStrategy(input: PollingStrategyInput): PollingStrategy {
  if (typeof input === 'string') return { kind: input, value: 0n };
  if ('offset' in input) return { kind: 'offset', value: toU64(input.offset, 'offset') };
  return { kind: 'timestamp', value: toU64(input.timestamp, 'timestamp') };
}

export function toU64(value: bigint | number, what: string): bigint {
  const big = typeof value === 'bigint' ? value : Number.isInteger(value) ? BigInt(value) : -1n;
  if (big < 0n || big >= 1n << 64n) throw new ShoalInvalidArgumentError(`${what} ${String(value)} is not a u64`);
  return big;
}

export function toU32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new ShoalInvalidArgumentError(`${what} ${value} is not a u32`);
  return value;
}
