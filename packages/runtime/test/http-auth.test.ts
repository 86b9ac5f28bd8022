/**
 * The HTTP port's bearer parsing and the supervisor's correlation of bearer checks with the
 * shards' answers (the end-to-end refusal and acceptance run on a real node in
 * test/integration/metrics-ready.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { BEARER_TOKEN_MAX, BearerChecks, bearerToken } from '../src/node/http-auth.js';

describe('bearerToken', () => {
  it('takes the credential of a Bearer header, the scheme in any case', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc ')).toBe('abc');
    expect(bearerToken('BEARER a.b-c_d=')).toBe('a.b-c_d=');
  });

  it('refuses no header, another scheme, an empty or an oversized credential', () => {
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('Bearer   ')).toBeNull();
    expect(bearerToken('Basic aWdneTppZ2d5')).toBeNull();
    expect(bearerToken('Bearerabc')).toBeNull();
    expect(bearerToken(`Bearer ${'x'.repeat(BEARER_TOKEN_MAX)}`)).toBe('x'.repeat(BEARER_TOKEN_MAX));
    expect(bearerToken(`Bearer ${'x'.repeat(BEARER_TOKEN_MAX + 1)}`)).toBeNull();
  });
});

describe('BearerChecks', () => {
  it('answers each check with the verdict of its own id, whatever the order of the answers', async () => {
    const asked: { id: number; token: string }[] = [];
    const checks = new BearerChecks((id, token) => {
      asked.push({ id, token });
      return true;
    });
    const first = checks.check('one');
    const second = checks.check('two');
    expect(asked.map((a) => a.token)).toEqual(['one', 'two']);
    checks.settle(asked[1]?.id ?? -1, 'denied');
    checks.settle(asked[0]?.id ?? -1, 'ok');
    checks.settle(12345, 'ok'); // unknown: ignored
    expect(await first).toBe('ok');
    expect(await second).toBe('denied');
  });

  it('is unavailable when no shard can take the check', async () => {
    const checks = new BearerChecks(() => false);
    expect(await checks.check('one')).toBe('unavailable');
  });
});
