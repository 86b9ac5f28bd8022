import { fromHex, toHex } from '@shoal/stdx';
import {
  FrameCursor,
  batchChecksumInput,
  buildBatch,
  readBatchHeader,
  stampBatch,
  validateBatch,
  type BatchHeader,
  type BatchMessage,
  type BatchRejectReason,
  type OffsetDeltaRule,
} from '../../src/batch/index.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

type Json = Record<string, unknown>;

/**
 * batch.json (and any file of its format).
 * `vectors[]`: the batch `hex` must validate; its header and every listed frame must decode to the
 * listed fields; `batch_checksum_input_hex` must be what the checksum is computed over; and, when
 * `inputs.messages` is given, the builder (plus stamping, if the header carries stamped fields) must
 * reproduce `hex` byte for byte.
 * `negative[]`: `hex` must be rejected; when `expect` names a recognisable cause, the reason must
 * be that cause.
 */
export const checkBatch: VectorChecker = (doc, fileName) => {
  const root = (doc ?? {}) as Json;
  const outcomes: VectorOutcome[] = [];
  const vectors = root['vectors'];
  const negative = root['negative'];
  if (!Array.isArray(vectors) && !Array.isArray(negative)) {
    return [{ id: `${fileName}#vectors`, ok: false, detail: 'neither vectors[] nor negative[]' }];
  }
  if (Array.isArray(vectors)) {
    vectors.forEach((entry: unknown, i) => {
      const v = (entry ?? {}) as Json;
      outcomes.push(checkEntry(`${fileName}#vectors/${entryName(v, i)}`, () => checkVector(v)));
    });
  }
  if (Array.isArray(negative)) {
    negative.forEach((entry: unknown, i) => {
      const v = (entry ?? {}) as Json;
      outcomes.push(checkEntry(`${fileName}#negative/${entryName(v, i)}`, () => checkNegative(v)));
    });
  }
  return outcomes;
};

export default checkBatch;

function entryName(v: Json, index: number): string {
  return typeof v['name'] === 'string' ? v['name'] : String(index);
}

function hexOf(v: Json, field: string): Uint8Array {
  const value = v[field];
  if (typeof value !== 'string') throw new Error(`${field} missing`);
  return fromHex(value);
}

function checkVector(v: Json): string | null {
  const bytes = hexOf(v, 'hex');
  const frames = Array.isArray(v['frames']) ? (v['frames'] as Json[]) : null;
  const rule: OffsetDeltaRule =
    frames === null || frames.every((f, i) => Number(f['offset_delta']) === i) ? 'index' : 'contiguous';
  const verdict = validateBatch(bytes, { offsetDeltas: rule });
  if (!verdict.ok) return `valid batch rejected: ${verdict.reason} (frame ${verdict.frameIndex})`;

  const header = readBatchHeader(bytes);
  if (header === null) return 'header unreadable';
  const headerProblem = checkHeader(header, (v['header'] ?? {}) as Json);
  if (headerProblem !== null) return headerProblem;
  if (frames !== null) {
    const frameProblem = checkFrames(bytes, frames);
    if (frameProblem !== null) return frameProblem;
  }
  if (typeof v['batch_checksum_input_hex'] === 'string') {
    const input = batchChecksumInput(bytes);
    if (!input.ok) return `checksum input: ${input.reason}`;
    const problem = expectEqual('batch_checksum_input_hex', toHex(input.value), v['batch_checksum_input_hex']);
    if (problem !== null) return problem;
  }
  const inputs = (v['inputs'] ?? null) as Json | null;
  if (inputs !== null && Array.isArray(inputs['messages']) && rule === 'index') {
    return checkBuild(inputs['messages'] as Json[], header, bytes);
  }
  return null;
}

function checkHeader(header: BatchHeader, expected: Json): string | null {
  const pairs: [string, unknown][] = [
    ['partition_id', header.partitionId],
    ['base_offset', header.baseOffset],
    ['base_timestamp', header.baseTimestamp],
    ['origin_timestamp', header.originTimestamp],
    ['batch_length', header.batchLength],
    ['batch_checksum', header.batchChecksum],
    ['message_count', header.messageCount],
  ];
  for (const [field, actual] of pairs) {
    if (expected[field] === undefined) continue;
    const problem = expectEqual(`header.${field}`, String(actual), String(expected[field]));
    if (problem !== null) return problem;
  }
  if (typeof expected['batch_checksum_hex'] === 'string') {
    const hex = header.batchChecksum.toString(16).padStart(16, '0');
    return expectEqual('header.batch_checksum_hex', hex, expected['batch_checksum_hex'].toLowerCase());
  }
  return null;
}

function checkFrames(bytes: Uint8Array, frames: Json[]): string | null {
  const cursor = new FrameCursor(bytes);
  for (const expected of frames) {
    if (!cursor.next()) return `frame ${cursor.index + 1} missing (${cursor.reason ?? 'end'})`;
    const i = cursor.index;
    const pairs: [string, unknown][] = [
      ['checksum', cursor.checksum()],
      ['checksum_hex', cursor.checksum().toString(16).padStart(16, '0')],
      ['id', cursor.id()],
      ['offset_delta', cursor.offsetDelta],
      ['timestamp_delta', cursor.timestampDelta],
      ['user_headers_length', cursor.userHeadersLength],
      ['payload_length', cursor.payloadLength],
      ['hex', toHex(cursor.frame())],
      ['payload_hex', toHex(cursor.payload())],
      ['user_headers_hex', toHex(cursor.userHeaders())],
    ];
    for (const [field, actual] of pairs) {
      if (expected[field] === undefined) continue;
      const want = typeof expected[field] === 'string' ? (expected[field] as string).toLowerCase() : expected[field];
      const problem = expectEqual(`frames[${i}].${field}`, String(actual), String(want));
      if (problem !== null) return problem;
    }
  }
  if (cursor.next()) return `more frames than the ${frames.length} listed`;
  return null;
}

function checkBuild(messages: Json[], header: BatchHeader, expected: Uint8Array): string | null {
  const built = buildBatch(
    messages.map(
      (m): BatchMessage => ({
        id: BigInt(String(m['id'])),
        payload: hexOf(m, 'payload_hex'),
        userHeaders: typeof m['user_headers_hex'] === 'string' ? fromHex(m['user_headers_hex']) : new Uint8Array(0),
        originTimestamp: BigInt(String(m['origin_timestamp'])),
      }),
    ),
  );
  if (!built.ok) return `builder refused the inputs: ${built.reason} (message ${built.messageIndex})`;
  const stamped = header.partitionId !== 0n || header.baseOffset !== 0n || header.baseTimestamp !== 0n;
  if (stamped) {
    const verdict = stampBatch(built.value, {
      partitionId: header.partitionId,
      baseOffset: header.baseOffset,
      baseTimestamp: header.baseTimestamp,
    });
    if (!verdict.ok) return `stamping failed: ${verdict.reason}`;
  }
  return expectEqual(stamped ? 'built + stamped hex' : 'built hex', toHex(built.value), toHex(expected));
}

function checkNegative(v: Json): string | null {
  const verdict = validateBatch(hexOf(v, 'hex'));
  const expect = typeof v['expect'] === 'string' ? v['expect'] : '';
  if (verdict.ok) return `accepted, expected "${expect}"`;
  const allowed = reasonsFor(expect);
  if (allowed === null || allowed.includes(verdict.reason)) return null;
  return `rejected as ${verdict.reason}, expected "${expect}" (${allowed.join(' | ')})`;
}

/** The reasons that match an `expect` text, or null when the text names no known cause. */
export function reasonsFor(expect: string): readonly BatchRejectReason[] | null {
  const text = expect.toLowerCase().replace(/^reject:\s*/, '');
  const rules: [RegExp, BatchRejectReason[]][] = [
    [/batch[ _]checksum/, ['batch_checksum_mismatch']],
    [/(message|frame)[ _]checksum|checksum mismatch/, ['frame_checksum_mismatch']],
    [/(frame|message)[^()]*reserved|reserved[^()]*40\.\.48/, ['frame_reserved_nonzero']],
    [/reserved/, ['batch_header_reserved_nonzero']],
    [/offset[ _]delta/, ['frame_offset_delta_mismatch']],
    [/(message[ _]count|count)\b.*\b(zero|0)\b|empty|no (messages|frames)/, ['batch_empty']],
    [/tile|message[ _]count/, ['message_count_mismatch']],
    [/shorter than (the )?(256|header)|256[- ]byte header|too short|header truncated/, ['batch_too_short']],
    [/shorter than batch[ _]length|truncat/, ['batch_truncated', 'frame_overrun', 'frame_header_truncated']],
    [/longer than batch[ _]length|trailing/, ['batch_trailing_bytes']],
    [/overrun|past the end|beyond/, ['frame_overrun', 'frame_header_truncated']],
    [/payload/, ['frame_payload_too_large', 'frame_overrun']],
    [/user[ _]headers/, ['frame_user_headers_too_large', 'frame_overrun']],
  ];
  for (const [pattern, reasons] of rules) if (pattern.test(text)) return reasons;
  return null;
}
