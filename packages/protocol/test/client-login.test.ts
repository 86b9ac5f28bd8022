import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '@shoal/stdx';
import {
  SHOAL_PROTOCOL_VERSION, decodeClientVersionInfo, decodeClientVersionPrefix, decodeLegacyLoginUserRequest,
  decodeLegacyLoginWithPatRequest, decodeLoginRegisterRequest, decodeLoginRegisterWithPatRequest, decodeLoginReply,
  decodeLoginReplyBody, encodeClientVersionInfo, encodeLegacyLoginUserRequest, encodeLegacyLoginWithPatRequest,
  encodeLoginRegisterRequest, encodeLoginRegisterWithPatRequest, encodeLoginReply, encodeResultRejection, encodeResultSuccess,
  isProtocolCompatible, loginRegisterCommand, packProtocolVersion, registerCodeOfBody,
} from '../src/client/index.js';

const node = { protocolVersion: 11264, sdkName: 'node-sdk', sdkVersion: '0.10.0-edge.4' };

describe('ClientVersionInfo', () => {
  it('matches the Rust fixture bytes (rust-sdk 0.10.1 at 0.11.0)', () => {
    const info = { protocolVersion: packProtocolVersion(0, 11, 0), sdkName: 'rust-sdk', sdkVersion: '0.10.1' };
    expect(toHex(encodeClientVersionInfo(info))).toBe('002c000008727573742d73646b06302e31302e31');
    expect(decodeClientVersionInfo(fromHex('002c000008727573742d73646b06302e31302e31'))).toEqual({ ok: true, value: info });
  });

  it('rejects empty names, truncation and trailing bytes', () => {
    const bytes = encodeClientVersionInfo(node);
    for (let cut = 0; cut < bytes.length; cut++) expect(decodeClientVersionInfo(bytes.subarray(0, cut)).ok, String(cut)).toBe(false);
    expect(decodeClientVersionInfo(Uint8Array.of(...bytes, 0)).ok).toBe(false);
    expect(decodeClientVersionInfo(fromHex('002c0000' + '00' + '0131')).ok).toBe(false);
    expect(decodeClientVersionInfo(fromHex('002c0000' + '01ff' + '0131')).ok).toBe(false);
  });

  it('the prefix decoder reports where credentials start', () => {
    const body = encodeLoginRegisterRequest({ versionInfo: node, username: 'iggy', password: 'iggy', context: '' });
    const prefix = decodeClientVersionPrefix(body);
    expect(prefix.ok && prefix.value.length).toBe(4 + 1 + 8 + 1 + 13);
    expect(prefix.ok && isProtocolCompatible(prefix.value.info.protocolVersion)).toBe(true);
    expect(decodeClientVersionPrefix(Uint8Array.of(0, 0x2c, 0)).ok).toBe(false);
  });
});

describe('login bodies', () => {
  it('LOGIN_REGISTER matches the Node SDK vector body', () => {
    const body = encodeLoginRegisterRequest({ versionInfo: node, username: 'iggy', password: 'iggy', context: '' });
    expect(toHex(body)).toBe('002c0000086e6f64652d73646b0d302e31302e302d656467652e340469676779046967677900000000');
    expect(decodeLoginRegisterRequest(body)).toEqual({ ok: true, value: { versionInfo: node, username: 'iggy', password: 'iggy', context: '' } });
    expect(toHex(loginRegisterCommand.encodeRequest({ versionInfo: node, username: 'iggy', password: 'iggy', context: '' }))).toBe(toHex(body));
  });

  it('context is present only when context_len > 0', () => {
    const withContext = encodeLoginRegisterRequest({ versionInfo: node, username: 'u', password: 'p', context: 'ctx' });
    expect(toHex(withContext.subarray(withContext.length - 7))).toBe('03000000637478');
    const decoded = decodeLoginRegisterRequest(withContext);
    expect(decoded.ok && decoded.value.context).toBe('ctx');
  });

  it('LOGIN_REGISTER_WITH_PAT', () => {
    const req = { versionInfo: node, token: 'x'.repeat(40), context: '' };
    const body = encodeLoginRegisterWithPatRequest(req);
    expect(decodeLoginRegisterWithPatRequest(body)).toEqual({ ok: true, value: req });
    for (let cut = 0; cut < body.length; cut++) expect(decodeLoginRegisterWithPatRequest(body.subarray(0, cut)).ok).toBe(false);
  });

  it('the register code comes from the body', () => {
    expect(registerCodeOfBody(encodeLoginRegisterRequest({ versionInfo: node, username: 'iggy', password: 'iggy', context: '' }))).toEqual({ ok: true, value: 40 });
    expect(registerCodeOfBody(encodeLoginRegisterWithPatRequest({ versionInfo: node, token: 'tok', context: '' }))).toEqual({ ok: true, value: 45 });
    expect(registerCodeOfBody(encodeClientVersionInfo(node))).toEqual({ ok: false, reason: 'register_body_undecodable' });
    const malformed = registerCodeOfBody(Uint8Array.of(1, 2));
    expect(!malformed.ok && malformed.reason.startsWith('malformed_login_')).toBe(true);
  });

  it('legacy shapes 38 and 44 still decode', () => {
    const legacy = { username: 'iggy', password: 'iggy', version: '0.9.0', context: 'c' };
    expect(decodeLegacyLoginUserRequest(encodeLegacyLoginUserRequest(legacy))).toEqual({ ok: true, value: legacy });
    expect(decodeLegacyLoginWithPatRequest(encodeLegacyLoginWithPatRequest({ token: 't' }))).toEqual({ ok: true, value: { token: 't' } });
  });
});

describe('login reply', () => {
  const reply = { userId: 1, session: 7n, serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: '0.11.0' };

  it('payload layout matches the vector', () => {
    expect(toHex(encodeLoginReply(reply))).toBe('010000000700000000000000002c000006302e31312e30');
    expect(decodeLoginReply(fromHex('010000000700000000000000002c000006302e31312e30'))).toEqual({ ok: true, value: reply });
  });

  it('whole body: result section first, empty is terminal, a rejection carries its code', () => {
    expect(decodeLoginReplyBody(encodeResultSuccess(encodeLoginReply(reply)))).toEqual({ ok: true, value: reply });
    expect(decodeLoginReplyBody(new Uint8Array(0))).toEqual({ ok: false, reason: 'login_reply_empty' });
    expect(decodeLoginReplyBody(encodeResultRejection(42))).toEqual({ ok: false, reason: 'login_rejected_42' });
    expect(decodeLoginReplyBody(encodeLoginReply(reply)).ok).toBe(false);
  });
});
