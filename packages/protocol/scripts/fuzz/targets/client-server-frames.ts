import type { Prng } from '@shoal/stdx';
import {
  EvictionReason, Operation, classifyServerFrame, decodeServerFrame, encodeEvictionHeader, encodeIncompatibleProtocolEviction,
  encodeReplyFrame, encodeResultRejection, encodeResultSuccess, validateEvictionHeader, validateReplyHeader,
} from '../../../src/client/index.js';
import type { FuzzTarget } from '../target.js';

/** Reply and eviction frames: the structural decoder, validate, and the SDK decode funnel. */
const target: FuzzTarget = {
  name: 'client-server-frames',
  seeds(prng: Prng): Uint8Array[] {
    const client = prng.u128() | 1n;
    return [
      encodeReplyFrame({ client, request: 1n, operation: Operation.CreateStream, op: 5n, commit: 5n }, encodeResultSuccess(prng.bytes(20))),
      encodeReplyFrame({ client, request: 1n, operation: Operation.CreateStream }, encodeResultRejection(1012)),
      encodeReplyFrame({ client, request: 2n, operation: Operation.CreateTopic, status: 40 }, new Uint8Array(0)),
      encodeReplyFrame({ client, request: 3n, operation: Operation.NonReplicated }, prng.bytes(64)),
      encodeReplyFrame({ client, request: 0n, operation: Operation.Register }, encodeResultSuccess(prng.bytes(23))),
      encodeEvictionHeader({ client, reason: EvictionReason.StaleClient, view: 5, replica: 2 }),
      encodeIncompatibleProtocolEviction(client, 11264, 11264),
    ];
  },
  run(input: Uint8Array): string {
    const outcome = classifyServerFrame(input);
    const funnel = outcome.outcome === 'ok' ? `ok${outcome.operation}:${outcome.payload.length}` : `err${outcome.errorCode}:${outcome.source}`;
    const frame = decodeServerFrame(input);
    if (!frame.ok) return `${funnel}|fail:${frame.reason}`;
    const valid = frame.value.kind === 'reply' ? validateReplyHeader(frame.value.header) : validateEvictionHeader(frame.value.header);
    return `${funnel}|${frame.value.kind}:${valid ?? 'valid'}`;
  },
};

export default target;
