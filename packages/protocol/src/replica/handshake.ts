/**
 * The replica handshake (replication-semantics.md §3, cluster.mdx "Handshake", vectors README
 * fact 1): three raw 256-byte frames before any consensus traffic.
 *
 *   dialer (lower id)                         acceptor (higher id)
 *     ReplicaHello     (14) nonce_d  ───────▶  checks command, cluster, directional rule
 *                     ◀─────── ReplicaChallenge (15) nonce_a, mac_a (direction 2), status
 *     ReplicaFinish    (16) mac_d (direction 1) ──▶ verifies mac_d, installs the connection
 *
 * Frame area (bytes 128..256): nonce 128..160, MAC 160..192, status byte 192, rest zero. All
 * three: size 256, checksum 0, checksum_body 0, view 0, cluster = sender's id, replica = sender.
 *
 * key = BLAKE3 derive_key("apache-iggy replica-auth v1 psk->mac-key", secret UTF-8 bytes)
 * mac = BLAKE3 keyed(key, T), T = the 143-byte transcript (`macTranscript`).
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { blake3DeriveKey, blake3Keyed } from '../hash/blake3.js';
import { Command } from './command.js';
import { encodeHeader } from './header-encode.js';
import {
  HANDSHAKE_LAYOUT,
  HEADER_SIZE,
  OFFSET_CLUSTER,
  OFFSET_COMMAND,
  OFFSET_REPLICA,
  OFFSET_SIZE,
} from './header-layout.js';
import { allZero, readU128Big, readU32, writeU128Big } from './little-endian.js';

/** Handshake statuses (byte 192 of a Challenge). Only 0..3 are ever sent; 4 and 5 are log labels. */
export const HandshakeStatus = Object.freeze({
  Ok: 0,
  UnknownCommand: 1,
  ClusterMismatch: 2,
  DirectionalRule: 3,
  AuthRequired: 4,
  MacMismatch: 5,
} as const);
export type HandshakeStatus = (typeof HandshakeStatus)[keyof typeof HandshakeStatus];
/** The largest status value a sender puts on the wire. */
export const HANDSHAKE_STATUS_SENT_MAX = 3;

/**
 * Dialer's reading of a Challenge status byte: 0 accepts; 2..5 reject with their name; 1 and
 * every undeclared byte reject as UnknownCommand.
 */
export function decodeHandshakeStatus(byte: number): { readonly accepted: boolean; readonly status: HandshakeStatus } {
  if (byte === HandshakeStatus.Ok) return { accepted: true, status: HandshakeStatus.Ok };
  if (byte >= HandshakeStatus.ClusterMismatch && byte <= HandshakeStatus.MacMismatch) {
    return { accepted: false, status: byte as HandshakeStatus };
  }
  return { accepted: false, status: HandshakeStatus.UnknownCommand };
}

export const MAC_KEY_CONTEXT = 'apache-iggy replica-auth v1 psk->mac-key';
export const MAC_DOMAIN_TAG = 'apache-iggy replica-auth v1';
export const TLS_EXPORTER_LABEL = 'iggy replica psk binding';
export const TLS_EXPORTER_SIZE = 32;
export const NONCE_SIZE = 32;
export const MAC_SIZE = 32;
export const MAC_KEY_SIZE = 32;
/** Configured secrets must be at least this long (checked by configuration, not here). */
export const SHARED_SECRET_MIN_BYTES = 32;

/** Who produced a MAC: the dialer (in Finish) or the acceptor (in Challenge). */
export const MacDirection = Object.freeze({ Dialer: 1, Acceptor: 2 } as const);
export type MacDirection = (typeof MacDirection)[keyof typeof MacDirection];

const utf8 = new TextEncoder();
const DOMAIN_TAG_BYTES = utf8.encode(MAC_DOMAIN_TAG);

// Transcript offsets (§3.5): tag 27 | cluster 16 | dialer 1 | acceptor 1 | nonce_d 32 |
// nonce_a 32 | mode 1 | exporter 32 | direction 1 = 143.
const T_CLUSTER = 27;
const T_DIALER = 43;
const T_ACCEPTOR = 44;
const T_NONCE_D = 45;
const T_NONCE_A = 77;
const T_MODE = 109;
const T_EXPORTER = 110;
const T_DIRECTION = 142;
export const MAC_TRANSCRIPT_SIZE = 143;

if (DOMAIN_TAG_BYTES.length !== T_CLUSTER || T_DIRECTION + 1 !== MAC_TRANSCRIPT_SIZE) {
  throw new Error('handshake: transcript layout broken');
}

/** The MAC key from a shared secret (UTF-8 bytes of the configured string, used as-is). */
export function deriveMacKey(sharedSecret: string | Uint8Array): Uint8Array {
  const material = typeof sharedSecret === 'string' ? utf8.encode(sharedSecret) : sharedSecret;
  return blake3DeriveKey(MAC_KEY_CONTEXT, material, MAC_KEY_SIZE);
}

export interface MacTranscriptInput {
  readonly cluster: bigint;
  /** The lower replica id (the dialer). */
  readonly dialerId: number;
  /** The higher replica id (the acceptor). */
  readonly acceptorId: number;
  readonly nonceD: Uint8Array;
  readonly nonceA: Uint8Array;
  /** The 32-byte TLS exporter (mode 1), or null in plaintext (mode 0, exporter zeros). */
  readonly tlsExporter: Uint8Array | null;
  readonly direction: MacDirection;
}

/** The exact 143 bytes that are MACed (§3.5). */
export function macTranscript(input: MacTranscriptInput): Uint8Array {
  assert(input.cluster >= 0n && input.cluster < 1n << 128n, 'transcript: cluster not a u128');
  assert(Number.isInteger(input.dialerId) && input.dialerId >= 0 && input.dialerId <= 0xff, 'transcript: dialer id');
  assert(Number.isInteger(input.acceptorId) && input.acceptorId >= 0 && input.acceptorId <= 0xff, 'transcript: acceptor id');
  assert(input.nonceD.length === NONCE_SIZE && input.nonceA.length === NONCE_SIZE, 'transcript: nonces are 32 bytes');
  assert(input.tlsExporter === null || input.tlsExporter.length === TLS_EXPORTER_SIZE, 'transcript: exporter is 32 bytes');
  assert(input.direction === MacDirection.Dialer || input.direction === MacDirection.Acceptor, 'transcript: direction');
  const t = new Uint8Array(MAC_TRANSCRIPT_SIZE);
  t.set(DOMAIN_TAG_BYTES, 0);
  writeU128Big(t, T_CLUSTER, input.cluster);
  t[T_DIALER] = input.dialerId;
  t[T_ACCEPTOR] = input.acceptorId;
  t.set(input.nonceD, T_NONCE_D);
  t.set(input.nonceA, T_NONCE_A);
  t[T_MODE] = input.tlsExporter === null ? 0 : 1;
  if (input.tlsExporter !== null) t.set(input.tlsExporter, T_EXPORTER);
  t[T_DIRECTION] = input.direction;
  return t;
}

/** BLAKE3 keyed MAC of the transcript (32 bytes). */
export function handshakeMac(key: Uint8Array, input: MacTranscriptInput): Uint8Array {
  assert(key.length === MAC_KEY_SIZE, 'handshake MAC key must be 32 bytes');
  return blake3Keyed(key, macTranscript(input), MAC_SIZE);
}

/** Compares two byte strings in time that depends only on their lengths. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** The current key, and during a rotation window the retiring one. */
export interface MacKeys {
  readonly current: Uint8Array;
  readonly previous?: Uint8Array;
}

/**
 * Accepts `mac` if it matches the MAC under the current key or, when configured, the previous
 * key (§3.5 rotation). Both candidates are always computed and compared in constant time.
 */
export function verifyHandshakeMac(keys: MacKeys, input: MacTranscriptInput, mac: Uint8Array): boolean {
  const transcript = macTranscript(input);
  const current = constantTimeEqual(blake3Keyed(keys.current, transcript, MAC_SIZE), mac);
  const previous = keys.previous !== undefined && constantTimeEqual(blake3Keyed(keys.previous, transcript, MAC_SIZE), mac);
  return current || previous;
}

// ---------------------------------------------------------------------------------------------
// Frames.

const ZERO_32 = new Uint8Array(32);

function handshakeFrame(
  command: 14 | 15 | 16,
  cluster: bigint,
  replica: number,
  nonce: Uint8Array,
  mac: Uint8Array,
  status: number,
): Uint8Array {
  return encodeHeader(command, { cluster, size: HEADER_SIZE, view: 0, replica, nonce, mac, status });
}

/** ReplicaHello: nonce_d at 128..160 (all zero with auth disabled). */
export function encodeReplicaHello(fields: { cluster: bigint; replica: number; nonce?: Uint8Array }): Uint8Array {
  return handshakeFrame(Command.ReplicaHello, fields.cluster, fields.replica, fields.nonce ?? ZERO_32, ZERO_32, 0);
}

/** ReplicaChallenge, status 0: nonce_a and mac_a. */
export function encodeReplicaChallenge(fields: { cluster: bigint; replica: number; nonce: Uint8Array; mac: Uint8Array }): Uint8Array {
  return handshakeFrame(Command.ReplicaChallenge, fields.cluster, fields.replica, fields.nonce, fields.mac, 0);
}

/** A reject ReplicaChallenge: status only (1..3), nonce and MAC zero. */
export function encodeReplicaChallengeReject(fields: { cluster: bigint; replica: number; status: number }): Uint8Array {
  assert(
    fields.status >= HandshakeStatus.UnknownCommand && fields.status <= HANDSHAKE_STATUS_SENT_MAX,
    'only statuses 1..3 are sent',
  );
  return handshakeFrame(Command.ReplicaChallenge, fields.cluster, fields.replica, ZERO_32, ZERO_32, fields.status);
}

/** ReplicaFinish: mac_d at 160..192, nonce area zero. */
export function encodeReplicaFinish(fields: { cluster: bigint; replica: number; mac: Uint8Array }): Uint8Array {
  return handshakeFrame(Command.ReplicaFinish, fields.cluster, fields.replica, ZERO_32, fields.mac, 0);
}

export interface HandshakeFrame {
  readonly command: 14 | 15 | 16;
  readonly cluster: bigint;
  readonly replica: number;
  readonly size: number;
  /** Views into the input. */
  readonly nonce: Uint8Array;
  readonly mac: Uint8Array;
  readonly status: number;
}

const NONCE_AT = HANDSHAKE_LAYOUT.nonce.offset;
const MAC_AT = HANDSHAKE_LAYOUT.mac.offset;
const STATUS_AT = HANDSHAKE_LAYOUT.status.offset;

/**
 * Parses a handshake frame: the buffer holds the 256-byte header, `size >= 256` (framing), and
 * the command is 14, 15 or 16. Nothing else is judged here (see the `check*` functions).
 */
export function parseHandshakeFrame(bytes: Uint8Array, offset = 0): Decoded<HandshakeFrame> {
  if (!(offset >= 0) || bytes.length - offset < HEADER_SIZE) return fail('truncated_header');
  const size = readU32(bytes, offset + OFFSET_SIZE);
  if (size < HEADER_SIZE) return fail('size_below_header');
  const command = bytes[offset + OFFSET_COMMAND] as number;
  if (command !== Command.ReplicaHello && command !== Command.ReplicaChallenge && command !== Command.ReplicaFinish) {
    return fail('not_handshake_command');
  }
  return ok({
    command,
    cluster: readU128Big(bytes, offset + OFFSET_CLUSTER),
    replica: bytes[offset + OFFSET_REPLICA] as number,
    size,
    nonce: bytes.subarray(offset + NONCE_AT, offset + NONCE_AT + NONCE_SIZE),
    mac: bytes.subarray(offset + MAC_AT, offset + MAC_AT + MAC_SIZE),
    status: bytes[offset + STATUS_AT] as number,
  });
}

// ---------------------------------------------------------------------------------------------
// The three protocol checks (§3.7), as pure functions of the received bytes.

export type HandshakeVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly status: HandshakeStatus;
      /** True when the acceptor answers with a reject Challenge before closing. */
      readonly sendReject: boolean;
    };

const ACCEPT: HandshakeVerdict = Object.freeze({ ok: true });

function refuse(status: HandshakeStatus, sendReject: boolean): HandshakeVerdict {
  return { ok: false, status, sendReject };
}

export interface HelloCheck {
  readonly cluster: bigint;
  readonly selfId: number;
  readonly replicaCount: number;
  readonly authEnabled: boolean;
}

/**
 * Acceptor, step 2: judges a received Hello. With auth on, a reject Challenge may be sent only
 * when the Hello's nonce area is non-zero; a zero nonce is refused silently (AuthRequired).
 * With auth off, every failure closes silently.
 */
export function checkHello(bytes: Uint8Array, offset: number, check: HelloCheck): HandshakeVerdict {
  if (!(offset >= 0) || bytes.length - offset < HEADER_SIZE) return refuse(HandshakeStatus.UnknownCommand, false);
  const nonceZero = allZero(bytes, offset + NONCE_AT, offset + NONCE_AT + NONCE_SIZE);
  const nackable = check.authEnabled && !nonceZero;
  if (bytes[offset + OFFSET_COMMAND] !== Command.ReplicaHello) return refuse(HandshakeStatus.UnknownCommand, nackable);
  if (readU128Big(bytes, offset + OFFSET_CLUSTER) !== check.cluster) return refuse(HandshakeStatus.ClusterMismatch, nackable);
  const peer = bytes[offset + OFFSET_REPLICA] as number;
  if (peer >= check.replicaCount || peer >= check.selfId) return refuse(HandshakeStatus.DirectionalRule, nackable);
  if (check.authEnabled && nonceZero) return refuse(HandshakeStatus.AuthRequired, false);
  return ACCEPT;
}

export interface ChallengeCheck {
  readonly keys: MacKeys;
  readonly cluster: bigint;
  readonly dialerId: number;
  readonly acceptorId: number;
  readonly nonceD: Uint8Array;
  readonly tlsExporter: Uint8Array | null;
}

/**
 * Dialer, step 4: the frame must be a Challenge; a non-zero status is a reject (decoded by
 * `decodeHandshakeStatus`); on status 0 mac_a must verify. The Challenge's `cluster` is not checked.
 */
export function checkChallenge(bytes: Uint8Array, offset: number, check: ChallengeCheck): HandshakeVerdict {
  if (!(offset >= 0) || bytes.length - offset < HEADER_SIZE) return refuse(HandshakeStatus.UnknownCommand, false);
  if (bytes[offset + OFFSET_COMMAND] !== Command.ReplicaChallenge) return refuse(HandshakeStatus.UnknownCommand, false);
  const status = decodeHandshakeStatus(bytes[offset + STATUS_AT] as number);
  if (!status.accepted) return refuse(status.status, false);
  const input: MacTranscriptInput = {
    cluster: check.cluster,
    dialerId: check.dialerId,
    acceptorId: check.acceptorId,
    nonceD: check.nonceD,
    nonceA: bytes.subarray(offset + NONCE_AT, offset + NONCE_AT + NONCE_SIZE),
    tlsExporter: check.tlsExporter,
    direction: MacDirection.Acceptor,
  };
  const mac = bytes.subarray(offset + MAC_AT, offset + MAC_AT + MAC_SIZE);
  return verifyHandshakeMac(check.keys, input, mac) ? ACCEPT : refuse(HandshakeStatus.MacMismatch, false);
}

export interface FinishCheck extends ChallengeCheck {
  readonly nonceA: Uint8Array;
}

/** Acceptor, step 6: the frame must be a Finish whose mac_d verifies; failures close silently. */
export function checkFinish(bytes: Uint8Array, offset: number, check: FinishCheck): HandshakeVerdict {
  if (!(offset >= 0) || bytes.length - offset < HEADER_SIZE) return refuse(HandshakeStatus.UnknownCommand, false);
  if (bytes[offset + OFFSET_COMMAND] !== Command.ReplicaFinish) return refuse(HandshakeStatus.UnknownCommand, false);
  const input: MacTranscriptInput = {
    cluster: check.cluster,
    dialerId: check.dialerId,
    acceptorId: check.acceptorId,
    nonceD: check.nonceD,
    nonceA: check.nonceA,
    tlsExporter: check.tlsExporter,
    direction: MacDirection.Dialer,
  };
  const mac = bytes.subarray(offset + MAC_AT, offset + MAC_AT + MAC_SIZE);
  return verifyHandshakeMac(check.keys, input, mac) ? ACCEPT : refuse(HandshakeStatus.MacMismatch, false);
}
