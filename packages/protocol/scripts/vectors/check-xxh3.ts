import { fromHex, toHex } from '@shoal/stdx';
import { xxh3_64 } from '../../src/hash/xxh3.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

/**
 * xxh3.json (and any file of its format): `vectors[]`, each with an input given as `input_hex`,
 * `input_utf8` and/or a generated `input_rule` + `input_len`, and the expected XXH3-64 in any of
 * `xxh3_64_dec`, `xxh3_64_hex`, `xxh3_64_le_bytes_hex`, `as_u128_le_bytes_hex`. Every form of the
 * input that is given must agree, and every expected form that is given must match.
 */
export const checkXxh3: VectorChecker = (doc, fileName) => {
  const list = (doc as { vectors?: unknown } | null)?.vectors;
  if (!Array.isArray(list)) return [{ id: `${fileName}#vectors`, ok: false, detail: 'no vectors[] list' }];
  return list.map((entry: unknown, index): VectorOutcome => {
    const record = (entry ?? {}) as Record<string, unknown>;
    const name = typeof record['name'] === 'string' ? record['name'] : String(index);
    return checkEntry(`${fileName}#vectors/${name}`, () => checkOne(record));
  });
};

export default checkXxh3;

function checkOne(v: Record<string, unknown>): string | null {
  const input = vectorInput(v);
  if (typeof input === 'string') return input;
  const hash = xxh3_64(input);
  const le = new Uint8Array(8);
  new DataView(le.buffer).setBigUint64(0, hash, true);
  const checks: [string, string][] = [
    ['xxh3_64_dec', hash.toString()],
    ['xxh3_64_hex', hash.toString(16).padStart(16, '0')],
    ['xxh3_64_le_bytes_hex', toHex(le)],
    ['as_u128_le_bytes_hex', toHex(le) + '00'.repeat(8)],
  ];
  let compared = 0;
  for (const [field, actual] of checks) {
    const expected = v[field];
    if (expected === undefined) continue;
    compared++;
    const problem = expectEqual(field, actual, typeof expected === 'string' ? expected.toLowerCase() : expected);
    if (problem !== null) return problem;
  }
  return compared === 0 ? 'no expected hash field' : null;
}

/** The input bytes, or a problem. */
function vectorInput(v: Record<string, unknown>): Uint8Array | string {
  const forms: Uint8Array[] = [];
  const hex = v['input_hex'];
  if (typeof hex === 'string') forms.push(fromHex(hex));
  const utf8 = v['input_utf8'];
  if (typeof utf8 === 'string') forms.push(new TextEncoder().encode(utf8));
  const rule = v['input_rule'];
  const length = v['input_len'] === undefined ? null : Number(v['input_len']);
  if (typeof rule === 'string' && (hex === undefined || length !== null)) {
    const generated = generate(rule, length);
    if (typeof generated === 'string') {
      if (forms.length === 0) return generated;
    } else {
      forms.push(generated);
    }
  }
  const first = forms[0];
  if (first === undefined) return 'no input (input_hex, input_utf8 or input_rule + input_len)';
  for (const other of forms) if (toHex(other) !== toHex(first)) return 'input forms disagree';
  if (length !== null && first.length !== length) return `input_len ${length} but ${first.length} input bytes`;
  return first;
}

/** Known generators: `byte[i] = i mod M` (README: M = 251). */
function generate(rule: string, length: number | null): Uint8Array | string {
  const match = /i\s*(?:mod|%)\s*(\d+)/.exec(rule);
  if (match === null) return `unknown input_rule "${rule}"`;
  if (length === null || !Number.isSafeInteger(length) || length < 0) return 'input_rule without a valid input_len';
  const modulus = Number(match[1]);
  if (!(modulus >= 1 && modulus <= 256)) return `input_rule modulus ${modulus} out of range`;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = i % modulus;
  return bytes;
}
