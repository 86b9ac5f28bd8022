import { fromHex, toHex } from '@shoal/stdx';
import { xxh3_64 } from '../../src/hash/xxh3.js';
import {
  type AnyCommandCodec, type OptionEntry, Operation, classifyServerFrame, commandByName, commandCodec, commandForOperation,
  decodeHeaderValue, decodeRequestFrame, decodeServerFrame, encodeEvictionHeader, encodeReplyFrame, encodeRequestFrame,
  isRequestChecksumStamped, requestCommandCode, validateEvictionHeader, validateReplyHeader, validateRequestHeader,
} from '../../src/client/index.js';
import { type VectorChecker, type VectorOutcome, checkEntry } from './outcome.js';

/**
 * Checks a client_frames.json-format document (shared/vectors/README.md):
 *
 * requests[]: decode the frame with our decoders; compare every listed header field; validate the
 *   header (§1.3); the body equals body_hex; the command code derived from the header (and, for
 *   Register, the body) equals command_code; decode the body with that command's codec, re-encode
 *   body and frame from the decoded fields and compare byte for byte; rust_sdk_request_checksum =
 *   widened XXH3(body) when the Rust SDK stamps the operation, else 0.
 * replies[]: classify the frame the way the SDK does (outcome, error_code, payload_hex,
 *   eviction_reason); decode it structurally, compare the listed header fields, validate, re-encode
 *   and compare bytes; where `typed` is given and a typed decoder exists, decode the payload and
 *   compare the SDK view of the result (every expected key must match).
 * Dispatch is on command_code, header fields and the named SDK decoder, never on entry names.
 */
export const checkClientFrames: VectorChecker = (doc, fileName) => {
  const outcomes: VectorOutcome[] = [];
  const root = asRecord(doc);
  if (root === null) return [{ id: `${fileName}#`, ok: false, detail: 'document is not an object' }];
  const requests = Array.isArray(root['requests']) ? root['requests'] : [];
  const replies = Array.isArray(root['replies']) ? root['replies'] : [];
  requests.forEach((entry, i) => outcomes.push(checkEntry(entryId(fileName, 'requests', entry, i), () => checkRequest(entry))));
  replies.forEach((entry, i) => outcomes.push(checkEntry(entryId(fileName, 'replies', entry, i), () => checkReply(entry))));
  if (outcomes.length === 0) outcomes.push({ id: `${fileName}#`, ok: false, detail: 'no requests[] or replies[] entries' });
  return outcomes;
};

export default checkClientFrames;

function checkRequest(raw: unknown): string | null {
  const entry = asRecord(raw);
  if (entry === null) return 'entry is not an object';
  const frame = fromHex(str(entry['hex'], 'hex'));
  const decoded = decodeRequestFrame(frame);
  if (!decoded.ok) return `request frame rejected: ${decoded.reason}`;
  const { header, body } = decoded.value;

  const fields = compareFields(asRecord(entry['header']) ?? {}, header as unknown as Record<string, unknown>);
  if (fields !== null) return fields;
  const invalid = validateRequestHeader(header);
  if (invalid !== null) return `header fails validation: ${invalid}`;
  if (entry['body_hex'] !== undefined && toHex(body) !== str(entry['body_hex'], 'body_hex')) return 'body differs from body_hex';

  const code = num(entry['command_code'], 'command_code');
  const derived = requestCommandCode(header, body);
  if (!derived.ok) return `cannot derive the command code: ${derived.reason}`;
  if (derived.value !== code) return `header/body say command ${derived.value}, entry says ${code}`;
  const codec = commandCodec(code);
  if (codec === null) return `no codec for command ${code}`;
  const request = codec.decodeRequest(body);
  if (!request.ok) return `body rejected by ${codec.info.name}: ${request.reason}`;
  const bodyAgain = codec.encodeRequest(request.value);
  if (toHex(bodyAgain) !== toHex(body)) return `re-encoded body differs: ${toHex(bodyAgain)}`;
  const { size: _size, command: _command, ...rest } = header;
  const frameAgain = encodeRequestFrame(rest, bodyAgain);
  if (toHex(frameAgain) !== toHex(frame)) return 're-encoded frame differs from hex';

  if (entry['rust_sdk_request_checksum'] !== undefined) {
    const expected = BigInt(str(entry['rust_sdk_request_checksum'], 'rust_sdk_request_checksum'));
    const actual = isRequestChecksumStamped(header.operation) ? xxh3_64(body) : 0n;
    if (actual !== expected) return `rust_sdk_request_checksum: expected ${expected}, computed ${actual}`;
  }
  return null;
}

function checkReply(raw: unknown): string | null {
  const entry = asRecord(raw);
  if (entry === null) return 'entry is not an object';
  const frame = fromHex(str(entry['hex'], 'hex'));
  const expected = asRecord(entry['expected']);
  if (expected === null) return 'missing expected';

  const outcome = classifyServerFrame(frame);
  if (outcome.outcome !== expected['outcome']) {
    return `outcome: expected ${String(expected['outcome'])}, got ${outcome.outcome}${outcome.outcome === 'error' ? ` (${outcome.errorCode})` : ''}`;
  }
  if (outcome.outcome === 'error') {
    if (expected['error_code'] !== undefined && outcome.errorCode !== num(expected['error_code'], 'error_code')) {
      return `error_code: expected ${String(expected['error_code'])}, got ${outcome.errorCode}`;
    }
    if (expected['eviction_reason'] !== undefined && outcome.evictionReason !== num(expected['eviction_reason'], 'eviction_reason')) {
      return `eviction_reason: expected ${String(expected['eviction_reason'])}, got ${String(outcome.evictionReason)}`;
    }
  } else if (expected['payload_hex'] !== undefined && toHex(outcome.payload) !== str(expected['payload_hex'], 'payload_hex')) {
    return `payload: expected ${String(expected['payload_hex'])}, got ${toHex(outcome.payload)}`;
  }

  const decoded = decodeServerFrame(frame);
  if (!decoded.ok) return `frame rejected by the structural decoder: ${decoded.reason}`;
  const server = decoded.value;
  const fields = compareFields(asRecord(entry['header']) ?? {}, server.header as unknown as Record<string, unknown>);
  if (fields !== null) return fields;
  if (server.kind === 'eviction') {
    const invalid = validateEvictionHeader(server.header);
    if (invalid !== null) return `eviction fails validation: ${invalid}`;
    const { size: _s, command: _c, ...rest } = server.header;
    if (toHex(encodeEvictionHeader(rest)) !== toHex(frame)) return 're-encoded eviction differs from hex';
    return null;
  }
  const invalid = validateReplyHeader(server.header);
  if (invalid !== null) return `reply fails validation: ${invalid}`;
  const { size: _s, command: _c, ...rest } = server.header;
  if (toHex(encodeReplyFrame(rest, server.body)) !== toHex(frame)) return 're-encoded reply differs from hex';

  if (outcome.outcome === 'ok' && 'typed' in expected) return checkTyped(entry, server.header.operation, outcome.payload, expected['typed']);
  return null;
}

/** Which typed decoder the entry names ("... then the <name> response decoder"), else the operation's. */
function replyCodec(entry: Record<string, unknown>, operation: number): AnyCommandCodec | null {
  const named = typeof entry['sdk_decode_function'] === 'string' ? /the (\w+) response decoder/.exec(entry['sdk_decode_function']) : null;
  if (named?.[1] !== undefined) {
    const info = commandByName(named[1]);
    if (info !== null) return commandCodec(info.code);
  }
  if (operation === Operation.Register) return commandCodec(40);
  const info = commandForOperation(operation);
  return info === null ? null : commandCodec(info.code);
}

function checkTyped(entry: Record<string, unknown>, operation: number, payload: Uint8Array, typed: unknown): string | null {
  const codec = replyCodec(entry, operation);
  if (typed === null) {
    if (codec !== null && codec.hasResponseBody) {
      const decoded = codec.decodeResponse(payload);
      return decoded.ok && decoded.value === null ? null : `typed null but ${codec.info.name} decodes a value`;
    }
    return payload.length === 0 ? null : 'typed null but the payload is not empty';
  }
  if (codec === null) return null; // no typed decoder can be chosen for this entry: outcome checks only
  const decoded = codec.decodeResponse(payload);
  if (!decoded.ok) return `payload rejected by ${codec.info.name} response decoder: ${decoded.reason}`;
  const again = codec.encodeResponse(decoded.value);
  if (toHex(again) !== toHex(payload)) return `${codec.info.name} response re-encodes differently`;
  return subsetMismatch(typed, toSdkView(decoded.value));
}

/** Compares every listed header field (snake_case in the vector) with the decoded header. */
function compareFields(expected: Record<string, unknown>, actual: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(expected)) {
    const key = name === 'nonreplicated_code' ? 'nonReplicatedCode' : name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (!(key in actual)) return `header field ${name} is not decoded`;
    const got = actual[key];
    if (String(got) !== String(value)) return `header.${name}: expected ${String(value)}, got ${String(got)}`;
  }
  return null;
}

function entryId(fileName: string, list: string, entry: unknown, index: number): string {
  const name = asRecord(entry)?.['name'];
  return `${fileName}#${list}/${typeof name === 'string' ? name : index}`;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what} is not a string`);
  return value;
}

function num(value: unknown, what: string): number {
  if (typeof value !== 'number') throw new Error(`${what} is not a number`);
  return value;
}

/**
 * Converts a decoded client-plane value into the shape the Node SDK's typed decoders produce, for
 * comparison with the `typed` objects of client_frames.json: bigint → decimal string, a µs
 * `createdAt` → { iso, epoch_ms }, an options array → a record keyed by option name, byte arrays →
 * hex. Field names already match the SDK's camelCase.
 */
export function toSdkView(value: unknown, key = ''): unknown {
  if (typeof value === 'bigint') {
    if (key === 'createdAt') {
      const ms = Number(value / 1000n);
      return { iso: new Date(ms).toISOString(), epoch_ms: ms };
    }
    return value.toString();
  }
  if (value instanceof Uint8Array) return toHex(value);
  if (Array.isArray(value)) {
    if ((key === 'options' || key === 'derivedOptions') && value.every(isOptionEntry)) return optionsRecord(value as OptionEntry[]);
    return value.map((v) => toSdkView(v));
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toSdkView(v, k);
    return out;
  }
  return value;
}

function isOptionEntry(v: unknown): boolean {
  return typeof v === 'object' && v !== null && 'key' in v && 'valueKind' in v && 'value' in v;
}

function optionsRecord(entries: readonly OptionEntry[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of entries) {
    const typed = decodeHeaderValue(e.valueKind, e.value);
    out[e.key] = typed.ok && typed.value.kind !== 'unknown' && typed.value.kind !== 'raw' ? toSdkView(typed.value.value) : toHex(e.value);
  }
  return out;
}

/** Every key of `expected` is present in `actual` with an equal value (recursively); arrays match in length. */
export function subsetMismatch(expected: unknown, actual: unknown, path = 'typed'): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} items, got ${actual.length}`;
    for (let i = 0; i < expected.length; i++) {
      const problem = subsetMismatch(expected[i], actual[i], `${path}[${i}]`);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null) return `${path}: expected an object, got ${String(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      if (!(k in actual)) return `${path}.${k}: missing`;
      const problem = subsetMismatch(v, (actual as Record<string, unknown>)[k], `${path}.${k}`);
      if (problem !== null) return problem;
    }
    return null;
  }
  return expected === actual ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}
