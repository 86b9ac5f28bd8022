import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LONG_INPUT_MIN, useXxh3Backend, xxh3_64 } from '../src/hash/xxh3.js';
import { vectorsDir } from '../../../test/support/fixtures.js';
import { checkBatch, reasonsFor } from '../scripts/vectors/check-batch.js';
import { checkXxh3 } from '../scripts/vectors/check-xxh3.js';
import type { VectorOutcome } from '../scripts/vectors/outcome.js';

function load(file: string): unknown {
  return JSON.parse(readFileSync(join(vectorsDir(), file), 'utf8'));
}
function failures(outcomes: VectorOutcome[]): string[] {
  return outcomes.filter((o) => !o.ok).map((o) => `${o.id}: ${o.detail}`);
}
const index = load('index.json') as { files: Record<string, Record<string, number>> };

describe('vector checkers over the golden vectors', () => {
  afterAll(async () => {
    await useXxh3Backend('node-rs');
  });

  for (const backend of ['node-rs', 'hash-wasm'] as const) {
    it(`xxh3.json: every vector (${backend})`, async () => {
      await useXxh3Backend(backend);
      const outcomes = checkXxh3(load('xxh3.json'), 'xxh3.json');
      expect(outcomes.length).toBe(index.files['xxh3.json']?.['vectors']);
      expect(failures(outcomes)).toEqual([]);
    });

    it(`batch.json: every vector and negative (${backend})`, async () => {
      await useXxh3Backend(backend);
      const outcomes = checkBatch(load('batch.json'), 'batch.json');
      const counts = index.files['batch.json'] ?? {};
      expect(outcomes.length).toBe((counts['vectors'] ?? 0) + (counts['negative'] ?? 0));
      expect(failures(outcomes)).toEqual([]);
    });
  }

  it('xxh3_64 agrees across backends on both sides of LONG_INPUT_MIN', async () => {
    const sizes = [LONG_INPUT_MIN - 1, LONG_INPUT_MIN, LONG_INPUT_MIN + 1, 2 * LONG_INPUT_MIN + 7];
    const inputs = sizes.map((n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff));
    await useXxh3Backend('hash-wasm');
    const portable = inputs.map((b) => xxh3_64(b));
    await useXxh3Backend('node-rs');
    expect(inputs.map((b) => xxh3_64(b))).toEqual(portable);
  });

  it('the checkers catch a tampered entry and never throw on malformed ones', () => {
    const batch = load('batch.json') as { vectors: Record<string, unknown>[]; negative: Record<string, unknown>[] };
    const tampered = structuredClone(batch);
    const first = tampered.vectors[0] as Record<string, unknown>;
    first['hex'] = (first['hex'] as string).slice(0, -2) + '00';
    (tampered.vectors[1] as Record<string, unknown>)['header'] = { batch_checksum: '1' };
    (tampered.negative[0] as Record<string, unknown>)['hex'] = batch.vectors[0]?.['hex'];
    (tampered.negative[1] as Record<string, unknown>)['expect'] = 'reject: message frame reserved bytes (40..48) must be zero';
    tampered.vectors.push({ name: 'garbage', hex: 'zz' }, { name: 'no-hex' });
    const outcomes = checkBatch(tampered, 'tampered.json');
    expect(outcomes.filter((o) => !o.ok).map((o) => o.id)).toEqual([
      'tampered.json#vectors/producer_batch',
      'tampered.json#vectors/server_stamped_batch',
      'tampered.json#vectors/garbage',
      'tampered.json#vectors/no-hex',
      'tampered.json#negative/flipped_last_body_byte',
      'tampered.json#negative/flipped_batch_checksum',
    ]);
    expect(checkBatch(null, 'null.json')[0]?.ok).toBe(false);

    const xxh3 = load('xxh3.json') as { vectors: Record<string, unknown>[] };
    const bad = structuredClone(xxh3);
    (bad.vectors[3] as Record<string, unknown>)['xxh3_64_dec'] = '1';
    (bad.vectors[4] as Record<string, unknown>)['input_rule'] = 'byte[i] = i*i';
    delete (bad.vectors[4] as Record<string, unknown>)['input_hex'];
    bad.vectors.push({ name: 'no-input', xxh3_64_dec: '1' });
    expect(failures(checkXxh3(bad, 'bad.json')).length).toBe(3);
  });

  it('maps the expect texts of negative entries to reasons', () => {
    expect(reasonsFor('reject: message checksum mismatch')).toEqual(['frame_checksum_mismatch']);
    expect(reasonsFor('reject: batch checksum mismatch')).toEqual(['batch_checksum_mismatch']);
    expect(reasonsFor('reject: batch header reserved bytes (52..256) must be zero')).toEqual(['batch_header_reserved_nonzero']);
    expect(reasonsFor('reject: message frame reserved bytes (40..48) must be zero')).toEqual(['frame_reserved_nonzero']);
    expect(reasonsFor('reject: frames do not tile message_count')).toEqual(['message_count_mismatch']);
    expect(reasonsFor('reject: shorter than batch_length')).toContain('batch_truncated');
    expect(reasonsFor('reject: message_count is zero')).toEqual(['batch_empty']);
    expect(reasonsFor('reject: shorter than the 256-byte header')).toEqual(['batch_too_short']);
    expect(reasonsFor('reject: offset_delta is not the frame index')).toEqual(['frame_offset_delta_mismatch']);
    expect(reasonsFor('reject: payload_length runs past the end of the batch')).toContain('frame_overrun');
    expect(reasonsFor('reject: longer than batch_length')).toEqual(['batch_trailing_bytes']);
    expect(reasonsFor('reject: something new')).toBeNull();
  });
});
