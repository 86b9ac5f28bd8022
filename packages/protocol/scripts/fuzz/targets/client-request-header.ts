import { type Prng, assert } from '@shoal/stdx';
import {
  Operation, decodeRequestFrame, decodeRequestHeader, encodeRequestFrame, encodeRequestHeader, requestCommandCode,
  validateClientRequestHeader, validateRequestHeader,
} from '../../../src/client/index.js';
import type { FuzzTarget } from '../target.js';

/**
 * RequestHeader: structural decode, §1.3 validate, client admission, and (for whole frames) the
 * command code derivation. A decoded header must re-encode to the same 256 bytes (asserted).
 */
const target: FuzzTarget = {
  name: 'client-request-header',
  seeds(prng: Prng): Uint8Array[] {
    const client = prng.u128() | 1n;
    return [
      encodeRequestFrame({ client, operation: Operation.NonReplicated, nonReplicatedCode: 1 }, new Uint8Array(0)),
      encodeRequestFrame({ client, operation: Operation.Register }, prng.bytes(40)),
      encodeRequestFrame({ client, operation: Operation.CreateStream, session: 7n, request: 1n }, Uint8Array.of(1, 0x61)),
      encodeRequestFrame({ client, operation: Operation.SendMessages, session: 7n, request: 3n, requestChecksum: prng.u64() }, prng.bytes(300)),
      encodeRequestHeader({ size: 256, client, operation: Operation.Logout, session: 9n, request: 4n, timestamp: prng.u64() }),
    ];
  },
  run(input: Uint8Array): string {
    const header = decodeRequestHeader(input);
    if (!header.ok) return `fail:${header.reason}`;
    // The encoder only builds frames of at least a header; smaller sizes are a validate reason.
    if (header.value.size >= 256) {
      const again = encodeRequestHeader(header.value);
      for (let i = 0; i < 256; i++) assert(again[i] === input[i], `request header re-encodes differently at byte ${i}`);
    }
    const valid = validateRequestHeader(header.value) ?? 'valid';
    const admitted = validateClientRequestHeader(header.value) ?? 'admitted';
    const frame = decodeRequestFrame(input);
    const code = frame.ok ? requestCommandCode(frame.value.header, frame.value.body) : null;
    const codeText = code === null ? `frame_${frame.ok ? '' : frame.reason}` : code.ok ? `code_${code.value}` : `code_${code.reason}`;
    return `ok:op${header.value.operation}:${valid}:${admitted}:${codeText}`;
  },
};

export default target;
