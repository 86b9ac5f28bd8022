import { describe, expect, it } from 'vitest';
import { AssertionError } from '@shoal/stdx';
import {
  Command,
  METADATA_GROUP,
  SUFFIX_ENTRIES_MAX,
  bitsetBelow,
  bitsetBytesHaveBitFrom,
  bitsetCount,
  bitsetFromIndices,
  bitsetHas,
  bitsetIndices,
  bitsetWith,
  bitsetWithout,
  blankPrepareHeader,
  decodeSuffix,
  isBlankPrepareHeader,
  packSuffix,
  prepareIdentityOf,
  sealFrame,
  sealHeader,
  sealPrepareIdentity,
  validateHeader,
  validateSuffix,
  writeBlankPrepareHeader,
} from '../src/replica/index.js';
import { frame, get, preparesChain, setU64 } from './replica-fixtures.js';

describe('u128 bitsets', () => {
  it('set, test, clear, count, list', () => {
    let bits = 0n;
    bits = bitsetWith(bits, 0);
    bits = bitsetWith(bits, 127);
    bits = bitsetWith(bits, 64);
    expect(bits).toBe((1n << 127n) | (1n << 64n) | 1n);
    expect(bitsetHas(bits, 64)).toBe(true);
    expect(bitsetHas(bits, 63)).toBe(false);
    expect(bitsetCount(bits)).toBe(3);
    expect(bitsetIndices(bits)).toEqual([0, 64, 127]);
    expect(bitsetWithout(bits, 64)).toBe((1n << 127n) | 1n);
    expect(bitsetFromIndices([3, 1])).toBe(0b1010n);
    expect(bitsetBelow(0)).toBe(0n);
    expect(bitsetBelow(3)).toBe(0b111n);
    expect(bitsetBelow(128)).toBe((1n << 128n) - 1n);
    expect(() => bitsetWith(0n, 128)).toThrow(AssertionError);
    expect(() => bitsetHas(1n << 128n, 0)).toThrow(AssertionError);
    expect(() => bitsetBelow(129)).toThrow(AssertionError);
  });

  it('bitsetBytesHaveBitFrom finds any bit at or above a count, in place', () => {
    for (const count of [0, 1, 7, 8, 9, 64, 127, 128]) {
      for (const bit of [0, 1, 7, 8, 9, 63, 64, 126, 127]) {
        const bytes = new Uint8Array(20);
        bytes[2 + (bit >> 3)] = 1 << (bit & 7);
        expect(bitsetBytesHaveBitFrom(bytes, 2, count), `count ${count} bit ${bit}`).toBe(bit >= count);
      }
    }
  });
});

describe('blank entries (vectors README fact 3)', () => {
  it('are zero except command 6 and op', () => {
    const blank = blankPrepareHeader(103n);
    expect(blank[60]).toBe(6);
    expect(new DataView(blank.buffer).getBigUint64(176, true)).toBe(103n);
    const rest = blank.slice();
    rest[60] = 0;
    rest.fill(0, 176, 184);
    expect(rest.every((b) => b === 0)).toBe(true);
    expect(isBlankPrepareHeader(blank)).toBe(true);
    for (const i of [0, 16, 61, 128, 208, 209, 216, 255]) {
      const other = blank.slice();
      other[i] = 1;
      expect(isBlankPrepareHeader(other), `byte ${i}`).toBe(false);
    }
    const target = new Uint8Array(600).fill(9);
    writeBlankPrepareHeader(target, 300, 5n);
    expect(isBlankPrepareHeader(target, 300)).toBe(true);
    expect(target[299]).toBe(9);
  });
});

describe('packSuffix / decodeSuffix', () => {
  it('packs high-to-low with bits and decodes the same entries back', () => {
    const chain = preparesChain();
    const packed = packSuffix([
      { header: null, op: 5n, nack: true },
      { header: null, op: 4n, nack: true },
      { header: (chain[2] as Uint8Array).subarray(0, 256), op: 3n, present: true },
      { header: (chain[1] as Uint8Array).subarray(0, 256), op: 2n },
    ]);
    expect(packed.nackBitset).toBe(0b0011n);
    expect(packed.presentBitset).toBe(0b0100n);
    const dvc = frame(Command.DoViewChange, {
      view: 4, op: 5n, commit: 2n, group: METADATA_GROUP, logView: 3, nackBitset: packed.nackBitset, presentBitset: packed.presentBitset,
    }, packed.body);
    expect(validateHeader(dvc)).toBeNull();
    const decoded = decodeSuffix(dvc);
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value.map((e) => [e.index, e.op, e.blank, e.nack, e.present])).toEqual([
      [0, 5n, true, true, false],
      [1, 4n, true, true, false],
      [2, 3n, false, false, true],
      [3, 2n, false, false, false],
    ]);
    expect(decoded.value[2]?.header).toEqual((chain[2] as Uint8Array).subarray(0, 256));
  });

  it('StartView bodies decode with bitsets as zero; an empty body is legal', () => {
    const decoded = decodeSuffix(get('StartView'));
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value.map((e) => e.op)).toEqual([3n, 2n, 1n]);
    expect(decoded.value.every((e) => !e.nack && !e.present)).toBe(true);
    expect(decodeSuffix(get('DoViewChangeEmpty'))).toEqual({ ok: true, value: [] });
    expect(decodeSuffix(get('Commit'))).toEqual({ ok: false, reason: 'not_a_suffix_frame' });
    expect(decodeSuffix(new Uint8Array(10))).toEqual({ ok: false, reason: 'truncated_header' });
  });

  it('asserts on sender bugs: non-descending ops, wrong header, too many entries', () => {
    const chain = preparesChain();
    expect(() => packSuffix([{ header: null, op: 5n }, { header: null, op: 3n }])).toThrow(AssertionError);
    expect(() => packSuffix([{ header: (chain[0] as Uint8Array).subarray(0, 256), op: 2n }])).toThrow(AssertionError);
    expect(() => packSuffix([{ header: new Uint8Array(100), op: 1n }])).toThrow(AssertionError);
    const many = Array.from({ length: SUFFIX_ENTRIES_MAX + 1 }, (_, i) => ({ header: null, op: 500n - BigInt(i) }));
    expect(() => packSuffix(many)).toThrow(AssertionError);
    expect(packSuffix(many.slice(0, 128)).body.length).toBe(128 * 256);
  });
});

describe('suffix rules (§5.4)', () => {
  /** A DVC over the chain (ops 3, 2, 1) after `edit` changes the body; re-sealed throughout. */
  function dvcWith(edit: (entries: Uint8Array[]) => void, head = 3n): Uint8Array {
    const entries = preparesChain().reverse().map((p) => p.slice(0, 256));
    edit(entries);
    const body = new Uint8Array(entries.length * 256);
    entries.forEach((e, i) => body.set(e, i * 256));
    return frame(Command.DoViewChange, { view: 4, op: head, commit: 1n, group: METADATA_GROUP, logView: 3, nackBitset: 0n, presentBitset: 0n }, body);
  }

  it('the unedited chain passes', () => {
    expect(validateHeader(dvcWith(() => {}))).toBeNull();
  });

  it('entry 0 must be the head op; entries descend by one', () => {
    expect(validateHeader(dvcWith(() => {}, 4n))).toBe('suffix_entry_op_mismatch');
    expect(validateHeader(dvcWith((e) => { const t = e[1] as Uint8Array; e[1] = e[2] as Uint8Array; e[2] = t; }))).toBe('suffix_entry_op_mismatch');
  });

  it('entries must be Prepare headers with declared operations and zero reserved bytes', () => {
    expect(validateHeader(dvcWith((e) => { (e[1] as Uint8Array)[60] = 19; }))).toBe('suffix_entry_not_prepare');
    expect(validateHeader(dvcWith((e) => { (e[1] as Uint8Array)[208] = 99; }))).toBe('suffix_entry_bad_operation');
    expect(validateHeader(dvcWith((e) => { (e[1] as Uint8Array)[70] = 1; sealPrepareIdentity(e[1] as Uint8Array); }))).toBe('suffix_entry_reserved_nonzero');
    expect(validateHeader(dvcWith((e) => { (e[2] as Uint8Array)[240] = 1; sealPrepareIdentity(e[2] as Uint8Array); }))).toBe('suffix_entry_reserved_nonzero');
  });

  it('a non-zero entry checksum must be its identity; zero skips the check', () => {
    expect(validateHeader(dvcWith((e) => { const x = e[1] as Uint8Array; x[200] = (x[200] as number) ^ 1; }))).toBe('suffix_entry_identity_mismatch');
    // Zeroing the checksum of entry 1 also removes the chain requirement on it.
    expect(validateHeader(dvcWith((e) => { (e[1] as Uint8Array).fill(0, 0, 16); }))).toBeNull();
  });

  it('timestamps strictly descend and adjacent entries chain by parent', () => {
    expect(validateHeader(dvcWith((e) => {
      const x = e[1] as Uint8Array;
      setU64(x, 192, 3_000_000n);
      sealPrepareIdentity(x);
      setParent(e[0] as Uint8Array, x);
    }))).toBe('suffix_timestamps_not_descending');
    expect(validateHeader(dvcWith((e) => {
      const x = e[0] as Uint8Array;
      x.fill(0x11, 144, 160);
      sealPrepareIdentity(x);
    }))).toBe('suffix_hash_chain_broken');
  });

  it('blanks are skipped: the nearest non-blank entry above is the child, not chained unless adjacent', () => {
    const withBlank = dvcWith((e) => {
      e[1] = blankPrepareHeader(2n);
    });
    expect(validateHeader(withBlank)).toBeNull();
    // With entry 1 blank, entry 2 (op 1) must still be older than entry 0 (op 3).
    expect(validateHeader(dvcWith((e) => {
      e[1] = blankPrepareHeader(2n);
      const x = e[2] as Uint8Array;
      setU64(x, 192, 9_000_000n);
      sealPrepareIdentity(x);
    }))).toBe('suffix_timestamps_not_descending');
  });

  it('a blank with one dirty byte is not blank: it is judged as a header (timestamp 0 breaks the order)', () => {
    const dirty = blankPrepareHeader(2n);
    dirty[216] = 1;
    expect(isBlankPrepareHeader(dirty)).toBe(false);
    // Entry 1 now has timestamp 0, so entry 2 (timestamp 1e6) is not older than its child.
    expect(validateHeader(dvcWith((e) => { e[1] = dirty; }))).toBe('suffix_timestamps_not_descending');
  });

  it('validateSuffix checks framing itself when called directly', () => {
    const dvc = get('DoViewChange');
    expect(validateSuffix(dvc)).toBeNull();
    expect(validateSuffix(dvc.subarray(0, dvc.length - 1))).toBe('suffix_truncated');
    const odd = dvc.slice();
    new DataView(odd.buffer).setUint32(48, dvc.length - 1, true);
    expect(validateSuffix(odd)).toBe('suffix_not_whole_headers');
    const bits = dvc.slice();
    bits[224] = 0x08;
    expect(validateSuffix(bits)).toBe('nack_bit_past_suffix');
  });

  it('validateHeader reaches the suffix rules only after the body seal', () => {
    const broken = dvcWith((e) => { (e[1] as Uint8Array)[60] = 7; });
    const stale = broken.slice();
    stale[512 + 61] = (stale[512 + 61] as number) ^ 1; // entry 1's replica byte: the body no longer matches checksum_body
    sealFrame(stale);
    expect(validateHeader(stale)).toBe('body_seal_mismatch');
    expect(validateHeader(sealHeader(stale))).toBe('suffix_entry_not_prepare');
  });
});

function setParent(child: Uint8Array, parent: Uint8Array): void {
  const identity = prepareIdentityOf(parent);
  const dv = new DataView(child.buffer, child.byteOffset);
  dv.setBigUint64(144, identity, true);
  dv.setBigUint64(152, 0n, true);
  sealPrepareIdentity(child);
}
