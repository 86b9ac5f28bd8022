import { ByteReader } from '../codec/byte-reader.js';
import type { ByteWriter } from '../codec/byte-writer.js';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { decodeExact, decodePrefix, encodeWith } from '../codec/body-codec.js';
import { CommandCode } from './command-code.js';
import {
  readLongString, readName, readShortString, writeLongString, writeName, writeShortString,
} from './encodings/name.js';
import { parseResultSection } from './result-section.js';
import type { BodyParts } from './commands/command-codec.js';

/**
 * Login-register (connection-lifecycle.mdx; core/binary_protocol/src/version.rs). Both register
 * bodies start with ClientVersionInfo so the server gates on the version before credentials:
 *
 *   ClientVersionInfo  [protocol_version: u32][sdk_name: Name][sdk_version: Name]
 *   LOGIN_REGISTER 40  [ClientVersionInfo][username: Name][password_len: u8][password]
 *                      [context_len: u32][context, only when context_len > 0]
 *   WITH_PAT 45        [ClientVersionInfo][token: Name][context_len: u32][context]
 *   reply body         [user_id: u32][session: u64][server_protocol_version: u32][server_version: Name]
 *
 * The legacy shapes (38 LOGIN_USER, 44 LOGIN_WITH_PERSONAL_ACCESS_TOKEN) decode so a server can
 * recognise them; the server answers both with a MalformedLogin eviction. Their layouts are the
 * pre-register ones (chosen from the older core/binary_protocol/src/requests/users/login_register.rs
 * shape): [username: Name][password: u8 string][version: u32 string][context: u32 string] and
 * [token: Name].
 */
export interface ClientVersionInfo {
  readonly protocolVersion: number;
  readonly sdkName: string;
  readonly sdkVersion: string;
}

export interface LoginRegisterRequest {
  readonly versionInfo: ClientVersionInfo;
  readonly username: string;
  readonly password: string;
  /** Empty string ⇔ context_len = 0. */
  readonly context: string;
}

export interface LoginRegisterWithPatRequest {
  readonly versionInfo: ClientVersionInfo;
  readonly token: string;
  readonly context: string;
}

export interface LoginReply {
  readonly userId: number;
  readonly session: bigint;
  readonly serverProtocolVersion: number;
  readonly serverVersion: string;
}

export interface LegacyLoginUserRequest {
  readonly username: string;
  readonly password: string;
  readonly version: string;
  readonly context: string;
}

export interface LegacyLoginWithPatRequest {
  readonly token: string;
}

export function writeClientVersionInfo(w: ByteWriter, info: ClientVersionInfo): void {
  w.u32(info.protocolVersion);
  writeName(w, info.sdkName);
  writeName(w, info.sdkVersion);
}

export function readClientVersionInfo(r: ByteReader): ClientVersionInfo {
  const protocolVersion = r.u32('protocol_version');
  const sdkName = readName(r, 'sdk_name');
  const sdkVersion = readName(r, 'sdk_version');
  return { protocolVersion, sdkName, sdkVersion };
}

export function encodeClientVersionInfo(info: ClientVersionInfo): Uint8Array {
  return encodeWith((w) => writeClientVersionInfo(w, info));
}

/** Exactly a ClientVersionInfo (no trailing bytes). */
export function decodeClientVersionInfo(bytes: Uint8Array): Decoded<ClientVersionInfo> {
  return decodeExact(bytes, readClientVersionInfo);
}

/**
 * The version prefix of a register body and where it ends: what the server gates on before it
 * touches credentials. A failure here is eviction reason 15 (MalformedLogin).
 */
export function decodeClientVersionPrefix(body: Uint8Array): Decoded<{ readonly info: ClientVersionInfo; readonly length: number }> {
  const r = new ByteReader(body);
  const info = readClientVersionInfo(r);
  return r.reason !== null ? fail(r.reason) : ok({ info, length: r.offset });
}

/** `[username:Name][password:u8 string][context:u32 string]` after the version prefix. */
export const LOGIN_REGISTER_BODY: BodyParts<LoginRegisterRequest> = {
  write: (w, req) => {
    writeClientVersionInfo(w, req.versionInfo);
    writeName(w, req.username);
    writeShortString(w, req.password);
    writeLongString(w, req.context);
  },
  read: (r) => ({
    versionInfo: readClientVersionInfo(r),
    username: readName(r, 'username'),
    password: readShortString(r, 'password'),
    context: readLongString(r, 'context'),
  }),
};

/** `[token:Name][context:u32 string]` after the version prefix. */
export const LOGIN_REGISTER_WITH_PAT_BODY: BodyParts<LoginRegisterWithPatRequest> = {
  write: (w, req) => {
    writeClientVersionInfo(w, req.versionInfo);
    writeName(w, req.token);
    writeLongString(w, req.context);
  },
  read: (r) => ({ versionInfo: readClientVersionInfo(r), token: readName(r, 'token'), context: readLongString(r, 'context') }),
};

export const LOGIN_REPLY_BODY: BodyParts<LoginReply> = {
  write: (w, reply) => {
    w.u32(reply.userId).u64(reply.session).u32(reply.serverProtocolVersion);
    writeName(w, reply.serverVersion);
  },
  read: (r) => ({
    userId: r.u32('user_id'),
    session: r.u64('session'),
    serverProtocolVersion: r.u32('server_protocol_version'),
    serverVersion: readName(r, 'server_version'),
  }),
};

export const LEGACY_LOGIN_USER_BODY: BodyParts<LegacyLoginUserRequest> = {
  write: (w, req) => {
    writeName(w, req.username);
    writeShortString(w, req.password);
    writeLongString(w, req.version);
    writeLongString(w, req.context);
  },
  read: (r) => ({
    username: readName(r, 'username'),
    password: readShortString(r, 'password'),
    version: readLongString(r, 'version'),
    context: readLongString(r, 'context'),
  }),
};

export const LEGACY_LOGIN_WITH_PAT_BODY: BodyParts<LegacyLoginWithPatRequest> = {
  write: (w, req) => writeName(w, req.token),
  read: (r) => ({ token: readName(r, 'token') }),
};

export function encodeLoginRegisterRequest(req: LoginRegisterRequest): Uint8Array {
  return encodeWith((w) => LOGIN_REGISTER_BODY.write(w, req));
}

/** Trailing bytes are ignored, as the reference's `decode_after_prefix` ignores them (server dispatch.rs). */
export function decodeLoginRegisterRequest(body: Uint8Array): Decoded<LoginRegisterRequest> {
  return decodePrefix(body, LOGIN_REGISTER_BODY.read);
}

export function encodeLoginRegisterWithPatRequest(req: LoginRegisterWithPatRequest): Uint8Array {
  return encodeWith((w) => LOGIN_REGISTER_WITH_PAT_BODY.write(w, req));
}

export function decodeLoginRegisterWithPatRequest(body: Uint8Array): Decoded<LoginRegisterWithPatRequest> {
  return decodePrefix(body, LOGIN_REGISTER_WITH_PAT_BODY.read);
}

/**
 * Register requests ride operation 1 with no code in the header (client_frames.json: bytes 196..200
 * are zero), so the code comes from the body: whichever of the two shapes consumes it exactly,
 * else (trailing bytes, which the reference ignores) whichever decodes from its start, password
 * first as the reference tries it. A body both shapes accept (possible only with a crafted
 * context) is reported as LOGIN_REGISTER.
 */
export function registerCodeOfBody(body: Uint8Array): Decoded<40 | 45> {
  if (decodeExact(body, LOGIN_REGISTER_BODY.read).ok) return ok(CommandCode.LoginRegister);
  if (decodeExact(body, LOGIN_REGISTER_WITH_PAT_BODY.read).ok) return ok(CommandCode.LoginRegisterWithPat);
  if (decodeLoginRegisterRequest(body).ok) return ok(CommandCode.LoginRegister);
  if (decodeLoginRegisterWithPatRequest(body).ok) return ok(CommandCode.LoginRegisterWithPat);
  const prefix = decodeClientVersionPrefix(body);
  return fail(prefix.ok ? 'register_body_undecodable' : `malformed_login_${prefix.reason}`);
}

export function encodeLoginReply(reply: LoginReply): Uint8Array {
  return encodeWith((w) => LOGIN_REPLY_BODY.write(w, reply));
}

/** The login reply payload (after the result section). */
export function decodeLoginReply(payload: Uint8Array): Decoded<LoginReply> {
  return decodeExact(payload, LOGIN_REPLY_BODY.read);
}

/**
 * A whole Register reply body as the SDKs read it: non-empty bodies carry a result section (the
 * server builds `[count=0][payload]`; vectors README disagreement 1), an empty body is a terminal
 * failure. Returns the login payload or the reason / committed error code.
 */
export function decodeLoginReplyBody(body: Uint8Array): Decoded<LoginReply> {
  if (body.length === 0) return fail('login_reply_empty');
  const section = parseResultSection(body);
  if (!section.ok) return section;
  if (section.value.code !== 0) return fail(`login_rejected_${section.value.code}`);
  return decodeLoginReply(section.value.payload);
}

export function encodeLegacyLoginUserRequest(req: LegacyLoginUserRequest): Uint8Array {
  return encodeWith((w) => LEGACY_LOGIN_USER_BODY.write(w, req));
}

export function decodeLegacyLoginUserRequest(body: Uint8Array): Decoded<LegacyLoginUserRequest> {
  return decodeExact(body, LEGACY_LOGIN_USER_BODY.read);
}

export function encodeLegacyLoginWithPatRequest(req: LegacyLoginWithPatRequest): Uint8Array {
  return encodeWith((w) => LEGACY_LOGIN_WITH_PAT_BODY.write(w, req));
}

export function decodeLegacyLoginWithPatRequest(body: Uint8Array): Decoded<LegacyLoginWithPatRequest> {
  return decodeExact(body, LEGACY_LOGIN_WITH_PAT_BODY.read);
}
