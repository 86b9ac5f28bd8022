/**
 * The HTTP port's `Authorization` header parser (runtime/src/node/http-auth.ts) on arbitrary
 * header text (the input read as latin1, as Node hands header bytes over): a token it returns is
 * a non-empty, trimmed part of the header after a `Bearer` scheme, never longer than the limit.
 */
import { assert } from '@shoal/stdx';
import { BEARER_TOKEN_MAX, bearerToken } from '../../src/node/http-auth.js';
import type { FuzzTarget } from '../fuzz-target.js';

const latin1 = new TextDecoder('latin1');
const ascii = new TextEncoder();

const target: FuzzTarget = {
  name: 'http-bearer',
  seeds: () => ['Bearer abcDEF123-_=', 'bearer x', 'Basic aWdneTppZ2d5', 'Bearer ', `Bearer ${'t'.repeat(BEARER_TOKEN_MAX)}`, 'Bearer  a b '].map((s) => ascii.encode(s)),
  run(input) {
    const header = latin1.decode(input);
    const token = bearerToken(header);
    if (token === null) return 'null';
    assert(token !== '' && token.length <= BEARER_TOKEN_MAX, 'a token is non-empty and bounded');
    assert(token === token.trim(), 'a token is trimmed');
    assert(header.slice(0, header.indexOf(' ')).toLowerCase() === 'bearer' && header.includes(token), 'a token follows the Bearer scheme');
    return `token:${token.length}`;
  },
};

export default target;
