import { Packr, Unpackr, addExtension } from 'msgpackr/pack';
import { assert } from '@shoal/stdx';

/**
 * MessagePack for snapshot.bin through msgpackr's pure-JS build, configured for deterministic
 * output (replication-semantics.md §9.3, rmp-serde conventions):
 *   - no records extension, no structured clone, no bundled strings, no extra types;
 *   - JS Maps are MessagePack maps (emitted in the order the encoder built them: always sorted);
 *   - integers in the most compact unsigned form: numbers below 2^32 go through msgpackr's own
 *     compact path (positive fixint / uint8 / uint16 / uint32); anything from 2^32 to u64::MAX is
 *     wrapped in `WideUint` and written as `0xcf` + 8 bytes big-endian (msgpackr on its own would
 *     write a float64 for 2^32..2^53 numbers and an int64 `0xd3` for bigints below 2^63);
 *   - u128 = bin 8 of 16 bytes, big-endian; byte blobs = bin.
 * `WideUint` is written raw through msgpackr's extension hook (the allocate callback, the way its
 * own timestamp extension writes), so no extension header appears in the output.
 */
export class WideUint {
  readonly value: bigint;
  constructor(value: bigint) {
    assert(value >= 0x1_0000_0000n && value <= 0xffff_ffff_ffff_ffffn, `WideUint out of range: ${value}`);
    this.value = value;
  }
}

interface Allocation {
  readonly target: Uint8Array;
  readonly targetView: DataView;
  readonly position: number;
}

/** An otherwise unused extension type code; decoding one yields its raw bytes (then refused). */
const WIDE_UINT_EXT_TYPE = 0x57;

addExtension({
  Class: WideUint,
  type: WIDE_UINT_EXT_TYPE,
  pack(value: WideUint, allocate: (size: number) => Allocation): undefined {
    const { target, targetView, position } = allocate(9);
    target[position] = 0xcf;
    targetView.setBigUint64(position + 1, value.value);
    return undefined;
  },
  unpack(bytes: Uint8Array): Uint8Array {
    return bytes;
  },
});

/** A value that can sit in a snapshot: what the encoder writes and the decoder hands back. */
export type SnapshotValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | WideUint
  | readonly SnapshotValue[]
  | ReadonlyMap<SnapshotValue, SnapshotValue>;

const packr = new Packr({
  useRecords: false,
  structuredClone: false,
  moreTypes: false,
  bundleStrings: false,
  mapsAsObjects: false,
  encodeUndefinedAsNil: true,
  useBigIntExtension: false,
  largeBigIntToFloat: false,
  variableMapSize: true,
});

const unpackr = new Unpackr({ useRecords: false, structuredClone: false, moreTypes: false, mapsAsObjects: false, int64AsType: 'bigint' });

/** u64 in its compact form: a number below 2^32, a WideUint above. */
export function u64(value: bigint | number): number | WideUint {
  const v = typeof value === 'bigint' ? value : BigInt(value);
  assert(v >= 0n && v <= 0xffff_ffff_ffff_ffffn, `u64 out of range: ${v}`);
  return v < 0x1_0000_0000n ? Number(v) : new WideUint(v);
}

/** u128 as bin 16, big-endian. */
export function u128(value: bigint): Uint8Array {
  const out = new Uint8Array(16);
  let v = value;
  for (let i = 15; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

export function fromU128(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

export function packValue(value: SnapshotValue): Uint8Array {
  // Copy: msgpackr may hand back a view of a buffer it reuses on the next call.
  return Uint8Array.from(packr.pack(value));
}

/** Unpacked value, or throws (the snapshot decoder turns that into a reason). */
export function unpackValue(bytes: Uint8Array): unknown {
  // On a copy: msgpackr caches a DataView on the buffer it is given.
  return unpackr.unpack(bytes.slice());
}
