import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vectorsDir } from '../../../test/support/fixtures.js';
import { checkClientFrames } from '../scripts/vectors/check-client-frames.js';
import { checkRustTestValuesClient } from '../scripts/vectors/check-rust-test-values-client.js';
import type { VectorChecker } from '../scripts/vectors/outcome.js';

const load = (file: string): unknown => JSON.parse(readFileSync(join(vectorsDir(), file), 'utf8'));

describe.each([
  ['client_frames.json', checkClientFrames, 22],
  ['rust_test_values.json', checkRustTestValuesClient, 50],
] as const)('%s', (file: string, checker: VectorChecker, minimum: number) => {
  it('every entry passes', () => {
    const outcomes = checker(load(file), file);
    expect(outcomes.length).toBeGreaterThanOrEqual(minimum);
    const failures = outcomes.filter((o) => !o.ok).map((o) => `${o.id}: ${o.detail}`);
    expect(failures).toEqual([]);
  });
});

describe('the checkers catch a broken vector', () => {
  it('client frames: a flipped body byte, a wrong header field, a wrong outcome', () => {
    const doc = load('client_frames.json') as { requests: Record<string, unknown>[]; replies: Record<string, unknown>[] };
    const request = structuredClone(doc.requests.find((r) => r['command_code'] === 202));
    const reply = structuredClone(doc.replies.find((r) => (r['expected'] as Record<string, unknown>)['outcome'] === 'ok' && r['header'] !== undefined));
    if (request === undefined || reply === undefined) throw new Error('vector entries missing');
    const hex = String(request['hex']);
    request['hex'] = hex.slice(0, hex.length - 2) + (hex.endsWith('00') ? '01' : '00');
    (reply['expected'] as Record<string, unknown>)['outcome'] = 'error';
    const wrongHeader = structuredClone(doc.requests[0] as Record<string, unknown>);
    (wrongHeader['header'] as Record<string, unknown>)['request'] = '99';
    const outcomes = checkClientFrames({ requests: [request, wrongHeader], replies: [reply] }, 'mutated.json');
    expect(outcomes.map((o) => o.ok)).toEqual([false, false, false]);
  });

  it('rust test values: a wrong packing and an accepted reject', () => {
    const outcomes = checkRustTestValuesClient({
      protocol_version: { 'pack(0,11,0)': 11265 },
      partitioning: { rejected_hex: ['0100'] },
    }, 'mutated.json');
    expect(outcomes.map((o) => o.ok)).toEqual([false, false]);
  });

  it('never throws on malformed documents', () => {
    expect(checkClientFrames(null, 'x.json')[0]?.ok).toBe(false);
    expect(checkClientFrames({ requests: [{ hex: 5 }] }, 'x.json')[0]?.ok).toBe(false);
    expect(checkRustTestValuesClient({ partitioning: { balanced_hex: 7 } }, 'x.json')[0]?.ok).toBe(false);
  });
});
