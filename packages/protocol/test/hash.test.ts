import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useXxh3Backend, xxh3_64, xxh3Backend, blake3, blake3Keyed, blake3DeriveKey } from '@shoal/protocol';
import { toHex } from '@shoal/stdx';

interface Xxh3Vector { name: string; input_len: number; input_utf8?: string; xxh3_64_dec: string }
const xxh3Doc = JSON.parse(readFileSync(new URL('../../../../shared/vectors/xxh3.json', import.meta.url), 'utf8')) as { vectors: Xxh3Vector[] };

function input(v: Xxh3Vector): Uint8Array {
  if (v.input_utf8 !== undefined) return new TextEncoder().encode(v.input_utf8);
  const b = new Uint8Array(v.input_len);
  for (let i = 0; i < b.length; i++) b[i] = i % 251;
  return b;
}

describe('xxh3_64', () => {
  for (const backend of ['node-rs', 'hash-wasm'] as const) {
    it(`matches every xxh3.json vector with ${backend}`, async () => {
      await useXxh3Backend(backend);
      expect(xxh3Backend()).toBe(backend);
      for (const v of xxh3Doc.vectors) expect(xxh3_64(input(v)), v.name).toBe(BigInt(v.xxh3_64_dec));
      await useXxh3Backend('node-rs');
    });
  }
});

describe('blake3', () => {
  it('derives the cluster id of "iggy"', () => {
    expect(toHex(blake3(new TextEncoder().encode('iggy')))).toBe('5a22cacd28f1895e420d17f78bb73ee9299a8c5798ef038638c298fe941d54ce');
  });
  it('keyed and derive_key modes run', () => {
    expect(blake3Keyed(new Uint8Array(32), new Uint8Array(0)).length).toBe(32);
    expect(blake3DeriveKey('ctx', new Uint8Array(1)).length).toBe(32);
  });
});
