import { describe, expect, it } from 'vitest';
import { AssertionError, fromHex, toHex } from '@shoal/stdx';
import {
  REJECTION_SECTION_LENGTH, classifyServerFrame, encodeEvictionHeader, encodeReplyFrame, encodeReplyRejectionBody,
  encodeReplySuccessBody, encodeResultRejection, encodeResultSection, encodeResultSuccess, Operation, parseResultSection,
} from '../src/client/index.js';

describe('result section', () => {
  it('success: count 0 then the payload (rust_test_values)', () => {
    const parsed = parseResultSection(fromHex('000000007061796c6f6164'));
    expect(parsed.ok && parsed.value.code).toBe(0);
    expect(parsed.ok && parsed.value.sectionLength).toBe(4);
    expect(parsed.ok && new TextDecoder().decode(parsed.value.payload)).toBe('payload');
    expect(toHex(encodeResultSuccess(new TextEncoder().encode('payload')))).toBe('000000007061796c6f6164');
  });

  it('rejection: one entry {0, code}, 12 bytes', () => {
    const parsed = parseResultSection(fromHex('0100000000000000f1030000'));
    expect(parsed.ok && parsed.value).toMatchObject({ code: 1009, sectionLength: REJECTION_SECTION_LENGTH, entries: [{ index: 0, result: 1009 }] });
    expect(toHex(encodeResultRejection(1009))).toBe('0100000000000000f1030000');
    expect(() => encodeResultRejection(0)).toThrow(AssertionError);
  });

  it('malformed sections are never success', () => {
    for (const hex of ['', '01', '010000', '01000000', '0100000000000000', '02000000000000000100000000000000']) {
      expect(parseResultSection(fromHex(hex)).ok, hex).toBe(false);
    }
  });

  it('several entries: the first result is the code; a zero first result reads as success (Rust rule)', () => {
    const body = encodeResultSection([{ index: 0, result: 0 }, { index: 1, result: 5 }], Uint8Array.of(9));
    const parsed = parseResultSection(body);
    expect(parsed.ok && parsed.value).toMatchObject({ code: 0, sectionLength: 20 });
    expect(parsed.ok && [...parsed.value.payload]).toEqual([9]);
  });

  it('reply bodies per operation', () => {
    expect(toHex(encodeReplySuccessBody(Operation.CreateStream, Uint8Array.of(1)))).toBe('0000000001');
    expect(toHex(encodeReplySuccessBody(Operation.Register, Uint8Array.of(1)))).toBe('0000000001');
    expect(toHex(encodeReplySuccessBody(Operation.NonReplicated, Uint8Array.of(1)))).toBe('01');
    expect(toHex(encodeReplySuccessBody(Operation.SendMessages, Uint8Array.of(1)))).toBe('01');
    expect(toHex(encodeReplyRejectionBody(Operation.StoreConsumerOffset, 3021))).toBe('0100000000000000cd0b0000');
    expect(() => encodeReplyRejectionBody(Operation.SendMessages, 1)).toThrow(AssertionError);
  });
});

describe('client decode funnel', () => {
  const reply = (operation: number, body: Uint8Array, status = 0): Uint8Array => encodeReplyFrame({ client: 1n, request: 1n, operation, status }, body);

  it('strips the section of result-framed replies and passes others through', () => {
    expect(classifyServerFrame(reply(Operation.CreateStream, encodeResultSuccess(Uint8Array.of(7))))).toMatchObject({ outcome: 'ok', payload: Uint8Array.of(7) });
    expect(classifyServerFrame(reply(Operation.NonReplicated, Uint8Array.of(0, 0, 0, 0)))).toMatchObject({ outcome: 'ok', payload: Uint8Array.of(0, 0, 0, 0) });
    expect(classifyServerFrame(reply(Operation.Logout, new Uint8Array(0)))).toMatchObject({ outcome: 'ok' });
    expect(classifyServerFrame(reply(Operation.Register, new Uint8Array(0)))).toMatchObject({ outcome: 'ok', payload: new Uint8Array(0) });
  });

  it('maps every error channel', () => {
    expect(classifyServerFrame(reply(Operation.CreateStream, encodeResultRejection(1012)))).toMatchObject({ outcome: 'error', errorCode: 1012, source: 'result_section' });
    expect(classifyServerFrame(reply(Operation.CreateStream, new Uint8Array(0), 40))).toMatchObject({ outcome: 'error', errorCode: 40, source: 'status' });
    expect(classifyServerFrame(reply(Operation.CreateStream, Uint8Array.of(1, 0, 0, 0)))).toMatchObject({ outcome: 'error', errorCode: 3, source: 'result_section' });
    expect(classifyServerFrame(reply(99, new Uint8Array(0)))).toMatchObject({ outcome: 'error', errorCode: 3 });
    expect(classifyServerFrame(new Uint8Array(10))).toMatchObject({ outcome: 'error', errorCode: 304 });
    expect(classifyServerFrame(encodeEvictionHeader({ client: 1n, reason: 13 }))).toMatchObject({ outcome: 'error', errorCode: 30, evictionReason: 13 });
    const truncated = reply(Operation.NonReplicated, Uint8Array.of(1, 2));
    expect(classifyServerFrame(truncated.subarray(0, 257))).toMatchObject({ outcome: 'error', errorCode: 3 });
  });
});
