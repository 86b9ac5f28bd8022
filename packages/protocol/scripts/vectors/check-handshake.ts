/**
 * Checker for `handshake.json`: for each vector the MAC key derives from the shared secret, the
 * transcript built from the inputs is byte-exact, the MAC is the listed one, and verification
 * accepts it under the current key, under the previous key (rotation), and refuses a flipped MAC
 * and a wrong key.
 */
import { fromHex, toHex } from '@shoal/stdx';
import {
  deriveMacKey,
  handshakeMac,
  MAC_TRANSCRIPT_SIZE,
  type MacDirection,
  macTranscript,
  type MacTranscriptInput,
  verifyHandshakeMac,
} from '../../src/replica/index.js';
import { big, entryName, isRecord, listOf, num, problems, str, type Json } from './check-replica-frames.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

function secretOf(entry: Json): Uint8Array {
  if (typeof entry['shared_secret_hex'] === 'string') return fromHex(entry['shared_secret_hex']);
  return new TextEncoder().encode(str(entry, 'shared_secret_utf8'));
}

function inputOf(entry: Json): MacTranscriptInput {
  const direction = num(entry, 'direction');
  if (direction !== 1 && direction !== 2) throw new Error(`direction ${direction} is neither 1 nor 2`);
  const mode = entry['mode'] === undefined ? 0 : num(entry, 'mode');
  const exporter = typeof entry['tls_exporter_hex'] === 'string' ? fromHex(entry['tls_exporter_hex']) : new Uint8Array(32);
  return {
    cluster: big(entry['cluster'], 'cluster'),
    dialerId: num(entry, 'dialer_id'),
    acceptorId: num(entry, 'acceptor_id'),
    nonceD: fromHex(str(entry, 'nonce_d_hex')),
    nonceA: fromHex(str(entry, 'nonce_a_hex')),
    tlsExporter: mode === 1 ? exporter : null,
    direction: direction as MacDirection,
  };
}

function checkVector(entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const out: (string | null)[] = [];
  const key = deriveMacKey(secretOf(entry));
  if (typeof entry['shared_secret_utf8'] === 'string') {
    out.push(expectEqual('key from the UTF-8 secret', toHex(deriveMacKey(entry['shared_secret_utf8'])), toHex(key)));
  }
  if (typeof entry['mac_key_hex'] === 'string') out.push(expectEqual('mac_key', toHex(key), entry['mac_key_hex']));
  const input = inputOf(entry);
  const transcript = macTranscript(input);
  out.push(expectEqual('transcript length', transcript.length, MAC_TRANSCRIPT_SIZE));
  if (typeof entry['transcript_hex'] === 'string') out.push(expectEqual('transcript', toHex(transcript), entry['transcript_hex']));
  const mac = handshakeMac(key, input);
  const expectedMac = fromHex(str(entry, 'mac_hex'));
  out.push(expectEqual('mac', toHex(mac), toHex(expectedMac)));
  if (!verifyHandshakeMac({ current: key }, input, expectedMac)) out.push('verify refused the MAC under the current key');
  const otherKey = deriveMacKey(new Uint8Array([...secretOf(entry), 0x21]));
  if (!verifyHandshakeMac({ current: otherKey, previous: key }, input, expectedMac)) {
    out.push('verify refused the MAC under the previous key (rotation window)');
  }
  if (verifyHandshakeMac({ current: otherKey }, input, expectedMac)) out.push('verify accepted a MAC under the wrong key');
  const flipped = expectedMac.slice();
  flipped[0] = (flipped[0] as number) ^ 1;
  if (verifyHandshakeMac({ current: key }, input, flipped)) out.push('verify accepted a flipped MAC');
  const otherDirection = { ...input, direction: (input.direction === 1 ? 2 : 1) as MacDirection };
  if (verifyHandshakeMac({ current: key }, otherDirection, expectedMac)) out.push('the MAC verified for the other direction');
  return problems(out);
}

export const checkHandshake: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] =>
  listOf(doc, 'vectors').map((entry, i) => checkEntry(`${fileName}#vectors/${entryName(entry, i)}`, () => checkVector(entry)));

export default checkHandshake;
