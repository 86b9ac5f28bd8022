import { describe, expect, it } from 'vitest';
import { packConsumerRef, unpackConsumerRef } from '../src/index.js';

describe('consumer refs', () => {
  it('packs a consumer or a group key into a u64', () => {
    expect(unpackConsumerRef(packConsumerRef({ kind: 'consumer', key: 0xffff_ffff }))).toEqual({ kind: 'consumer', key: 0xffff_ffff });
    expect(unpackConsumerRef(packConsumerRef({ kind: 'consumer_group', key: 3 }))).toEqual({ kind: 'consumer_group', key: 3 });
    expect(packConsumerRef({ kind: 'consumer_group', key: 3 })).toBe((1n << 32n) | 3n);
  });
});
