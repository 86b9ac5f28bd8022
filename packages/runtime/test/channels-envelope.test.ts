import { describe, expect, it } from 'vitest';
import { EnvelopeEncoder, decodeMessage, encodedLength } from '../src/channels/envelope.js';
import { type ChannelMessage, RequestRoute } from '../src/channels/messages.js';
import { makeToken } from '../src/client-plane/token.js';

function roundTrip(message: ChannelMessage): ChannelMessage {
  const parts = new EnvelopeEncoder().encode(message);
  const bytes = new Uint8Array(encodedLength(parts));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return decodeMessage(bytes);
}

const header = Uint8Array.from({ length: 256 }, (_, i) => i);
const token = makeToken(7, 1234, 99);

describe('channel envelope', () => {
  const cases: ChannelMessage[] = [
    {
      kind: 'client_request', route: RequestRoute.poll, token, group: (5n << 32n) | (2n << 20n) | 7n, userId: 42,
      metadataOp: 1n << 40n, hostValue: (1n << 32n) | 17n, fenceOp: 0n, forwarded: false, header, body: Uint8Array.of(1, 2, 3),
    },
    {
      kind: 'client_request', route: RequestRoute.submit, token, group: 1n << 63n, userId: 0, metadataOp: 0n, hostValue: 0n,
      fenceOp: (1n << 50n) + 3n, forwarded: true, header, body: new Uint8Array(0),
    },
    { kind: 'reply', token, group: (5n << 32n) | 1n, frame: Uint8Array.of(9, 9, 9), completes: true },
    { kind: 'reply', token, group: 0n, frame: null, completes: true },
    { kind: 'reply', token, group: 1n << 63n, frame: Uint8Array.of(1), completes: false },
    { kind: 'metadata_commit', op: 77n, operation: 128, timestamp: 1_700_000_000_000_000n, userId: 3, client: (1n << 127n) | 5n, body: Uint8Array.of(4, 5) },
    { kind: 'metadata_snapshot', op: 12n, snapshot: Uint8Array.of(0x93, 1, 2) },
    { kind: 'session_submit', session: 'register', token, client: 0x0123456789abcdeffedcba9876543210n, userId: 1, epoch: 0n, request: 0n },
    { kind: 'session_submit', session: 'logout', token: 0, client: 3n, userId: 1, epoch: 9n, request: (1n << 64n) - 1n },
    { kind: 'session_result', session: 'register', token, client: 3n, userId: 1, outcome: 'ok', epoch: 11n, watermark: 0n },
    { kind: 'session_result', session: 'logout', token, client: 3n, userId: 1, outcome: 'forward_timed_out', epoch: 0n, watermark: 0n },
    { kind: 'replica_frame', direction: 'in', replica: 2, group: 1n << 63n, frame: Uint8Array.of(6, 6) },
  ];
  for (const message of cases) {
    it(`round-trips ${message.kind}${'route' in message ? ` (route ${message.route})` : ''}`, () => {
      expect(roundTrip(message)).toEqual(message);
    });
  }

  it('refuses a malformed message as our bug (an assertion), never silently', () => {
    expect(() => decodeMessage(new Uint8Array(16).fill(0xee))).toThrow(/unknown message kind/);
    const parts = new EnvelopeEncoder().encode(cases[0] as ChannelMessage);
    const joined = new Uint8Array(encodedLength(parts) - 1);
    let at = 0;
    for (const part of parts) {
      joined.set(part.subarray(0, Math.min(part.length, joined.length - at)), at);
      at += part.length;
    }
    expect(() => decodeMessage(joined)).toThrow(/client_request length/);
  });
});
