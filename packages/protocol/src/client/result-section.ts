import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';

/**
 * The committed-result section that leads a result-framed reply body (framing.mdx "Result section";
 * core/binary_protocol/src/consensus/reply_result.rs):
 *
 *   [count: u32] count x { index: u32, result: u32 }   then the typed payload (success only)
 *
 * Success is count = 0 and the payload follows the 4 count bytes; a committed rejection is one
 * `{ index: 0, result: code }` entry and no payload. A body too short for its count, or claiming an
 * entry it cannot hold, is malformed: never read as success ("classify never guesses").
 */
export const RESULT_COUNT_LENGTH = 4;
export const RESULT_ENTRY_LENGTH = 8;
export const REJECTION_SECTION_LENGTH = RESULT_COUNT_LENGTH + RESULT_ENTRY_LENGTH;

export interface ResultEntry {
  readonly index: number;
  readonly result: number;
}

export interface ResultSection {
  /** 0 for success, else the first entry's result (an IggyError code). */
  readonly code: number;
  readonly entries: readonly ResultEntry[];
  /** Byte length of the section = offset of the payload. */
  readonly sectionLength: number;
  /** The bytes after the section (a view, no copy). Empty on a rejection. */
  readonly payload: Uint8Array;
}

/**
 * Parses the section. Following the Rust `result_code`/`result_section_len`: code is the first
 * entry's result, so `{count 1, result 0}` reads as success with the payload after 12 bytes (the
 * Node SDK would instead raise error 0; no vector has that shape).
 */
export function parseResultSection(body: Uint8Array): Decoded<ResultSection> {
  if (body.length < RESULT_COUNT_LENGTH) return fail('result_section_truncated');
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const count = view.getUint32(0, true);
  const sectionLength = RESULT_COUNT_LENGTH + count * RESULT_ENTRY_LENGTH;
  if (body.length < sectionLength) return fail('result_section_entries_truncated');
  const entries: ResultEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = RESULT_COUNT_LENGTH + i * RESULT_ENTRY_LENGTH;
    entries.push({ index: view.getUint32(at, true), result: view.getUint32(at + 4, true) });
  }
  const code = entries[0]?.result ?? 0;
  return ok({ code, entries, sectionLength, payload: body.subarray(sectionLength) });
}

/** `[count = 0][payload]`. */
export function encodeResultSuccess(payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(RESULT_COUNT_LENGTH + payload.length);
  out.set(payload, RESULT_COUNT_LENGTH);
  return out;
}

/** `[count = 1][index = 0][result = code]`: a committed (or pre-commit transient) rejection. */
export function encodeResultRejection(code: number): Uint8Array {
  assert(Number.isInteger(code) && code > 0 && code <= 0xffff_ffff, `rejection code ${code}`);
  const out = new Uint8Array(REJECTION_SECTION_LENGTH);
  const view = new DataView(out.buffer);
  view.setUint32(0, 1, true);
  view.setUint32(4, 0, true);
  view.setUint32(8, code, true);
  return out;
}

/** A general section (several entries) followed by a payload. */
export function encodeResultSection(entries: readonly ResultEntry[], payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const sectionLength = RESULT_COUNT_LENGTH + entries.length * RESULT_ENTRY_LENGTH;
  const out = new Uint8Array(sectionLength + payload.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, entries.length, true);
  entries.forEach((entry, i) => {
    view.setUint32(RESULT_COUNT_LENGTH + i * RESULT_ENTRY_LENGTH, entry.index, true);
    view.setUint32(RESULT_COUNT_LENGTH + i * RESULT_ENTRY_LENGTH + 4, entry.result, true);
  });
  out.set(payload, sectionLength);
  return out;
}
