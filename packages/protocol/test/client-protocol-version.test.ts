import { describe, expect, it } from 'vitest';
import { AssertionError } from '@shoal/stdx';
import {
  SHOAL_PROTOCOL_VERSION, SHOAL_PROTOCOL_VERSION_MIN, SHOAL_PROTOCOL_WINDOW, defaultProtocolVersionMin, formatProtocolVersion,
  isProtocolCompatible, packProtocolVersion, parseProtocolVersion, unpackProtocolVersion,
} from '../src/client/index.js';

describe('protocol version', () => {
  it('packs 10 bits per component (rust_test_values)', () => {
    expect(packProtocolVersion(0, 10, 1)).toBe(10241);
    expect(packProtocolVersion(0, 11, 0)).toBe(11264);
    expect(packProtocolVersion(1023, 1023, 1023)).toBe(0x3fff_ffff);
    expect(() => packProtocolVersion(0, 1024, 0)).toThrow(AssertionError);
    expect(() => packProtocolVersion(-1, 0, 0)).toThrow(AssertionError);
    expect(SHOAL_PROTOCOL_VERSION).toBe(11264);
    expect(SHOAL_PROTOCOL_VERSION_MIN).toBe(11264);
  });

  it('integer order equals semver order', () => {
    expect(packProtocolVersion(0, 9, 999)).toBeLessThan(packProtocolVersion(0, 10, 0));
    expect(packProtocolVersion(0, 10, 1)).toBeLessThan(packProtocolVersion(1, 0, 0));
  });

  it('unpacks and refuses the reserved bits', () => {
    expect(unpackProtocolVersion(10241)).toEqual({ ok: true, value: { major: 0, minor: 10, patch: 1 } });
    expect(unpackProtocolVersion(0x4000_0000)).toEqual({ ok: false, reason: 'reserved_bits_set' });
    expect(unpackProtocolVersion(-1).ok).toBe(false);
  });

  it('parses semver strings, ignoring pre-release and build', () => {
    expect(parseProtocolVersion('0.10.1-edge.2')).toEqual({ ok: true, value: 10241 });
    expect(parseProtocolVersion('1.2.3')).toEqual({ ok: true, value: 1050627 });
    expect(parseProtocolVersion('10.0.0+build.5')).toEqual({ ok: true, value: 10485760 });
    for (const bad of ['', '1', '1.2', '1.2.', '.1.2', '1..2', 'a.b.c', '1.2.3x', '1.2.3.4', '1024.0.0', '1.2.99999']) {
      expect(parseProtocolVersion(bad).ok, bad).toBe(false);
    }
  });

  it('displays major.minor.patch', () => {
    expect(formatProtocolVersion(10241)).toBe('0.10.1');
    expect(formatProtocolVersion(packProtocolVersion(3, 2, 1))).toBe('3.2.1');
  });

  it('the 0.x gate: client >= min and (client >> 10) <= (server >> 10)', () => {
    const window = SHOAL_PROTOCOL_WINDOW;
    expect(isProtocolCompatible(packProtocolVersion(0, 11, 0), window)).toBe(true);
    expect(isProtocolCompatible(packProtocolVersion(0, 11, 7), window)).toBe(true);
    expect(isProtocolCompatible(packProtocolVersion(0, 11, 1023), window)).toBe(true);
    expect(isProtocolCompatible(packProtocolVersion(0, 12, 0), window)).toBe(false);
    expect(isProtocolCompatible(packProtocolVersion(0, 10, 1023), window)).toBe(false);
    expect(isProtocolCompatible(0, window)).toBe(false);
    expect(isProtocolCompatible(0xffff_ffff, window)).toBe(false);
    const wide = { max: packProtocolVersion(0, 11, 3), min: packProtocolVersion(0, 9, 0) };
    expect(isProtocolCompatible(packProtocolVersion(0, 10, 5), wide)).toBe(true);
    expect(isProtocolCompatible(packProtocolVersion(0, 8, 9), wide)).toBe(false);
    expect(defaultProtocolVersionMin(packProtocolVersion(0, 11, 5))).toBe(11264);
    for (let client = 0; client < 0x4000; client += 7) {
      const server = packProtocolVersion(0, 11, 2);
      const min = defaultProtocolVersionMin(server);
      expect(isProtocolCompatible(client, { max: server, min })).toBe(client >= min && client >> 10 <= server >> 10);
    }
  });

  it('past 1.0.0: a major bump is incompatible', () => {
    const window = { max: packProtocolVersion(2, 3, 0), min: packProtocolVersion(1, 0, 0) };
    expect(isProtocolCompatible(packProtocolVersion(2, 1, 9), window)).toBe(true);
    expect(isProtocolCompatible(packProtocolVersion(1, 9, 0), window)).toBe(false);
    expect(isProtocolCompatible(packProtocolVersion(3, 0, 0), window)).toBe(false);
  });
});
