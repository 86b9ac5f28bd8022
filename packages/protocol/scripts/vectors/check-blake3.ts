/**
 * Checker for `blake3.json`: the official BLAKE3 cases in all three modes at their full
 * extended-output length (and the 32-byte default as a prefix), plus the Iggy extras
 * (replica MAC-key derivations and keyed-hash samples).
 */
import { fromHex, toHex } from '@shoal/stdx';
import { blake3, blake3DeriveKey, blake3Keyed } from '../../src/hash/blake3.js';
import { deriveMacKey, MAC_KEY_CONTEXT } from '../../src/replica/index.js';
import { entryName, isRecord, listOf, num, problems, str, type Json } from './check-replica-frames.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

function officialInput(length: number): Uint8Array {
  const input = new Uint8Array(length);
  for (let i = 0; i < length; i++) input[i] = i % 251;
  return input;
}

function checkCase(doc: Json, entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const input = officialInput(num(entry, 'input_len'));
  const out: (string | null)[] = [];
  const modes: [string, (length: number) => Uint8Array][] = [
    ['hash', (length) => blake3(input, length)],
    ['keyed_hash', (length) => blake3Keyed(new TextEncoder().encode(str(doc, 'key')), input, length)],
    ['derive_key', (length) => blake3DeriveKey(str(doc, 'context_string'), input, length)],
  ];
  for (const [mode, run] of modes) {
    const expected = entry[mode];
    if (typeof expected !== 'string') continue;
    out.push(expectEqual(mode, toHex(run(expected.length / 2)), expected));
    out.push(expectEqual(`${mode} (32-byte default)`, toHex(run(32)), expected.slice(0, 64)));
  }
  return problems(out);
}

function materialOf(entry: Json, hexKey: string, utf8Key: string): Uint8Array {
  if (typeof entry[hexKey] === 'string') return fromHex(entry[hexKey]);
  return new TextEncoder().encode(str(entry, utf8Key));
}

function checkExtra(entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const expected = str(entry, 'output_hex');
  const length = expected.length / 2;
  const mode = str(entry, 'mode');
  const out: (string | null)[] = [];
  if (mode === 'derive_key') {
    const context = str(entry, 'context_string');
    const material = materialOf(entry, 'key_material_hex', 'key_material_utf8');
    out.push(expectEqual('derive_key', toHex(blake3DeriveKey(context, material, length)), expected));
    if (context === MAC_KEY_CONTEXT && length === 32) out.push(expectEqual('deriveMacKey', toHex(deriveMacKey(material)), expected));
  } else if (mode === 'keyed_hash') {
    const input = materialOf(entry, 'input_hex', 'input_utf8');
    out.push(expectEqual('keyed_hash', toHex(blake3Keyed(fromHex(str(entry, 'key_hex')), input, length)), expected));
  } else if (mode === 'hash') {
    const input = materialOf(entry, 'input_hex', 'input_utf8');
    out.push(expectEqual('hash', toHex(blake3(input, length)), expected));
  } else {
    return `unknown mode ${mode}`;
  }
  return problems(out);
}

export const checkBlake3: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] => {
  const root: Json = isRecord(doc) ? doc : {};
  const outcomes = listOf(doc, 'cases').map((entry, i) =>
    checkEntry(`${fileName}#cases/${isRecord(entry) ? String(entry['input_len']) : i}`, () => checkCase(root, entry)),
  );
  listOf(doc, 'iggy_extras').forEach((entry, i) => {
    outcomes.push(checkEntry(`${fileName}#iggy_extras/${i}:${entryName(entry, i)}`, () => checkExtra(entry)));
  });
  return outcomes;
};

export default checkBlake3;
