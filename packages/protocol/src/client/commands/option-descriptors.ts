import { checkCount } from '../../codec/body-codec.js';
import { readLongString, readName, writeLongString, writeName } from '../encodings/name.js';
import type { BodyParts } from './command-codec.js';

/**
 * DescribeOptions reply (apache/iggy core/binary_protocol/src/responses/system/describe_options.rs;
 * foreign/node/src/wire/system/describe-options.command.ts):
 *
 *   [count:u32] x { [key:Name][kind:u8][default_len:u32][default bytes][description_len:u32][description] }
 *
 * `default` is encoded in the canonical kind, empty when the key has no server default. Chosen
 * strictness: the description must be valid UTF-8 (the reference decodes it lossily).
 */
export interface OptionDescriptor {
  readonly key: string;
  readonly kind: number;
  readonly defaultValue: Uint8Array;
  readonly description: string;
}

export const OPTION_DESCRIPTOR_MIN_SIZE = 2 + 1 + 4 + 4;

export const OPTION_DESCRIPTORS: BodyParts<OptionDescriptor[]> = {
  write: (w, entries) => {
    w.u32(entries.length);
    for (const e of entries) {
      writeName(w, e.key);
      w.u8(e.kind).u32(e.defaultValue.length).bytes(e.defaultValue);
      writeLongString(w, e.description);
    }
  },
  read: (r) => {
    const count = r.u32('descriptors_count');
    const out: OptionDescriptor[] = [];
    if (checkCount(r, count, OPTION_DESCRIPTOR_MIN_SIZE, 'descriptors')) {
      for (let i = 0; i < count && !r.failed; i++) {
        const key = readName(r, 'option_key');
        const kind = r.u8('option_kind');
        const defaultValue = r.bytesView(r.u32('default_length'), 'default_value');
        const description = readLongString(r, 'description');
        out.push({ key, kind, defaultValue, description });
      }
    }
    return out;
  },
};
