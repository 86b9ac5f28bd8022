/**
 * Table-driven header encoders: every named field of the command's layout is written at its
 * offset and every reserved or padding byte is written as zero. The field types come from the
 * layout tables themselves, so an encoder cannot name a field the table lacks. An out-of-range
 * value is our bug (assert), not a reason: encoders only ever see our own values.
 *
 * Sealing is separate (seal.ts): encode every field first, then seal last (§2.2).
 */
import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { type CommandName, COMMAND_MAX, COMMAND_NAMES } from './command.js';
import {
  type COMMIT_LAYOUT,
  type DO_VIEW_CHANGE_LAYOUT,
  type EVICTION_LAYOUT,
  type FieldKind,
  type FieldSpec,
  type FORWARD_LOGOUT_LAYOUT,
  type FORWARD_LOGOUT_RESULT_LAYOUT,
  type FORWARD_REGISTER_LAYOUT,
  type FORWARD_REGISTER_RESULT_LAYOUT,
  type GENERIC_LAYOUT,
  type HANDSHAKE_LAYOUT,
  type HeaderLayout,
  type PREPARE_LAYOUT,
  type PREPARE_OK_LAYOUT,
  type REPAIR_RESPONSE_LAYOUT,
  type REPLY_LAYOUT,
  type REQUEST_PREPARES_LAYOUT,
  type REQUEST_START_VIEW_LAYOUT,
  type REQUEST_STATE_CHUNK_LAYOUT,
  type REQUEST_STATE_TRANSFER_LAYOUT,
  type ROUTED_REQUEST_LAYOUT,
  type START_VIEW_CHANGE_LAYOUT,
  type START_VIEW_LAYOUT,
  type STATE_CHUNK_LAYOUT,
  type STATE_TRANSFER_TARGET_LAYOUT,
  fieldsInOrder,
  HEADER_SIZE,
  LAYOUT_BY_COMMAND,
  OFFSET_COMMAND,
  OFFSET_SIZE,
} from './header-layout.js';
import { readU128Big, readU32, readU64Big, writeU128Big, writeU32, writeU64Big } from './little-endian.js';

type ValueOfKind<K extends FieldKind> = K extends 'u8' | 'u32'
  ? number
  : K extends 'u64' | 'u128'
    ? bigint
    : K extends 'bytes'
      ? Uint8Array
      : never;

/** The named (non-reserved) fields of a layout with their value types. */
export type HeaderFieldsOf<L extends HeaderLayout> = {
  -readonly [P in keyof L as L[P]['kind'] extends 'reserved' ? never : P]: ValueOfKind<L[P]['kind']>;
};

/** Fields an encoder fills in when omitted: checksums and release 0, size 256. */
type DefaultedField = 'checksum' | 'checksumBody' | 'release' | 'size';

/** Encoder input: every named field except `command` (given separately); defaults optional. */
export type EncodeFields<L extends HeaderLayout> = Omit<HeaderFieldsOf<L>, 'command' | DefaultedField> &
  Partial<Pick<HeaderFieldsOf<L>, DefaultedField & keyof HeaderFieldsOf<L>>>;

/** The layout type of each command value (the same tables as LAYOUT_BY_COMMAND). */
export interface LayoutByCommand {
  0: typeof GENERIC_LAYOUT;
  1: typeof GENERIC_LAYOUT;
  2: typeof GENERIC_LAYOUT;
  3: typeof GENERIC_LAYOUT;
  4: typeof GENERIC_LAYOUT;
  5: typeof ROUTED_REQUEST_LAYOUT;
  6: typeof PREPARE_LAYOUT;
  7: typeof PREPARE_OK_LAYOUT;
  8: typeof REPLY_LAYOUT;
  9: typeof COMMIT_LAYOUT;
  10: typeof START_VIEW_CHANGE_LAYOUT;
  11: typeof DO_VIEW_CHANGE_LAYOUT;
  12: typeof START_VIEW_LAYOUT;
  13: typeof EVICTION_LAYOUT;
  14: typeof HANDSHAKE_LAYOUT;
  15: typeof HANDSHAKE_LAYOUT;
  16: typeof HANDSHAKE_LAYOUT;
  17: typeof REQUEST_START_VIEW_LAYOUT;
  18: typeof REQUEST_PREPARES_LAYOUT;
  19: typeof PREPARE_LAYOUT;
  20: typeof REPAIR_RESPONSE_LAYOUT;
  21: typeof REPAIR_RESPONSE_LAYOUT;
  22: typeof REQUEST_STATE_TRANSFER_LAYOUT;
  23: typeof STATE_TRANSFER_TARGET_LAYOUT;
  24: typeof REQUEST_STATE_CHUNK_LAYOUT;
  25: typeof STATE_CHUNK_LAYOUT;
  26: typeof FORWARD_REGISTER_LAYOUT;
  27: typeof FORWARD_REGISTER_RESULT_LAYOUT;
  28: typeof FORWARD_LOGOUT_LAYOUT;
  29: typeof FORWARD_LOGOUT_RESULT_LAYOUT;
}

export type CommandValue = keyof LayoutByCommand;
export type FieldsOfCommand<C extends CommandValue> = HeaderFieldsOf<LayoutByCommand[C]>;
export type EncodeFieldsOfCommand<C extends CommandValue> = EncodeFields<LayoutByCommand[C]>;

export type FieldValue = number | bigint | Uint8Array;

const U32_LIMIT = 0x1_0000_0000;
const U64_LIMIT = 1n << 64n;
const U128_LIMIT = 1n << 128n;

const DEFAULTS: Readonly<Record<DefaultedField, FieldValue>> = {
  checksum: 0n,
  checksumBody: 0n,
  release: 0,
  size: HEADER_SIZE,
};

/** Named fields per command, in offset order, computed once. */
const NAMED_FIELDS: readonly (readonly [string, FieldSpec][])[] = LAYOUT_BY_COMMAND.map((layout) =>
  fieldsInOrder(layout).filter(([name, spec]) => spec.kind !== 'reserved' && name !== 'command'),
);

function writeField(target: Uint8Array, at: number, name: string, spec: FieldSpec, value: unknown): void {
  switch (spec.kind) {
    case 'u8':
      assert(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xff, `${name}: not a u8`);
      target[at] = value;
      return;
    case 'u32':
      assert(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < U32_LIMIT, `${name}: not a u32`);
      writeU32(target, at, value);
      return;
    case 'u64':
      assert(typeof value === 'bigint' && value >= 0n && value < U64_LIMIT, `${name}: not a u64`);
      writeU64Big(target, at, value);
      return;
    case 'u128':
      assert(typeof value === 'bigint' && value >= 0n && value < U128_LIMIT, `${name}: not a u128`);
      writeU128Big(target, at, value);
      return;
    case 'bytes':
      assert(value instanceof Uint8Array && value.length === spec.size, `${name}: needs ${spec.size} bytes`);
      target.set(value, at);
      return;
    case 'reserved':
      return;
  }
}

/**
 * Writes the 256-byte header of `command` into `target` at `base` (a fresh 256-byte buffer when
 * `target` is omitted) and returns the buffer. Reserved and padding bytes are zeroed. The body, if
 * any, is the caller's (see `encodeFrame`).
 */
export function encodeHeader<C extends CommandValue>(
  command: C,
  fields: EncodeFieldsOfCommand<C>,
  target?: Uint8Array,
  base = 0,
): Uint8Array {
  assert(Number.isInteger(command) && command >= 0 && command <= COMMAND_MAX, `encodeHeader: bad command ${command}`);
  const out = target ?? new Uint8Array(HEADER_SIZE);
  assert(base >= 0 && base + HEADER_SIZE <= out.length, 'encodeHeader: target too short');
  out.fill(0, base, base + HEADER_SIZE);
  out[base + OFFSET_COMMAND] = command;
  const given = fields as unknown as Readonly<Record<string, unknown>>;
  for (const [name, spec] of NAMED_FIELDS[command] as readonly [string, FieldSpec][]) {
    let value = given[name];
    if (value === undefined) value = DEFAULTS[name as DefaultedField];
    assert(value !== undefined, `encodeHeader(${COMMAND_NAMES[command]}): missing field ${name}`);
    writeField(out, base + spec.offset, name, spec, value);
  }
  return out;
}

/**
 * A whole frame: header plus body in one fresh buffer. `size` defaults to 256 + body length and,
 * when given, must equal it.
 */
export function encodeFrame<C extends CommandValue>(
  command: C,
  fields: EncodeFieldsOfCommand<C>,
  body: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE + body.length);
  const given = fields as unknown as Readonly<Record<string, unknown>>;
  const size = given['size'] ?? HEADER_SIZE + body.length;
  assert(size === HEADER_SIZE + body.length, 'encodeFrame: size does not match the body');
  encodeHeader(command, { ...fields, size } as EncodeFieldsOfCommand<C>, frame, 0);
  frame.set(body, HEADER_SIZE);
  return frame;
}

/** A header decoded into plain values (control paths: tests, checkers, logs). */
export interface DecodedHeader {
  readonly command: number;
  readonly name: CommandName;
  /** Every named field of the command's layout, `command` included. */
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/**
 * Reads every named field of the header at `base` by its command's layout. Only the command
 * byte is checked (0..29); nothing else is validated (use `validateHeader`). `bytes` fields are
 * copies, so the result outlives the buffer.
 */
export function decodeHeaderFields(bytes: Uint8Array, base = 0): Decoded<DecodedHeader> {
  if (!(base >= 0 && bytes.length - base >= HEADER_SIZE)) return fail('truncated_header');
  const command = bytes[base + OFFSET_COMMAND] as number;
  const layout = LAYOUT_BY_COMMAND[command];
  const name = COMMAND_NAMES[command];
  if (layout === undefined || name === undefined) return fail('command_out_of_range');
  const fields: Record<string, FieldValue> = {};
  for (const [field, spec] of fieldsInOrder(layout)) {
    const at = base + spec.offset;
    switch (spec.kind) {
      case 'u8':
        fields[field] = bytes[at] as number;
        break;
      case 'u32':
        fields[field] = readU32(bytes, at);
        break;
      case 'u64':
        fields[field] = readU64Big(bytes, at);
        break;
      case 'u128':
        fields[field] = readU128Big(bytes, at);
        break;
      case 'bytes':
        fields[field] = bytes.slice(at, at + spec.size);
        break;
      case 'reserved':
        break;
    }
  }
  return ok({ command, name, fields });
}

/** The frame length a header declares (offset 48), readable before the header is typed. */
export function frameSize(bytes: Uint8Array, base = 0): number {
  return readU32(bytes, base + OFFSET_SIZE);
}
