import type { Prng } from '@shoal/stdx';
import {
  SHOAL_PROTOCOL_VERSION, decodeClientVersionPrefix, decodeLegacyLoginUserRequest, decodeLegacyLoginWithPatRequest,
  decodeLoginRegisterRequest, decodeLoginRegisterWithPatRequest, decodeLoginReplyBody, encodeLegacyLoginUserRequest,
  encodeLegacyLoginWithPatRequest, encodeLoginRegisterRequest, encodeLoginRegisterWithPatRequest, encodeLoginReply,
  encodeResultSuccess, isProtocolCompatible, registerCodeOfBody,
} from '../../../src/client/index.js';
import { assertCanonical } from '../canonical.js';
import type { FuzzTarget } from '../target.js';

/**
 * Login bodies: the version prefix and gate, both register shapes, the body-based code choice, the
 * reply body (with its result section) and the legacy shapes. The first byte picks the decoder.
 */
const versionInfo = { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'fuzz-sdk', sdkVersion: '1.0.0' };

const target: FuzzTarget = {
  name: 'client-login',
  seeds(prng: Prng): Uint8Array[] {
    const tagged = (index: number, bytes: Uint8Array): Uint8Array => Uint8Array.of(index, ...bytes);
    return [
      tagged(0, encodeLoginRegisterRequest({ versionInfo, username: 'iggy', password: 'iggy', context: '' })),
      tagged(0, encodeLoginRegisterRequest({ versionInfo, username: 'u', password: '', context: 'ctx' })),
      tagged(1, encodeLoginRegisterWithPatRequest({ versionInfo, token: 'x'.repeat(50), context: '' })),
      tagged(2, encodeResultSuccess(encodeLoginReply({ userId: prng.u32(), session: prng.u64(), serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: '0.11.0' }))),
      tagged(3, encodeLegacyLoginUserRequest({ username: 'iggy', password: 'iggy', version: '0.9', context: '' })),
      tagged(4, encodeLegacyLoginWithPatRequest({ token: 'tok' })),
    ];
  },
  run(input: Uint8Array): string {
    if (input.length === 0) return 'empty';
    const body = input.subarray(1);
    const prefix = decodeClientVersionPrefix(body);
    const gate = prefix.ok ? `v${prefix.value.info.protocolVersion}:${isProtocolCompatible(prefix.value.info.protocolVersion) ? 'in' : 'out'}` : 'malformed';
    const code = registerCodeOfBody(body);
    const head = `${gate}|${code.ok ? code.value : code.reason}`;
    switch ((input[0] as number) % 5) {
      case 0: return `register:${check(body, decodeLoginRegisterRequest, encodeLoginRegisterRequest)}|${head}`;
      case 1: return `register_pat:${check(body, decodeLoginRegisterWithPatRequest, encodeLoginRegisterWithPatRequest)}|${head}`;
      case 2: {
        const reply = decodeLoginReplyBody(body);
        return `reply:${reply.ok ? `ok:${reply.value.userId}` : `fail:${reply.reason}`}|${head}`;
      }
      case 3: return `legacy_login:${check(body, decodeLegacyLoginUserRequest, encodeLegacyLoginUserRequest)}|${head}`;
      default: return `legacy_pat:${check(body, decodeLegacyLoginWithPatRequest, encodeLegacyLoginWithPatRequest)}|${head}`;
    }
  },
};

function check<T>(bytes: Uint8Array, decode: (b: Uint8Array) => { ok: true; value: T } | { ok: false; reason: string }, encode: (v: T) => Uint8Array): string {
  const decoded = decode(bytes);
  if (!decoded.ok) return `fail:${decoded.reason}`;
  // Register bodies ignore trailing bytes (as the reference's decode_after_prefix): a canonical
  // fixed point; the legacy shapes stay exact.
  assertCanonical('login body', bytes, decoded.value, decode, encode);
  return `ok:${bytes.length}`;
}

export default target;
