/**
 * Checker for `replica_frames.json` (shared/vectors/README.md): every entry of `frames[]` is
 * decoded field by field, re-encoded from its listed fields, its seal / identity / body seal
 * verified, re-sealed from scratch, and run through the replica-plane validator (or the
 * handshake checks for commands 14..16); every entry of `negative[]` must be refused by
 * `validateHeader`. Also exports the small helpers the other replica-plane checkers share.
 */
import { fromHex, toHex } from '@shoal/stdx';
import {
  Command,
  type FieldSpec,
  type FieldValue,
  checkChallenge,
  checkFinish,
  checkHello,
  decodeHandshakeStatus,
  decodeHeaderFields,
  decodeManifest,
  decodeSuffix,
  deriveMacKey,
  encodeHeader,
  fieldsInOrder,
  handshakeMac,
  isHandshakeCommand,
  layoutOf,
  MacDirection,
  macTranscript,
  parseHandshakeFrame,
  prepareIdentityOf,
  sealHeader,
  validateHeader,
  verifyArtifact,
  verifyBodySeal,
  verifyFrameSeal,
  verifyPrepareIdentity,
  type CommandValue,
  type EncodeFieldsOfCommand,
  type MacTranscriptInput,
} from '../../src/replica/index.js';
import { HEADER_SIZE } from '../../src/replica/header-layout.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

// ---------------------------------------------------------------------------------------------
// Shared helpers (also used by the other replica-plane checkers).

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list under `key`, or an empty list when absent / not a list. */
export function listOf(doc: unknown, key: string): unknown[] {
  if (!isRecord(doc)) return [];
  const value = doc[key];
  return Array.isArray(value) ? value : [];
}

export function str(entry: Json, key: string): string {
  const value = entry[key];
  if (typeof value !== 'string') throw new Error(`${key}: expected a string`);
  return value;
}

export function num(entry: Json, key: string): number {
  const value = entry[key];
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  throw new Error(`${key}: expected a number`);
}

/** u64/u128 values are decimal strings in the vectors; small ones may be numbers. */
export function big(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) return BigInt(value);
  throw new Error(`${what}: expected an integer, got ${JSON.stringify(value)}`);
}

export function entryName(entry: unknown, index: number): string {
  return isRecord(entry) && typeof entry['name'] === 'string' ? entry['name'] : String(index);
}

/** Vector field names that differ from ours (after snake_case → camelCase). */
const FIELD_ALIASES: Readonly<Record<string, string>> = {
  commandCode: 'code',
  nonReplicatedCode: 'code',
  reasonCode: 'reason',
};

export function camel(snake: string): string {
  const name = snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return FIELD_ALIASES[name] ?? name;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** First differing byte, for failure messages. */
export function firstDifference(actual: Uint8Array, expected: Uint8Array): string {
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (actual[i] !== expected[i]) return `byte ${i}: got ${actual[i]}, expected ${expected[i]}`;
  }
  return `length ${actual.length} vs ${expected.length}`;
}

/** Joins the problems found, or null. */
export function problems(list: (string | null)[]): string | null {
  const found = list.filter((p): p is string => p !== null);
  return found.length === 0 ? null : found.join('; ');
}

/** Parses a vector field value by the kind our layout gives it. */
export function parseFieldValue(spec: FieldSpec, value: unknown, what: string): FieldValue {
  switch (spec.kind) {
    case 'u8':
    case 'u32': {
      const n = Number(big(value, what));
      if (!Number.isSafeInteger(n)) throw new Error(`${what}: out of range`);
      return n;
    }
    case 'u64':
    case 'u128':
      return big(value, what);
    case 'bytes':
      if (typeof value !== 'string') throw new Error(`${what}: expected hex`);
      return fromHex(value);
    case 'reserved':
      throw new Error(`${what}: reserved bytes have no value`);
  }
}

export function sameValue(a: FieldValue, b: FieldValue): boolean {
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && bytesEqual(a, b);
  }
  return a === b;
}

export function show(value: FieldValue): string {
  return value instanceof Uint8Array ? toHex(value) : String(value);
}

// ---------------------------------------------------------------------------------------------
// One frame.

/**
 * Builds encoder fields from a vector's `fields`: each layout field from the vector (by its
 * snake_case name) or zero when the vector omits it. Vector fields our layout lacks are returned
 * separately; a non-zero one also shows up as a byte mismatch of the re-encode.
 */
function encoderFields(command: number, fields: Json): { values: Record<string, FieldValue>; unknown: string[] } {
  const layout = layoutOf(command);
  if (layout === undefined) throw new Error(`command ${command} has no layout`);
  const values: Record<string, FieldValue> = {};
  const known = new Set<string>();
  for (const [name, spec] of fieldsInOrder(layout)) {
    if (spec.kind === 'reserved' || name === 'command') continue;
    known.add(name);
    const snake = Object.keys(fields).find((key) => camel(key) === name);
    values[name] =
      snake !== undefined
        ? parseFieldValue(spec, fields[snake], name)
        : spec.kind === 'bytes'
          ? new Uint8Array(spec.size)
          : spec.kind === 'u64' || spec.kind === 'u128'
            ? 0n
            : 0;
  }
  const unknown = Object.keys(fields).filter((key) => !known.has(camel(key)) && camel(key) !== 'command');
  return { values, unknown };
}

function compareDecodedFields(bytes: Uint8Array, fields: Json): string | null {
  const decoded = decodeHeaderFields(bytes, 0);
  if (!decoded.ok) return `decode: ${decoded.reason}`;
  const layout = layoutOf(decoded.value.command);
  if (layout === undefined) return 'no layout';
  const out: (string | null)[] = [];
  for (const [key, expectedRaw] of Object.entries(fields)) {
    const name = camel(key);
    const spec = layout[name];
    if (spec === undefined || spec.kind === 'reserved') continue; // reported by the re-encode
    const expected = parseFieldValue(spec, expectedRaw, key);
    const actual = decoded.value.fields[name];
    if (actual === undefined || !sameValue(actual, expected)) {
      out.push(`field ${key}: expected ${show(expected)}, got ${actual === undefined ? 'nothing' : show(actual)}`);
    }
  }
  return problems(out);
}

function checkSeals(bytes: Uint8Array, entry: Json): string | null {
  const kind = typeof entry['checksum_kind'] === 'string' ? entry['checksum_kind'] : null;
  const out: (string | null)[] = [];
  if (kind === 'frame_seal') {
    if (!verifyFrameSeal(bytes, 0)) out.push('frame seal does not verify');
    const input = entry['frame_seal_input_hex'];
    if (typeof input === 'string' && toHex(bytes.subarray(16, HEADER_SIZE)) !== input) {
      out.push('frame_seal_input_hex is not header bytes 16..256');
    }
  } else if (kind === 'prepare_identity') {
    const identity = prepareIdentityOf(bytes, 0);
    const listed = entry['identity_checksum'];
    if (listed !== undefined) out.push(expectEqual('identity_checksum', identity, big(listed, 'identity_checksum')));
    if (!verifyPrepareIdentity(bytes, 0)) out.push('prepare identity does not verify');
  } else if (kind === 'none') {
    if (!bytes.subarray(0, 16).every((b) => b === 0)) out.push('checksum should be zero');
  }
  if (!verifyBodySeal(bytes, 0)) out.push('body seal does not verify');
  if (kind === 'frame_seal' || kind === 'prepare_identity' || kind === 'none') {
    // Sender rules: re-deriving checksum_body and the seal from the other fields gives the frame back.
    const resealed = sealHeader(bytes.slice(), 0);
    if (!bytesEqual(resealed, bytes)) out.push(`re-sealing differs: ${firstDifference(resealed, bytes)}`);
  }
  return problems(out);
}

function transcriptInput(inputs: Json, direction: 1 | 2): MacTranscriptInput {
  const binding = inputs['channel_binding'];
  const exporterHex = inputs['tls_exporter_hex'];
  const tls = binding !== undefined ? binding !== 'plaintext' : inputs['mode'] === 1;
  return {
    cluster: big(inputs['cluster'], 'cluster'),
    dialerId: num(inputs, 'dialer_id'),
    acceptorId: num(inputs, 'acceptor_id'),
    nonceD: fromHex(str(inputs, 'nonce_d_hex')),
    nonceA: fromHex(str(inputs, 'nonce_a_hex')),
    tlsExporter: tls ? (typeof exporterHex === 'string' ? fromHex(exporterHex) : new Uint8Array(32)) : null,
    direction,
  };
}

function checkHandshakeFrame(bytes: Uint8Array, entry: Json): string | null {
  const parsed = parseHandshakeFrame(bytes, 0);
  if (!parsed.ok) return `parseHandshakeFrame: ${parsed.reason}`;
  const frame = parsed.value;
  const out: (string | null)[] = [];
  if (frame.command === Command.ReplicaChallenge && frame.status !== 0) {
    const status = decodeHandshakeStatus(frame.status);
    if (status.accepted) out.push('a non-zero status must read as a reject');
  }
  const inputs = entry['handshake_inputs'];
  if (!isRecord(inputs)) return problems(out);
  const secret = inputs['shared_secret_utf8'];
  const key = typeof secret === 'string' ? deriveMacKey(secret) : fromHex(str(inputs, 'mac_key_hex'));
  if (typeof inputs['mac_key_hex'] === 'string') out.push(expectEqual('mac key', toHex(key), inputs['mac_key_hex']));
  const keys = { current: key };
  const base = transcriptInput(inputs, MacDirection.Dialer);
  const cluster = base.cluster;
  if (frame.command === Command.ReplicaHello) {
    out.push(expectEqual('nonce_d', toHex(frame.nonce), toHex(base.nonceD)));
    const verdict = checkHello(bytes, 0, {
      cluster,
      selfId: base.acceptorId,
      replicaCount: Math.max(base.acceptorId, base.dialerId) + 1,
      authEnabled: true,
    });
    if (!verdict.ok) out.push(`checkHello refused with status ${verdict.status}`);
  } else if (frame.command === Command.ReplicaChallenge && frame.status !== 0) {
    // A reject carries no nonce and no MAC.
    if (!frame.nonce.every((b) => b === 0) || !frame.mac.every((b) => b === 0)) out.push('a reject Challenge must carry no nonce or MAC');
  } else if (frame.command === Command.ReplicaChallenge) {
    const direction = MacDirection.Acceptor;
    const input = { ...base, direction };
    const transcript = entry['mac_transcript_hex'];
    if (typeof transcript === 'string') out.push(expectEqual('transcript', toHex(macTranscript(input)), transcript));
    out.push(expectEqual('mac_a', toHex(frame.mac), toHex(handshakeMac(key, input))));
    out.push(expectEqual('nonce_a', toHex(frame.nonce), toHex(base.nonceA)));
    const verdict = checkChallenge(bytes, 0, { keys, cluster, dialerId: base.dialerId, acceptorId: base.acceptorId, nonceD: base.nonceD, tlsExporter: base.tlsExporter });
    if (!verdict.ok) out.push(`checkChallenge refused with status ${verdict.status}`);
  } else {
    const input = { ...base, direction: MacDirection.Dialer };
    const transcript = entry['mac_transcript_hex'];
    if (typeof transcript === 'string') out.push(expectEqual('transcript', toHex(macTranscript(input)), transcript));
    out.push(expectEqual('mac_d', toHex(frame.mac), toHex(handshakeMac(key, input))));
    const verdict = checkFinish(bytes, 0, { keys, cluster, dialerId: base.dialerId, acceptorId: base.acceptorId, nonceD: base.nonceD, nonceA: base.nonceA, tlsExporter: base.tlsExporter });
    if (!verdict.ok) out.push(`checkFinish refused with status ${verdict.status}`);
  }
  return problems(out);
}

function checkExtras(bytes: Uint8Array, entry: Json): string | null {
  const out: (string | null)[] = [];
  const ops = entry['suffix_ops_in_order'];
  if (Array.isArray(ops)) {
    const suffix = decodeSuffix(bytes, 0);
    if (!suffix.ok) out.push(`decodeSuffix: ${suffix.reason}`);
    else out.push(expectEqual('suffix ops', suffix.value.map((e) => e.op.toString()).join(','), ops.map((o) => big(o, 'op').toString()).join(',')));
  }
  const manifestEntries = entry['manifest_entries'];
  if (Array.isArray(manifestEntries)) {
    const manifest = decodeManifest(bytes.subarray(HEADER_SIZE));
    if (!manifest.ok) out.push(`manifest body: ${manifest.reason}`);
    else {
      out.push(expectEqual('manifest entry count', manifest.value.entries.length, manifestEntries.length));
      manifestEntries.forEach((raw, i) => {
        const got = manifest.value.entries[i];
        if (!isRecord(raw) || got === undefined) return;
        out.push(expectEqual(`manifest[${i}].kind`, got.kind, num(raw, 'kind')));
        out.push(expectEqual(`manifest[${i}].frontier`, got.frontier, big(raw['frontier'], 'frontier')));
        out.push(expectEqual(`manifest[${i}].len`, got.len, big(raw['len'], 'len')));
        out.push(expectEqual(`manifest[${i}].checksum`, got.checksum, big(raw['checksum'], 'checksum')));
      });
      const artifacts = entry['artifacts_hex'];
      if (Array.isArray(artifacts)) {
        artifacts.forEach((hex, i) => {
          const described = manifest.value.entries[i];
          if (typeof hex !== 'string' || described === undefined) return;
          const reason = verifyArtifact(described, fromHex(hex));
          if (reason !== null) out.push(`artifact ${i}: ${reason}`);
        });
      }
    }
  }
  return problems(out);
}

function checkFrame(entry: unknown): string | null {
  if (!isRecord(entry)) return 'entry is not an object';
  const bytes = fromHex(str(entry, 'hex'));
  if (bytes.length < HEADER_SIZE) return `frame shorter than ${HEADER_SIZE} bytes`;
  const command = num(entry, 'command');
  const fields = isRecord(entry['fields']) ? entry['fields'] : {};
  const out: (string | null)[] = [];
  out.push(expectEqual('command byte', bytes[60], command));
  const size = (bytes[48] as number) | ((bytes[49] as number) << 8) | ((bytes[50] as number) << 16) | ((bytes[51] as number) << 24);
  out.push(expectEqual('size vs hex length', size >>> 0, bytes.length));
  if (typeof entry['body_hex'] === 'string') out.push(expectEqual('body', toHex(bytes.subarray(HEADER_SIZE)), entry['body_hex']));
  if (entry['body_len'] !== undefined) out.push(expectEqual('body_len', bytes.length - HEADER_SIZE, num(entry, 'body_len')));

  // Decode every listed field.
  out.push(compareDecodedFields(bytes, fields));

  // Re-encode from the listed fields, then append the body.
  const { values } = encoderFields(command, fields);
  const header = encodeHeader(command as CommandValue, values as unknown as EncodeFieldsOfCommand<CommandValue>);
  const reencoded = new Uint8Array(bytes.length);
  reencoded.set(header, 0);
  reencoded.set(bytes.subarray(HEADER_SIZE), HEADER_SIZE);
  if (!bytesEqual(reencoded, bytes)) out.push(`re-encode from fields differs: ${firstDifference(reencoded, bytes)}`);

  out.push(checkSeals(bytes, entry));

  // The replica plane's verdict.
  const verdict = validateHeader(bytes, 0);
  const expectation = entry['expect_on_replica_plane'];
  // Without an explicit expectation: reserved (0..4) and client-bound (8, 13) commands are
  // refused on the replica plane (§1.2 step 2); everything else must pass.
  const refusedByClass = command <= Command.PongClient || command === Command.Reply || command === Command.Eviction;
  const mustReject = typeof expectation === 'string' ? expectation.startsWith('reject') : refusedByClass;
  if (isHandshakeCommand(command)) {
    if (verdict === null) out.push('validateHeader accepted a handshake frame after the handshake');
    out.push(checkHandshakeFrame(bytes, entry));
  } else if (mustReject) {
    if (verdict === null) out.push('the replica plane accepted a frame it must refuse');
  } else if (verdict !== null) {
    out.push(`validateHeader refused a valid frame: ${verdict}`);
  }

  out.push(checkExtras(bytes, entry));
  return problems(out);
}

/** Prepares tagged with `chain_position` must link: parent(n + 1) = identity(n). */
function checkChain(frames: unknown[]): string | null {
  const chain = frames
    .filter(isRecord)
    .filter((e) => typeof e['chain_position'] === 'number' && typeof e['hex'] === 'string')
    .sort((a, b) => (a['chain_position'] as number) - (b['chain_position'] as number));
  const out: (string | null)[] = [];
  for (let i = 1; i < chain.length; i++) {
    const previous = fromHex(chain[i - 1]?.['hex'] as string);
    const current = fromHex(chain[i]?.['hex'] as string);
    const parent = decodeHeaderFields(current, 0);
    if (!parent.ok) return parent.reason;
    out.push(expectEqual(`chain ${i}: parent`, parent.value.fields['parent'], prepareIdentityOf(previous, 0)));
  }
  return problems(out);
}

/** The reason `validateHeader` gives each negative entry (for reports). */
export function replicaFrameRejections(doc: unknown): { name: string; reason: string | null; expect: string }[] {
  return listOf(doc, 'negative').map((entry, i) => {
    const record = isRecord(entry) ? entry : {};
    let reason: string | null = 'malformed entry';
    try {
      reason = validateHeader(fromHex(str(record, 'hex')), 0);
    } catch (error) {
      reason = `threw: ${String(error)}`;
    }
    return { name: entryName(entry, i), reason, expect: typeof record['expect'] === 'string' ? record['expect'] : '' };
  });
}

export const checkReplicaFrames: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] => {
  const outcomes: VectorOutcome[] = [];
  const frames = listOf(doc, 'frames');
  frames.forEach((entry, i) => {
    outcomes.push(checkEntry(`${fileName}#frames/${entryName(entry, i)}`, () => checkFrame(entry)));
  });
  if (frames.some((e) => isRecord(e) && typeof e['chain_position'] === 'number')) {
    outcomes.push(checkEntry(`${fileName}#frames/chain_position`, () => checkChain(frames)));
  }
  listOf(doc, 'negative').forEach((entry, i) => {
    outcomes.push(
      checkEntry(`${fileName}#negative/${entryName(entry, i)}`, () => {
        if (!isRecord(entry)) return 'entry is not an object';
        const reason = validateHeader(fromHex(str(entry, 'hex')), 0);
        const expect = typeof entry['expect'] === 'string' ? entry['expect'] : '(no expect)';
        return reason === null ? `accepted, but expected ${expect}` : null;
      }),
    );
  });
  return outcomes;
};

export default checkReplicaFrames;
