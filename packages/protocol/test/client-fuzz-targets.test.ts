import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import type { FuzzTarget } from '../scripts/fuzz/target.js';
import commandRequests from '../scripts/fuzz/targets/client-command-requests.js';
import commandResponses from '../scripts/fuzz/targets/client-command-responses.js';
import encodings from '../scripts/fuzz/targets/client-encodings.js';
import login from '../scripts/fuzz/targets/client-login.js';
import requestHeader from '../scripts/fuzz/targets/client-request-header.js';
import serverFrames from '../scripts/fuzz/targets/client-server-frames.js';

/**
 * A short in-test fuzz pass per target: seeds decode, random mutations never throw, the summary is
 * deterministic and the same when the input sits inside a larger buffer (no over-read), and round trips hold
 * (the targets assert them).
 */
function mutate(prng: Prng, seed: Uint8Array): Uint8Array {
  const bytes = seed.slice();
  switch (prng.below(4)) {
    case 0:
      if (bytes.length > 0) bytes[prng.below(bytes.length)] = prng.below(256);
      return bytes;
    case 1:
      return bytes.subarray(0, prng.below(bytes.length + 1));
    case 2:
      return Uint8Array.of(...bytes, ...prng.bytes(prng.below(8) + 1));
    default:
      if (bytes.length > 0) {
        const at = prng.below(bytes.length);
        bytes[at] = (bytes[at] as number) ^ (1 << prng.below(8));
      }
      return bytes;
  }
}

describe.each([requestHeader, serverFrames, commandRequests, commandResponses, encodings, login].map((t) => [t.name, t] as const))('%s', (_name, target: FuzzTarget) => {
  it('seeds are accepted and mutations are handled', () => {
    const prng = new Prng(0x5eed);
    const seeds = target.seeds(prng);
    expect(seeds.length).toBeGreaterThan(0);
    for (const seed of seeds) {
      const summary = target.run(seed);
      expect(summary, summary).not.toMatch(/fail|bug/);
    }
    for (let i = 0; i < 3000; i++) {
      const input = mutate(prng, prng.pick(seeds));
      const summary = target.run(input);
      expect(typeof summary).toBe('string');
      const embedded = new Uint8Array(input.length + 32);
      prng.fill(embedded);
      embedded.set(input, 16);
      expect(target.run(embedded.subarray(16, 16 + input.length))).toBe(summary);
    }
  });
});
