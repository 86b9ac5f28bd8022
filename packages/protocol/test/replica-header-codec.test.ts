import { describe, expect, it } from 'vitest';
import { AssertionError, Prng } from '@shoal/stdx';
import {
  COMMAND_NAMES,
  LAYOUT_BY_COMMAND,
  METADATA_GROUP,
  VIEW_CLASS_BY_COMMAND,
  decodeHeaderFields,
  encodeFrame,
  encodeHeader,
  fieldsInOrder,
  frameSize,
  readField,
  viewHeader,
  CommitHeaderView,
  DoViewChangeHeaderView,
  PrepareHeaderView,
  type CommandValue,
  type EncodeFieldsOfCommand,
  type FieldSpec,
  type FieldValue,
} from '../src/replica/index.js';
import { HEADER_SIZE } from '../src/replica/header-layout.js';

const COMMANDS = [...Array(30).keys()] as CommandValue[];

function zeroFields(command: number): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const [name, spec] of fieldsInOrder(LAYOUT_BY_COMMAND[command] as never)) {
    if (spec.kind === 'reserved' || name === 'command') continue;
    out[name] = spec.kind === 'bytes' ? new Uint8Array(spec.size) : spec.kind === 'u64' || spec.kind === 'u128' ? 0n : 0;
  }
  out['size'] = HEADER_SIZE;
  return out;
}

/** A distinctive value of the field's kind: every byte non-zero and different. */
function marker(spec: FieldSpec, seed: number): FieldValue {
  const bytes = new Uint8Array(spec.size);
  for (let i = 0; i < bytes.length; i++) bytes[i] = ((seed + i * 7) % 254) + 1;
  if (spec.kind === 'bytes') return bytes;
  const value = bytes.reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);
  return spec.kind === 'u64' || spec.kind === 'u128' ? value : Number(value);
}

function leBytes(value: FieldValue, size: number): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const out = new Uint8Array(size);
  let v = BigInt(value);
  for (let i = 0; i < size; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function randomValue(prng: Prng, spec: FieldSpec): FieldValue {
  switch (spec.kind) {
    case 'u8':
      return prng.below(256);
    case 'u32':
      return prng.u32();
    case 'u64':
      return prng.u64();
    case 'u128':
      return prng.u128();
    default:
      return prng.bytes(spec.size);
  }
}

const encode = (command: CommandValue, fields: Record<string, FieldValue>, target?: Uint8Array, base?: number): Uint8Array =>
  encodeHeader(command, fields as unknown as EncodeFieldsOfCommand<CommandValue>, target, base);

describe('every field of every header lands at its offset', () => {
  for (const command of COMMANDS) {
    it(`${COMMAND_NAMES[command]} (${command})`, () => {
      const layout = LAYOUT_BY_COMMAND[command] as never;
      fieldsInOrder(layout).forEach(([name, spec], index) => {
        if (spec.kind === 'reserved' || name === 'command') return;
        const fields = zeroFields(command);
        const value = marker(spec, index * 13 + command);
        fields[name] = value;
        const bytes = encode(command, fields);
        const expected = new Uint8Array(HEADER_SIZE);
        expected[60] = command;
        if (name !== 'size') expected.set(leBytes(256, 4), 48);
        expected.set(leBytes(value, spec.size), spec.offset);
        expect(Array.from(bytes), `${name} @ ${spec.offset}`).toEqual(Array.from(expected));
      });
    });
  }
});

describe('reserved bytes', () => {
  it('are written as zero even over a dirty target, with every field at its maximum', () => {
    for (const command of COMMANDS) {
      const layout = LAYOUT_BY_COMMAND[command] as never;
      const fields = zeroFields(command);
      for (const [name, spec] of fieldsInOrder(layout)) {
        if (!(name in fields)) continue;
        fields[name] = spec.kind === 'bytes' ? new Uint8Array(spec.size).fill(0xff) : spec.kind === 'u8' ? 0xff : spec.kind === 'u32' ? 0xffff_ffff : spec.kind === 'u64' ? (1n << 64n) - 1n : (1n << 128n) - 1n;
      }
      const target = new Uint8Array(HEADER_SIZE + 8).fill(0xee);
      encode(command, fields, target, 4);
      expect(target[3]).toBe(0xee);
      expect(target[4 + HEADER_SIZE]).toBe(0xee);
      for (const [name, spec] of fieldsInOrder(layout)) {
        if (spec.kind !== 'reserved') continue;
        const region = target.subarray(4 + spec.offset, 4 + spec.offset + spec.size);
        expect(region.every((b) => b === 0), `${COMMAND_NAMES[command]}.${name}`).toBe(true);
      }
    }
  });
});

describe('round trips', () => {
  it('encode -> decodeHeaderFields -> encode, and views read the same values, for random values of every command', () => {
    const prng = new Prng(42);
    for (let round = 0; round < 20; round++) {
      for (const command of COMMANDS) {
        const layout = LAYOUT_BY_COMMAND[command] as never;
        const fields = zeroFields(command);
        for (const [name, spec] of fieldsInOrder(layout)) if (name in fields) fields[name] = randomValue(prng, spec);
        const bytes = encode(command, fields);
        const decoded = decodeHeaderFields(bytes);
        if (!decoded.ok) throw new Error(decoded.reason);
        expect(decoded.value.command).toBe(command);
        expect(decoded.value.name).toBe(COMMAND_NAMES[command]);
        for (const [name, value] of Object.entries(fields)) expect(decoded.value.fields[name], name).toEqual(value);
        const again = encode(command, { ...decoded.value.fields });
        expect(again).toEqual(bytes);
        const view = viewHeader(bytes) as unknown as Record<string, unknown>;
        expect(view).toBeInstanceOf(VIEW_CLASS_BY_COMMAND[command] as never);
        for (const [name, spec] of fieldsInOrder(layout)) {
          if (spec.kind === 'reserved') continue;
          const expectedValue = name === 'command' ? command : fields[name];
          expect(view[name], `${COMMAND_NAMES[command]} view.${name}`).toEqual(expectedValue);
          expect(readField(bytes, 0, spec), name).toEqual(expectedValue);
        }
      }
    }
  });

  it('decodeHeaderFields refuses short buffers and commands above 29', () => {
    expect(decodeHeaderFields(new Uint8Array(255))).toEqual({ ok: false, reason: 'truncated_header' });
    const b = new Uint8Array(256);
    b[60] = 30;
    expect(decodeHeaderFields(b)).toEqual({ ok: false, reason: 'command_out_of_range' });
    expect(viewHeader(b)).toBeUndefined();
  });
});

describe('views', () => {
  it('read in place at an offset and rebind without copying', () => {
    const buffer = new Uint8Array(1024);
    const fields = { cluster: 5n, view: 2, replica: 1, commitChecksum: 0n, timestampMonotonic: 9n, commit: 123n, checkpointOp: 0n, group: METADATA_GROUP };
    encodeHeader(9, fields, buffer, 256);
    encodeHeader(9, { ...fields, commit: 456n }, buffer, 512);
    const view = new CommitHeaderView(buffer, 256);
    expect(view.commitNumber).toBe(123);
    expect(view.groupIsMetadata).toBe(true);
    view.bind(buffer, 512);
    expect(view.commit).toBe(456n);
    buffer[512 + 152] = 7; // written through: the view sees the buffer, not a copy
    expect(view.commitNumber).toBe(7 + 456 - (456 & 0xff));
  });

  it('number accessors are exact up to MAX_SAFE_INTEGER and assert beyond', () => {
    const view = new PrepareHeaderView();
    const bytes = encodeHeader(6, {
      cluster: 0n, view: 0, replica: 0, client: 0n, parent: 0n, requestChecksum: 0n,
      op: BigInt(Number.MAX_SAFE_INTEGER), commit: BigInt(Number.MAX_SAFE_INTEGER) + 1n,
      timestamp: 0n, request: 0n, operation: 0, group: 5n, userId: 0,
    });
    view.bind(bytes);
    expect(view.opNumber).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => view.commitNumber).toThrow(AssertionError);
    expect(view.commit).toBe(BigInt(Number.MAX_SAFE_INTEGER) + 1n);
    expect(view.groupIsMetadata).toBe(false);
  });

  it('DoViewChange bits and counts read without bigint', () => {
    const bytes = encodeFrame(11, {
      cluster: 0n, view: 4, replica: 0, op: 3n, commit: 1n, group: METADATA_GROUP, logView: 3,
      nackBitset: (1n << 127n) | 1n, presentBitset: 2n,
    }, new Uint8Array(512));
    const view = new DoViewChangeHeaderView(bytes);
    expect(view.nack(0)).toBe(true);
    expect(view.nack(127)).toBe(true);
    expect(view.nack(1)).toBe(false);
    expect(view.present(1)).toBe(true);
    expect(view.suffixCount).toBe(2);
    expect(view.bodyLength).toBe(512);
    expect(view.body.length).toBe(512);
    expect(() => view.nack(128)).toThrow(AssertionError);
  });

  it('bind asserts the buffer holds a header', () => {
    expect(() => new CommitHeaderView(new Uint8Array(100))).toThrow(AssertionError);
  });
});

describe('encoder guards (our bugs)', () => {
  it('asserts on out-of-range values, missing fields and short targets', () => {
    const ok = { cluster: 0n, view: 0, replica: 0, group: 0n };
    expect(() => encodeHeader(10, { ...ok, replica: 256 })).toThrow(AssertionError);
    expect(() => encodeHeader(10, { ...ok, view: -1 })).toThrow(AssertionError);
    expect(() => encodeHeader(10, { ...ok, group: 1n << 64n })).toThrow(AssertionError);
    expect(() => encodeHeader(10, { ...ok, cluster: -1n })).toThrow(AssertionError);
    expect(() => encodeHeader(10, { cluster: 0n, view: 0, replica: 0 } as never)).toThrow(/missing field group/);
    expect(() => encodeHeader(10, ok, new Uint8Array(200))).toThrow(AssertionError);
    expect(() => encodeHeader(14, { ...ok, nonce: new Uint8Array(31), mac: new Uint8Array(32), status: 0 } as never)).toThrow(AssertionError);
    expect(() => encodeFrame(10, { ...ok, size: 300 }, new Uint8Array(10))).toThrow(AssertionError);
  });

  it('encodeFrame sets size to 256 + body and frameSize reads it', () => {
    const f = encodeFrame(25, { cluster: 0n, view: 0, replica: 0, nonce: 1n, offset: 0n, group: 0n, artifact: 0 }, new Uint8Array(40).fill(9));
    expect(f.length).toBe(296);
    expect(frameSize(f)).toBe(296);
    expect(f.subarray(256).every((b) => b === 9)).toBe(true);
  });
});
