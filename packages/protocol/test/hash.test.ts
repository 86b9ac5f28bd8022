import { describe, expect, it } from 'vitest';
import { useXxh3Backend, xxh3_64, xxh3Backend, blake3, blake3Keyed, blake3DeriveKey } from '@shoal/protocol';
import { toHex } from '@shoal/stdx';
import { loadVectorFile } from '../../../test/support/fixtures.js';

interface Xxh3Vector { name: string; input_len: number; input_utf8?: string; xxh3_64_dec: string }
const xxh3Doc = loadVectorFile('xxh3.json') as { vectors: Xxh3Vector[] };

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

describe('createXxh3Stream', () => {
  for (const backend of ['node-rs', 'hash-wasm'] as const) {
    it(`equals the one-shot hash for any chunking (${backend})`, async () => {
      const { createXxh3Stream } = await import('../src/index.js');
      await useXxh3Backend(backend);
      const data = new Uint8Array(300_000).map((_, i) => (i * 31) % 251);
      for (const chunk of [1, 7, 4096, 65_536, 300_000]) {
        const s = createXxh3Stream();
        for (let at = 0; at < data.length; at += chunk) s.update(data.subarray(at, at + chunk));
        expect(s.digest(), `chunk ${chunk}`).toBe(xxh3_64(data));
      }
      await useXxh3Backend('node-rs');
    });
  }
  it('a superseded fallback stream refuses further use', async () => {
    const { createXxh3Stream } = await import('../src/index.js');
    await useXxh3Backend('hash-wasm');
    const first = createXxh3Stream();
    createXxh3Stream().update(new Uint8Array(3)).digest();
    expect(() => first.update(new Uint8Array(1))).toThrow(/superseded/);
    await useXxh3Backend('node-rs');
  });
});
