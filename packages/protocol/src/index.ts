export { xxh3_64, xxh3_64Range, xxh3Backend, useXxh3Backend, LONG_INPUT_MIN, type Xxh3Backend } from './hash/xxh3.js';
export { blake3, blake3Keyed, blake3DeriveKey } from './hash/blake3.js';
export { type Decoded, ok, fail } from './codec/decoded.js';
export { ByteReader } from './codec/byte-reader.js';
export { ByteWriter, utf8Encoder } from './codec/byte-writer.js';
