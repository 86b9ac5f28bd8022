import { Operation, decodeReplyHeader, decodeRequestHeader, encodeReplyFrame, encodeRequestHeader } from '@shoal/protocol';
import { measureCases, row } from '../measure.js';
import type { Suite } from '../suite.js';

/**
 * Client-plane header decoding, paid once per request on the server and once per reply in the
 * SDK. Baseline: reading the same fields with one DataView into a plain object literal, which is
 * what a decoder can at best do. The decoders used to spread `readFramePrefix(...)` into their
 * result: ~20 µs per header (V8's slow object clone plus the garbage), found in a CPU profile of
 * the 256-in-flight bench (14 % of the primary's time in `readRequestFields`).
 */
const suite: Suite = {
  name: 'headers',
  description: 'client-plane RequestHeader / ReplyHeader decode vs one DataView field read',
  run(settings) {
    const request = encodeRequestHeader({
      size: 256, client: (1n << 100n) + 7n, operation: Operation.SendMessages, request: 5n, session: 9n, userId: 1,
      requestChecksum: (1n << 127n) + 3n, timestamp: 1_700_000_000_000_000n,
    });
    const reply = encodeReplyFrame({
      client: (1n << 100n) + 7n, requestChecksum: 3n, context: 0n, op: 42n, commit: 42n, timestamp: 1_700_000_000_000_000n,
      request: 5n, operation: Operation.SendMessages, status: 0,
    }, new Uint8Array(0));
    const baseline = (): unknown => {
      const v = new DataView(request.buffer, request.byteOffset, 256);
      return { size: v.getUint32(48, true), client: v.getBigUint64(128, true), request: v.getBigUint64(168, true), session: v.getBigUint64(184, true), operation: request[176] };
    };
    const rows = measureCases([
      { name: 'decodeRequestHeader', op: () => decodeRequestHeader(request) },
      { name: 'decodeReplyHeader', op: () => decodeReplyHeader(reply) },
      { name: 'baseline: 5 fields, one DataView', op: baseline },
    ], settings);
    const ns = (name: string): number => row(rows, name).nsPerOp;
    return { rows, notes: [`request header decode = ${(ns('decodeRequestHeader') / ns('baseline: 5 fields, one DataView')).toFixed(1)}× the 5-field baseline (target: well under 1 µs per header)`] };
  },
};

export default suite;
