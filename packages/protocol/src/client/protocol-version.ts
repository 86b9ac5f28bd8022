import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';

/**
 * The packed protocol version (connection-lifecycle.mdx; core/binary_protocol/src/version.rs):
 *
 *   bits 31..30 reserved (zero) │ 29..20 major │ 19..10 minor │ 9..0 patch
 *
 * Integer order equals semver order. Under 0.x the login gate is minor-scoped: accept a client
 * whose packed version is >= the server minimum and whose major.minor is <= the server's (patch
 * never changes the wire). Past 1.0.0 the gate follows strict semver (same major).
 */
export const COMPONENT_BITS = 10;
export const COMPONENT_MAX = (1 << COMPONENT_BITS) - 1;
const RESERVED_MASK = 0xc000_0000;

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

export function packProtocolVersion(major: number, minor: number, patch: number): number {
  for (const c of [major, minor, patch]) {
    assert(Number.isInteger(c) && c >= 0 && c <= COMPONENT_MAX, `semver component ${c} outside 0..1023`);
  }
  return ((major << (2 * COMPONENT_BITS)) | (minor << COMPONENT_BITS) | patch) >>> 0;
}

/** Unpacks a u32; the two reserved high bits must be zero. */
export function unpackProtocolVersion(packed: number): Decoded<SemVer> {
  if (!Number.isInteger(packed) || packed < 0 || packed > 0xffff_ffff) return fail('not_u32');
  if ((packed & RESERVED_MASK) !== 0) return fail('reserved_bits_set');
  return ok({
    major: (packed >>> (2 * COMPONENT_BITS)) & COMPONENT_MAX,
    minor: (packed >>> COMPONENT_BITS) & COMPONENT_MAX,
    patch: packed & COMPONENT_MAX,
  });
}

/** `major.minor.patch` (the reference `ProtocolVersion` Display; reserved bits ignored). */
export function formatProtocolVersion(packed: number): string {
  return `${(packed >>> (2 * COMPONENT_BITS)) & COMPONENT_MAX}.${(packed >>> COMPONENT_BITS) & COMPONENT_MAX}.${packed & COMPONENT_MAX}`;
}

/**
 * Parses `major.minor.patch[-pre][+build]` into the packed value; pre-release and build suffixes are
 * ignored ('0.10.1-edge.2' → pack(0,10,1), '10.0.0+build.5' → pack(10,0,0)). Each component is a
 * non-empty decimal run below 1024; anything else after the patch must start with '-' or '+'.
 */
export function parseProtocolVersion(text: string): Decoded<number> {
  const components: number[] = [];
  let i = 0;
  for (let part = 0; part < 3; part++) {
    if (part > 0) {
      if (text[i] !== '.') return fail(`expected_dot_after_${part === 1 ? 'major' : 'minor'}`);
      i++;
    }
    const start = i;
    let value = 0;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) {
      value = value * 10 + (text.charCodeAt(i) - 48);
      if (value > COMPONENT_MAX) return fail('component_too_large');
      i++;
    }
    if (i === start) return fail('expected_digit');
    components.push(value);
  }
  if (i < text.length && text[i] !== '-' && text[i] !== '+') return fail('trailing_characters');
  const [major, minor, patch] = components as [number, number, number];
  return ok(packProtocolVersion(major, minor, patch));
}

/** The version this codebase implements: 0.11.0. */
export const SHOAL_PROTOCOL_VERSION = packProtocolVersion(0, 11, 0);

/** The reference's default minimum: the current version with patch zeroed. */
export function defaultProtocolVersionMin(serverVersion: number): number {
  return (serverVersion & ~COMPONENT_MAX) >>> 0;
}

export const SHOAL_PROTOCOL_VERSION_MIN = defaultProtocolVersionMin(SHOAL_PROTOCOL_VERSION);

/** The server's accepted window; both ends are packed versions (max = the server's own). */
export interface ProtocolWindow {
  readonly max: number;
  readonly min: number;
}

export const SHOAL_PROTOCOL_WINDOW: ProtocolWindow = Object.freeze({ max: SHOAL_PROTOCOL_VERSION, min: SHOAL_PROTOCOL_VERSION_MIN });

/**
 * The login gate. Under 0.x (rust_test_values `protocol_version.compatibility`): accepted iff
 * `client >= min && (client >> 10) <= (max >> 10)`. For a server at 1.0.0 or later, strict semver:
 * additionally the client's major equals the server's (a major bump is incompatible).
 */
export function isProtocolCompatible(client: number, window: ProtocolWindow = SHOAL_PROTOCOL_WINDOW): boolean {
  if (!Number.isInteger(client) || client < 0 || client > 0xffff_ffff) return false;
  if ((client & RESERVED_MASK) !== 0) return false;
  if (client < window.min) return false;
  if (client >>> COMPONENT_BITS > window.max >>> COMPONENT_BITS) return false;
  const serverMajor = window.max >>> (2 * COMPONENT_BITS);
  if (serverMajor >= 1 && client >>> (2 * COMPONENT_BITS) !== serverMajor) return false;
  return true;
}
