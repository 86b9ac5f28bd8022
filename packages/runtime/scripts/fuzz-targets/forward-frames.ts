/**
 * The forwarding channel's frames (runtime/src/forwarding/frames.ts), as the client port delivers
 * them to the channel server and the forwarder: ForwardRequest and ForwardReply decoders on
 * arbitrary bytes (the first byte picks which). A decoded frame's fields must encode back to a
 * header that decodes to the same fields, and its views must lie inside the frame.
 */
import { assert } from '@shoal/stdx';
import {
  CHANNEL_HEADER_SIZE, decodeForwardReply, decodeForwardRequest, encodeForwardReplyHeader, encodeForwardRequestHeader,
} from '../../src/forwarding/frames.js';
import type { FuzzTarget } from '../fuzz-target.js';

const CLIENT_HEADER = 256;

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function request(frame: Uint8Array): string {
  const decoded = decodeForwardRequest(frame);
  if (decoded === null) return 'request:null';
  assert(decoded.header.length === CLIENT_HEADER, 'the client header is 256 bytes');
  assert(CHANNEL_HEADER_SIZE + CLIENT_HEADER + decoded.body.length === frame.length, 'header and body tile the frame');
  const again = decodeForwardRequest(concat(encodeForwardRequestHeader(decoded, decoded.header, decoded.body), decoded.header, decoded.body));
  assert(again !== null, 'a re-encoded request decodes');
  const fields = (f: typeof decoded): string => [f.forwardId, f.route, f.userId, f.group, f.metadataOp, f.fenceOp, f.hostValue].join(',');
  assert(fields(again) === fields(decoded), 'a re-encoded request keeps its fields');
  return `request:ok:${fields(decoded)}:${decoded.body.length}`;
}

function reply(frame: Uint8Array): string {
  const decoded = decodeForwardReply(frame);
  if (decoded === null) return 'reply:null';
  const inner = decoded.frame;
  assert(CHANNEL_HEADER_SIZE + (inner?.length ?? 0) === frame.length, 'the inner frame fills the rest');
  const again = decodeForwardReply(concat(encodeForwardReplyHeader(decoded.forwardId, inner, decoded.completes), inner ?? new Uint8Array(0)));
  assert(again !== null && again.forwardId === decoded.forwardId && again.completes === decoded.completes && (again.frame === null) === (inner === null),
    'a re-encoded reply keeps its fields');
  return `reply:ok:${decoded.forwardId}:${decoded.completes}:${inner?.length ?? -1}`;
}

const target: FuzzTarget = {
  name: 'forward-frames',
  seeds(prng) {
    const header = prng.bytes(CLIENT_HEADER);
    const fields = { forwardId: prng.u64(), route: 3, userId: 7, group: prng.u64(), metadataOp: 12n, fenceOp: 11n, hostValue: 5n };
    const body = prng.bytes(40);
    const inner = prng.bytes(CLIENT_HEADER + 8);
    return [
      concat(Uint8Array.of(0), encodeForwardRequestHeader(fields, header, body), header, body),
      concat(Uint8Array.of(0), encodeForwardRequestHeader(fields, header, new Uint8Array(0)), header),
      concat(Uint8Array.of(1), encodeForwardReplyHeader(9n, inner, true), inner),
      concat(Uint8Array.of(1), encodeForwardReplyHeader(9n, null, true)),
      concat(Uint8Array.of(1), encodeForwardReplyHeader(10n, inner, false), inner),
    ];
  },
  run(input) {
    if (input.length === 0) return 'empty';
    const frame = input.subarray(1);
    return (input[0] as number) % 2 === 0 ? request(frame) : reply(frame);
  },
};

export default target;
